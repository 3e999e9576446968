import type { EtcdAdapter } from '../../../actors/runtime/etcd.ts';
import type { Logger } from '../../../lib/log.ts';

// The shape of one datastore migration (docs/operations.md#upgrades). The list, in order, is
// ./migrations.ts; running them is ./upgrade.ts.

/** A stored value a migration cannot carry over: the operator mends it, then runs the upgrade again. */
export interface Refusal {
  message: string;
  /** Logged with the error line: what names the value (check, namespace, key). */
  fields: Record<string, string>;
  /** What the operator does about it. */
  remedy: string;
}

export interface MigrationContext {
  etcd: EtcdAdapter;
  log: Logger;
  /**
   * Replaces `key` if it is still at `modRevision` (and the upgrade still holds its lock): false
   * when the key changed meanwhile, an error when the lock is gone. The only way a migration writes.
   */
  replace(key: string, value: string, modRevision: number): Promise<boolean>;
}

export type MigrationResult = { refused: Refusal[] } | { summary: string };

export interface Migration {
  /** What it does, in a few words: the logs, the confirmation prompt and `/health` show it. */
  title: string;
  /**
   * Reads everything it would change first and refuses, having written nothing, when a value cannot
   * be carried over; otherwise writes and says what it did. The version is written only after it
   * returned, so a run cut short is run again whole: a migration must be idempotent.
   */
  run(ctx: MigrationContext): Promise<MigrationResult>;
}
