import * as v from 'valibot';
import { UInt } from './common.ts';

// What the backend keeps in etcd about the datastore itself (docs/operations.md#upgrades): its
// format version and the lock of a running upgrade. Both are read back from etcd, so both are
// parsed: a value some other program wrote there must not be taken for a version.

/**
 * `/monitor/cluster/datastore-version`: the number of migrations the datastore has had (a new
 * datastore is written at the latest), and the version of the program that wrote the key, which
 * is what an older backend tells its operator to run.
 */
export const DatastoreVersion = v.object({
  version: UInt,
  by: v.pipe(v.string(), v.minLength(1)),
});
export type DatastoreVersion = v.InferOutput<typeof DatastoreVersion>;

/** `/monitor/cluster/upgrade-lock`: who runs the upgrade, for the message of a second one. */
export const UpgradeLockHolder = v.object({
  host: v.string(),
  pid: UInt,
  /** Unix seconds. */
  since: UInt,
  by: v.string(),
});
export type UpgradeLockHolder = v.InferOutput<typeof UpgradeLockHolder>;
