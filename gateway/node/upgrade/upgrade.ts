import { hostname } from 'node:os';
import * as v from 'valibot';
import { etcdKeys } from '../../../proto/names.ts';
import { UpgradeLockHolder } from '../../../proto/schemas/datastore.ts';
import { VERSION } from '../../../proto/version.ts';
import type { Logger } from '../../../lib/log.ts';
import type { EtcdAdapter, EtcdLock } from '../../../actors/runtime/etcd.ts';
import { newerDatastore, readDatastore, versionValue } from './datastore.ts';
import type { MigrationContext, Refusal } from './migration.ts';
import { LATEST, MIGRATIONS } from './migrations.ts';

// `monitor-backend upgrade` once confirmed: the pending migrations, in order, each followed by the
// version it reached (docs/operations.md#upgrades). One upgrade at a time: the run holds a lock key
// under a lease, and every write it makes (a migration's, the version's) is a transaction that
// also requires that lock key to be still the one it created, so a run that lost its lease (a
// process paused past the TTL) writes nothing more, and a second run cannot apply a migration twice.

const DEFAULTS = {
  /** The lock's lease: a run that dies lets go of the datastore this long after. */
  lockTtlSeconds: 10,
  /** Refusals named in the one line for stderr; the log has them all. */
  refusalsShown: 3,
} as const;

/** An upgrade that stopped; the message is one line for the operator. */
class UpgradeError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UpgradeError';
  }
}

type UpgradeOutcome = { upgraded: false; version: number } | { upgraded: true; from: number; to: number };

function holderText(value: string): string {
  let raw: unknown;
  try {
    raw = JSON.parse(value);
  } catch {
    return 'holder unknown';
  }
  const r = v.safeParse(UpgradeLockHolder, raw);
  if (!r.success) return 'holder unknown';
  const h = r.output;
  return `monitor-backend ${h.by}, pid ${h.pid} on ${h.host}, since ${new Date(h.since * 1000).toISOString()}`;
}

/** The line of a refused migration: the first refusals, each remedy once. */
function refusalLine(to: number, refused: Refusal[], stays: number): string {
  const shown = refused.slice(0, DEFAULTS.refusalsShown).map((r) => r.message);
  const more = refused.length - shown.length;
  const remedies = [...new Set(refused.map((r) => r.remedy))];
  return (
    `upgrade refused by migration ${to} (${MIGRATIONS[to - 1]!.title}): ${shown.join('; ')}` +
    `${more > 0 ? `; and ${more} more (see the log)` : ''}. To do: ${remedies.join('; ')}. ` +
    `Nothing of this migration was written; the datastore stays at version ${stays}`
  );
}

async function takeLock(etcd: EtcdAdapter): Promise<EtcdLock> {
  const holder: UpgradeLockHolder = {
    host: hostname(),
    pid: process.pid,
    since: Math.floor(Date.now() / 1000),
    by: VERSION,
  };
  const got = await etcd.lock(etcdKeys.upgradeLock, JSON.stringify(holder), DEFAULTS.lockTtlSeconds);
  if ('heldBy' in got)
    throw new UpgradeError(
      `another upgrade is running (${holderText(got.heldBy)}): nothing was changed; ` +
        'run this one again once it has ended',
    );
  return got.held;
}

/** Applies the pending migrations; an UpgradeError says why it stopped (a refusal, another run, a newer datastore). */
export async function upgradeDatastore(etcd: EtcdAdapter, log: Logger): Promise<UpgradeOutcome> {
  const lock = await takeLock(etcd);
  try {
    let state = await readDatastore(etcd);
    const newer = newerDatastore(state);
    if (newer) throw new UpgradeError(newer);
    if (state.version >= LATEST) return { upgraded: false, version: state.version };
    const from = state.version;
    const lockGuard = { key: etcdKeys.upgradeLock, createRevision: lock.createRevision };
    const lost = async () =>
      (await etcd.get(etcdKeys.upgradeLock))?.createRevision !== lock.createRevision &&
      'the upgrade lost its lock (its lease ran out): run it again';
    const ctx: MigrationContext = {
      etcd,
      log,
      replace: async (key, value, modRevision) => {
        if (await etcd.putGuarded(key, value, [{ key, modRevision }, lockGuard])) return true;
        const why = await lost();
        if (why) throw new UpgradeError(why);
        return false;
      },
    };
    for (let version = from; version < LATEST; version++) {
      const migration = MIGRATIONS[version]!;
      const to = version + 1;
      log.info('applying migration', { migration: to, title: migration.title });
      const result = await migration.run({ ...ctx, log: log.child({ migration: to }) });
      if ('refused' in result) {
        for (const r of result.refused)
          log.error(`upgrade refused: ${r.message}`, { migration: to, ...r.fields, remedy: r.remedy });
        throw new UpgradeError(refusalLine(to, result.refused, version));
      }
      const written = await etcd.putGuarded(etcdKeys.datastoreVersion, versionValue(to), [
        { key: etcdKeys.datastoreVersion, modRevision: state.modRevision },
        lockGuard,
      ]);
      if (!written)
        throw new UpgradeError(
          (await lost()) ||
            'the datastore version was written by someone else during the upgrade: run it again',
        );
      state = await readDatastore(etcd);
      log.info('migration applied', { migration: to, title: migration.title, result: result.summary });
    }
    return { upgraded: true, from, to: LATEST };
  } finally {
    await lock.release();
  }
}
