import { createHash } from 'node:crypto';
import type { ConfigStore } from '../../actors/config/store.ts';
import { configKeys } from '../../proto/names.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest('base64');

/**
 * Finds the user of an API key (`Authorization: Key <key>`) by the SHA-256 digest of the key, never
 * by the key itself (docs/compatibility.md#authentication). How long the lookup takes depends only on
 * the digest, and a caller cannot choose a key whose digest comes near a stored one without knowing
 * that key, so the time says nothing about the stored keys; one lookup costs the same with 10 keys
 * or 100,000. The index is rebuilt when the configuration changes.
 */
export class ApiKeyIndex {
  private byDigest = new Map<string, string>();
  private generation = -1;

  constructor(private readonly config: ConfigStore) {}

  username(key: string): string | undefined {
    if (this.generation !== this.config.generation) {
      this.generation = this.config.generation;
      const prefix = configKeys.prefix('apikeys');
      this.byDigest = new Map(
        this.config
          .entries<{ username?: string }>(prefix)
          .filter((e) => e.value.username)
          .map((e) => [sha256(e.key.slice(prefix.length)), e.value.username!]),
      );
    }
    return this.byDigest.get(sha256(key));
  }
}
