// suite-timeout: 180
import { spawnSync } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { legacyApi } from '../harness/legacy.ts';
import { coreApi } from '../harness/api.ts';
import {
  AGENT_BIN,
  startAgent,
  startBackend,
  startLegacyClient,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// A legacy client definition run by monitor-agent (docs/compatibility.md#legacy-client): a bad one
// is one line naming the attribute and exit 2; a good one registers beside a current agent, both
// visible through both APIs, with its custom attributes, its redaction, its keepalive thresholds,
// the MONITOR_CLIENT_* overrides, and its signature shown nowhere.

let backend: Backend;
const agents: AgentProc[] = [];
const api = coreApi(() => backend);
const legacy = legacyApi(() => backend);

test.before(async () => {
  backend = await startBackend({ name: 'legacy-client-config' });
});

test.after(async () => {
  for (const a of agents) await a.kill().catch(() => {});
  await backend?.stop();
});

function runWith(definition: unknown, extra: string[] = []) {
  const dir = tempDir('legacy-bad-def');
  const file = join(dir, 'client.json');
  writeFileSync(file, typeof definition === 'string' ? definition : JSON.stringify(definition));
  return spawnSync(
    AGENT_BIN,
    [
      'start',
      '--legacy-config',
      file,
      '--backend-url',
      'ws://127.0.0.1:9',
      '--cache-dir',
      tempDir('c'),
      ...extra,
    ],
    { encoding: 'utf8', timeout: 60_000 },
  );
}

test('a bad definition: one line naming the attribute, exit 2, nothing started', () => {
  const cases: [unknown, RegExp][] = [
    [
      { client: { name: 'a b', subscriptions: [] } },
      /client\.name cannot contain spaces or special characters/,
    ],
    [
      { client: { name: 'x', subscriptions: [], keepalive: { thresholds: { warning: '40' } } } },
      /client\.keepalive\.thresholds\.warning must be an integer/,
    ],
    [
      { client: { name: 'x', subscriptions: [], cloudvm: { access_key_id: 'a' } } },
      /client\.cloudvm\.secret_access_key is required/,
    ],
    [
      { client: { name: 'x', subscriptions: [] }, checks: { disk: { standalone: true, command: 'true' } } },
      /checks\.disk\.interval or cron is required/,
    ],
    ['{"client":', /is not valid JSON/],
  ];
  for (const [def, message] of cases) {
    const r = runWith(def);
    assert.is(r.status, 2, `${JSON.stringify(def)}: exit ${r.status} ${r.stderr}`);
    const lines = r.stderr.trim().split('\n');
    assert.is(lines.length, 1, r.stderr);
    assert.match(lines[0]!, /^monitor-agent: --legacy-config: /);
    assert.match(lines[0]!, message);
  }
});

test('a legacy client and a current agent side by side: both visible through both APIs', async () => {
  const client = await startLegacyClient({
    name: 'i-424242',
    backendUrls: [backend.agentUrl],
    client: {
      address: '10.9.8.7',
      subscriptions: ['web'],
      environment: 'production',
      service: { password: 'hunter2' },
      signature: 'never-shown-sig',
      keepalive: { thresholds: { warning: 40, critical: 60 }, handlers: ['pager'] },
    },
  });
  agents.push(client);
  const current = await startAgent({ name: 'current-one', backendUrls: [backend.agentUrl] });
  agents.push(current);
  const list = await waitFor(
    async () => {
      const r = await legacy<any[]>('/clients');
      return ['i-424242', 'current-one'].every((n) => r.body.some((x: any) => x.name === n))
        ? r.body
        : undefined;
    },
    { timeoutMs: 20_000, what: 'both clients in the legacy API' },
  );
  const c = list.find((x: any) => x.name === 'i-424242');
  assert.is(c.address, '10.9.8.7');
  assert.is(c.environment, 'production', 'custom attributes travel with keepalives');
  assert.equal(c.service, { password: 'REDACTED' });
  assert.ok(c.subscriptions.includes('web') && c.subscriptions.includes('client:i-424242'));
  assert.is(c.keepalives, true);
  const entities = await api<any[]>('/namespaces/default/entities');
  const names = entities.body.map((e: any) => e.metadata.name);
  assert.ok(names.includes('i-424242') && names.includes('current-one'), names.join(','));
  const ka = await waitFor(
    async () => (await api(`/namespaces/default/events/i-424242/keepalive`)).body?.check,
    { timeoutMs: 10_000, what: 'the keepalive event' },
  );
  assert.is(ka.timeout, 40, 'the warning threshold judges its keepalives');
  assert.is(ka.ttl, 60, 'the critical threshold');
  assert.equal(ka.handlers, ['pager']);
  for (const body of [
    JSON.stringify(list),
    JSON.stringify(entities.body),
    JSON.stringify(await api('/namespaces/default/events')),
  ])
    assert.not.ok(
      body.includes('never-shown-sig') || body.includes('hunter2'),
      'signature and secrets shown nowhere',
    );
  for (const line of client.proc.lines()) assert.not.ok(line.includes('never-shown-sig'), `logged: ${line}`);
});

test('MONITOR_CLIENT_NAME, _ADDRESS and _SUBSCRIPTIONS override the definition', async () => {
  const client = await startLegacyClient({
    name: 'from-file',
    backendUrls: [backend.agentUrl],
    client: { subscriptions: ['file-sub'] },
    env: {
      MONITOR_CLIENT_NAME: 'from-env',
      MONITOR_CLIENT_ADDRESS: '192.0.2.77',
      MONITOR_CLIENT_SUBSCRIPTIONS: 'a,b',
    },
  });
  agents.push(client);
  const c = await waitFor(
    async () => {
      const r = await legacy('/clients/from-env');
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 20_000, what: 'the client under its name from the environment' },
  );
  assert.is(c.address, '192.0.2.77');
  assert.equal(c.subscriptions, ['a', 'b', 'client:from-env']);
  assert.is((await legacy('/clients/from-file')).status, 404);
});

test.run();
