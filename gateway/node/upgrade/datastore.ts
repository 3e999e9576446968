import * as v from 'valibot';
import { etcdKeys } from '../../../proto/names.ts';
import { describeIssues } from '../../../proto/schemas/common.ts';
import { DatastoreVersion } from '../../../proto/schemas/datastore.ts';
import { VERSION } from '../../../proto/version.ts';
import type { Logger } from '../../../lib/log.ts';
import type { EtcdAdapter, EtcdRecord } from '../../../actors/runtime/etcd.ts';
import { LATEST, MIGRATIONS } from './migrations.ts';

// The datastore's version as a backend sees it (docs/operations.md#upgrades): written by the first
// start of a new cluster, checked by every start, reported by /health.

interface DatastoreState {
  /** 0 without the key: written before versions existed. */
  version: number;
  /** The program version that wrote the key. */
  by?: string;
  /** The key's mod revision, 0 without it: what a write of the next version is guarded by. */
  modRevision: number;
}

/** The state a version key says; an error when the key holds something else. */
export function datastoreState(record: EtcdRecord | undefined): DatastoreState {
  if (!record) return { version: 0, modRevision: 0 };
  let raw: unknown;
  try {
    raw = JSON.parse(record.value);
  } catch {
    raw = record.value;
  }
  const r = v.safeParse(DatastoreVersion, raw);
  if (!r.success)
    throw new Error(
      `${etcdKeys.datastoreVersion} does not hold a datastore version (${describeIssues(r.issues)})`,
    );
  return { version: r.output.version, by: r.output.by, modRevision: record.modRevision };
}

export const readDatastore = async (etcd: EtcdAdapter): Promise<DatastoreState> =>
  datastoreState(await etcd.get(etcdKeys.datastoreVersion));

/** The value of the version key written by this program. */
export const versionValue = (version: number): string => JSON.stringify({ version, by: VERSION });

/** Titles of the migrations a datastore at `version` has not had. */
export const pendingMigrations = (version: number): string[] => MIGRATIONS.slice(version).map((m) => m.title);

/** Why this program refuses a datastore newer than it knows, naming the version to run; else undefined. */
export function newerDatastore(state: DatastoreState): string | undefined {
  if (state.version <= LATEST) return undefined;
  return (
    `the datastore is at version ${state.version} (written by monitor-backend ${state.by}) and this ` +
    `monitor-backend ${VERSION} knows versions up to ${LATEST}: run monitor-backend ${state.by} or later`
  );
}

/** Writes the latest version into a datastore with nothing of ours in it; then reads the version. */
export async function stampNewDatastore(etcd: EtcdAdapter, log: Logger): Promise<DatastoreState> {
  if (await etcd.createIfPrefixEmpty(etcdKeys.root, etcdKeys.datastoreVersion, versionValue(LATEST)))
    log.info('new datastore, written at the latest version', { datastore_version: LATEST });
  return readDatastore(etcd);
}

/**
 * What a starting backend (and `init`) does about the version. A datastore with nothing of ours in
 * it is new and is written at the latest version: it needs no upgrade. A newer one is refused (an
 * error naming the version to run). An older one is served, with a warning: the procedure upgrades
 * every backend first and runs `monitor-backend upgrade` once after, and the cluster serves between.
 */
export async function checkDatastore(etcd: EtcdAdapter, log: Logger): Promise<DatastoreState> {
  const state = await stampNewDatastore(etcd, log);
  const newer = newerDatastore(state);
  if (newer) throw new Error(newer);
  if (state.version < LATEST)
    log.warn(
      `the datastore is at version ${state.version} and this backend expects ${LATEST}: once every ` +
        `backend runs ${VERSION}, run "monitor-backend upgrade" once`,
      { datastore_version: state.version, latest: LATEST, pending: pendingMigrations(state.version) },
    );
  return state;
}
