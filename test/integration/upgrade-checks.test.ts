// suite-timeout: 90
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startEtcd, type EtcdServer } from '../harness/index.ts';
import { createLogger } from '../../lib/log.ts';
import { configKeys, etcdKeys } from '../../proto/names.ts';
import { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import { checksRevalidated } from '../../gateway/node/upgrade/checks.ts';
import type { MigrationContext, MigrationResult, Refusal } from '../../gateway/node/upgrade/migration.ts';

// Migration 1 of the datastore (gateway/node/upgrade/checks.ts) against a real etcd, run directly
// rather than through `monitor-backend upgrade` (test/e2e/upgrade.test.ts): stored checks are
// validated with the API's schema and stored in its form; a check in a namespace that does not
// exist, or one the schema refuses, refuses the migration before anything is written.

let server: EtcdServer;
let etcd: EtcdAdapter;
const log = createLogger('error');

const checkKey = (ns: string, name: string) => configKeys.namespaced('checks', ns, name);

/** A check as the API stores it today (the schema's field order, metadata from the URL). */
const current = (ns: string, name: string, extra: Record<string, unknown> = {}) => ({
  metadata: { name, namespace: ns, created_by: 'admin' },
  command: 'true',
  interval: 10,
  ...extra,
});

async function put(key: string, value: unknown): Promise<void> {
  await etcd.put(key, typeof value === 'string' ? value : JSON.stringify(value));
}

/** Every key under /monitor/ with its value and mod revision. */
async function dump(): Promise<Array<[string, string, number]>> {
  const { records } = await etcd.list(etcdKeys.root);
  return records.map((r) => [r.key, r.value, r.modRevision]);
}

/** A context whose writes are etcd's guarded put, as the upgrade's are (less its lock). */
function context(onReplace?: (key: string) => Promise<void>): MigrationContext {
  return {
    etcd,
    log,
    replace: async (key, value, modRevision) => {
      await onReplace?.(key);
      return (await etcd.putIfModRevision(key, value, modRevision)) !== undefined;
    },
  };
}

function refusals(result: MigrationResult): Refusal[] {
  assert.ok('refused' in result, `expected a refusal, got ${JSON.stringify(result)}`);
  return result.refused;
}

test.before(async () => {
  server = await startEtcd();
  etcd = new EtcdAdapter({ endpoints: [server.url] });
});

test.before.each(async () => {
  await etcd.client.delete().prefix(etcdKeys.root);
  await put(etcdKeys.namespace('default'), { name: 'default' });
});

test.after(async () => {
  await etcd?.close();
  await server?.stop();
});

test('checks in the current form are left as they are; an older form is stored in the current one', async () => {
  await put(checkKey('default', 'ok'), current('default', 'ok'));
  // As an earlier version could have left it: no namespace in metadata, a field no longer known.
  await put(checkKey('default', 'older'), {
    metadata: { name: 'older', created_by: 'admin' },
    command: 'true',
    interval: 10,
    dropped_field: 1,
  });
  const before = await etcd.get(checkKey('default', 'ok'));
  const result = await checksRevalidated.run(context());
  assert.equal(result, { summary: '2 checks validated, 1 stored again' });
  assert.is((await etcd.get(checkKey('default', 'ok')))?.modRevision, before?.modRevision, 'not rewritten');
  assert.equal(
    JSON.parse((await etcd.get(checkKey('default', 'older')))!.value),
    current('default', 'older'),
  );
});

test('a second run finds nothing to store', async () => {
  await put(checkKey('default', 'older'), { metadata: { name: 'older' }, command: 'true', interval: 10 });
  assert.equal(await checksRevalidated.run(context()), { summary: '1 check validated, 1 stored again' });
  const after = await dump();
  assert.equal(await checksRevalidated.run(context()), { summary: '1 check validated, 0 stored again' });
  assert.equal(await dump(), after);
});

test('a check whose namespace does not exist refuses the migration, naming both, and nothing is written', async () => {
  await put(checkKey('default', 'older'), { metadata: { name: 'older' }, command: 'true', interval: 10 });
  await put(checkKey('gone', 'orphan'), current('gone', 'orphan'));
  const before = await dump();
  const refused = refusals(await checksRevalidated.run(context()));
  assert.is(refused.length, 1);
  assert.equal(refused[0]!.fields, { check: 'orphan', namespace: 'gone' });
  assert.is(refused[0]!.message, 'check "orphan" references namespace "gone", which does not exist');
  assert.match(refused[0]!.remedy, /recreate the namespace, delete the check, then delete the namespace/);
  assert.equal(await dump(), before, 'the older check was not stored either');
});

test('checks the current schema refuses (JavaScript that does not compile, a bad cron, not JSON) refuse the migration', async () => {
  await put(
    checkKey('default', 'bad-js'),
    current('default', 'bad-js', { proxy_requests: { entity_attributes: ['entity.name ==='] } }),
  );
  await put(checkKey('default', 'bad-cron'), {
    ...current('default', 'bad-cron', { cron: 'every tuesday' }),
    interval: undefined,
  });
  await put(checkKey('default', 'garbage'), '{not json');
  await put(checkKey('default', 'older'), { metadata: { name: 'older' }, command: 'true', interval: 10 });
  const before = await dump();
  const refused = refusals(await checksRevalidated.run(context()));
  const byCheck = new Map(refused.map((r) => [r.fields.check, r.message]));
  assert.equal([...byCheck.keys()].sort(), ['bad-cron', 'bad-js', 'garbage']);
  assert.match(byCheck.get('bad-js')!, /proxy_requests\.entity_attributes\[0\]: .*does not compile/);
  assert.match(byCheck.get('bad-cron')!, /cron "every tuesday"/);
  assert.match(byCheck.get('garbage')!, /is not JSON/);
  assert.equal(await dump(), before);
});

test('a check written through the API while the migration runs keeps that write', async () => {
  await put(checkKey('default', 'older'), { metadata: { name: 'older' }, command: 'true', interval: 10 });
  // What the API writes between the migration's read and its write.
  const written = current('default', 'older', { command: 'echo newer', interval: 30 });
  let raced = false;
  const result = await checksRevalidated.run(
    context(async (key) => {
      if (raced) return;
      raced = true;
      await put(key, written);
    }),
  );
  assert.ok(raced);
  assert.equal(result, { summary: '1 check validated, 0 stored again' });
  assert.equal(JSON.parse((await etcd.get(checkKey('default', 'older')))!.value), written);
});

test.run();
