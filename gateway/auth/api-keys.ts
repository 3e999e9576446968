import { createHash, timingSafeEqual } from 'node:crypto';
import type { ConfigStore } from '../../actors/config/store.ts';
import { configKeys } from '../../proto/names.ts';

const sha256 = (s: string) => createHash('sha256').update(s).digest();

/**
 * Finds the user of an API key (`Authorization: Key <key>`) without a lookup whose timing depends on
 * the stored keys' bytes: the key's digest is compared with every stored key's digest in constant
 * time, all of them each time (docs/compatibility.md#authentication). The digests are rebuilt when
 * the configuration changes.
 */
export class ApiKeyIndex {
  private keys: Array<{ digest: Buffer; username: string }> = [];
  private generation = -1;

  constructor(private readonly config: ConfigStore) {}

  username(key: string): string | undefined {
    if (this.generation !== this.config.generation) {
      this.generation = this.config.generation;
      this.keys = this.config
        .entries<{ username?: string }>(configKeys.prefix('apikeys'))
        .filter((e) => e.value.username)
        .map((e) => ({
          digest: sha256(e.key.slice(configKeys.prefix('apikeys').length)),
          username: e.value.username!,
        }));
    }
    const digest = sha256(key);
    let found: string | undefined;
    // No early exit: the time taken does not say how far down the list the key was.
    for (const k of this.keys) if (timingSafeEqual(k.digest, digest)) found = k.username;
    return found;
  }
}
