import type { KvStore } from '../runtime/kv-store.ts';
import type { StashState } from './messages.ts';
import { expired, stashOfRecord } from './reads.ts';

/** One stash as listed: its path and what its actor keeps. */
export interface ListedStash {
  path: string;
  stash: StashState;
}

/**
 * The list side of the stashes on every node: the bucket followed by a watch, kept in memory, so a
 * list (which dashboards poll) costs no trip to NATS. Single reads go to KV (reads.ts), so a client
 * reads a stash it just wrote; lists trail writes by the watch's delivery delay (milliseconds).
 */
export class StashReadModel {
  /** By KV key (a delete marker names only the key). */
  private readonly byKey = new Map<string, ListedStash>();
  private watch: { stop(): void } | undefined;

  constructor(private readonly store: KvStore) {}

  /** Resolves once the first full pass of the bucket is in. */
  start(): Promise<void> {
    return new Promise((resolve) => {
      let seen: Set<string> | undefined;
      this.watch = this.store.follow({
        onStart: () => {
          seen = new Set();
        },
        onPut: (key, value) => {
          seen?.add(key);
          // Expired ones are kept until their actor ends them: list() leaves them out by the clock.
          const listed = stashOfRecord(value);
          if (listed) this.byKey.set(key, listed);
          else this.byKey.delete(key);
        },
        onDelete: (key) => {
          this.byKey.delete(key);
        },
        onReady: () => {
          // What a new pass did not deliver was removed while the watch was away.
          if (seen) for (const k of this.byKey.keys()) if (!seen.has(k)) this.byKey.delete(k);
          seen = undefined;
          resolve();
        },
      });
    });
  }

  /** Every stash not past its deadline at `now`, ordered by path. */
  list(now = Date.now()): ListedStash[] {
    return [...this.byKey.values()]
      .filter((s) => !expired(s.stash, now))
      .sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  stop(): void {
    this.watch?.stop();
  }
}
