// suite-timeout: 300
import fs from 'node:fs';
import path from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  getJson,
  sleep,
  startAgent,
  startBackend,
  startEtcd,
  startNats,
  waitFor,
  within,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// The agent's outbox with a real backend and real agent processes: events accepted while the
// backend is dead (SIGKILL) are all stored once it is back; events accepted just before the agent
// itself is SIGKILLed are sent after its restart; none is lost and none is stored twice. A second
// agent on the same cache-dir refuses to start, and a full outbox refuses new events with a 500.

let etcdSvc: Awaited<ReturnType<typeof startEtcd>>;
let natsSvc: Awaited<ReturnType<typeof startNats>>;
let backend: Backend;
const agents: AgentProc[] = [];
const FAST = [
  '--retry-min',
  '0.1',
  '--retry-max',
  '0.5',
  '--events-rate-limit',
  '500',
  '--events-burst-limit',
  '100',
];

const launchBackend = async (prev?: Backend) => {
  backend = await startBackend(
    prev ? prev.options : { name: 'outbox-b1', etcdUrl: etcdSvc.url, natsUrl: natsSvc.url },
  );
  await waitFor(
    async () => {
      const r = await backend.health().catch(() => undefined);
      return r?.status === 200 ? r : undefined;
    },
    { timeoutMs: 30000, what: 'backend healthy' },
  );
};

const launchAgent = async (opts: Parameters<typeof startAgent>[0]) => {
  const a = await startAgent(opts);
  agents.push(a);
  return a;
};

const post = (agent: AgentProc, body: unknown) =>
  getJson(`${agent.apiUrl}/events`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify(body),
  });

const healthz = async (agent: AgentProc) =>
  (await getJson(`${agent.apiUrl}/healthz`).catch(() => undefined))?.status;

const waitHealth = (agent: AgentProc, status: number) =>
  waitFor(async () => ((await healthz(agent)) === status ? true : undefined), {
    timeoutMs: 30000,
    intervalMs: 100,
    what: `${agent.name} /healthz ${status}`,
  });

/** Posts events for checks `<prefix>-0..n-1`; every one must be accepted (202: durable in the outbox). */
async function postAll(agent: AgentProc, prefix: string, n: number): Promise<string[]> {
  const names = Array.from({ length: n }, (_, i) => `${prefix}-${i}`);
  const answers = await Promise.all(
    names.map((name, i) => post(agent, { check: { metadata: { name }, status: i % 3, output: `run ${i}` } })),
  );
  answers.forEach((r, i) => assert.is(r.status, 202, `${names[i]}: ${r.status} ${JSON.stringify(r.body)}`));
  return names;
}

/** Waits until every check's event is stored, then asserts each was stored exactly once. */
async function expectStoredOnce(entity: string, names: string[], timeoutMs = 60000) {
  const found = await waitFor(
    async () => {
      const out = [];
      for (const name of names) {
        const r = await backend
          .get(`/api/core/v2/namespaces/default/events/${entity}/${name}`)
          .catch(() => undefined);
        if (r?.status !== 200) return undefined;
        out.push(r.body);
      }
      return out;
    },
    { timeoutMs, intervalMs: 250, what: `${names.length} events of ${entity} stored` },
  );
  for (const e of found) {
    // A second store of the same event would add a history entry and an occurrence.
    assert.is(
      e.check.history.length,
      1,
      `${e.check.metadata.name} stored once: ${JSON.stringify(e.check.history)}`,
    );
    assert.is(e.check.occurrences, 1, `${e.check.metadata.name} occurrences`);
  }
}

async function expectNoneStored(entity: string, names: string[]) {
  for (const name of names) {
    const r = await backend.get(`/api/core/v2/namespaces/default/events/${entity}/${name}`);
    assert.is(r.status, 404, `${name} not stored yet`);
  }
}

test.before(async () => {
  [etcdSvc, natsSvc] = await Promise.all([startEtcd(), startNats()]);
  await launchBackend();
});

test.after(async () => {
  for (const a of agents) await a.kill().catch(() => {});
  await backend?.kill().catch(() => {});
  await Promise.all([etcdSvc?.stop(), natsSvc?.stop()]);
});

test('events accepted while the backend is dead are all stored once it is back, each once', async () => {
  const agent = await launchAgent({ name: 'outbox-a1', backendUrls: backend.agentUrl, extraArgs: FAST });
  await waitHealth(agent, 200);
  await expectStoredOnce('outbox-a1', await postAll(agent, 'live', 10));

  await backend.kill('SIGKILL');
  await waitHealth(agent, 503);
  const names = await postAll(agent, 'offline', 40);
  await launchBackend(backend);
  await expectStoredOnce('outbox-a1', names);
});

test('events in flight when the backend dies are resent after it returns, and stored once', async () => {
  const agent = await launchAgent({ name: 'outbox-a6', backendUrls: backend.agentUrl, extraArgs: FAST });
  await waitHealth(agent, 200);
  // Accepted (durable) at once; some are acknowledged, some in flight, some not yet sent at the kill.
  const names = await postAll(agent, 'inflight', 60);
  await backend.kill('SIGKILL');
  await launchBackend(backend);
  await expectStoredOnce('outbox-a6', names);
});

test('events-rate-limit and events-burst-limit pace the relay to the backend', async () => {
  const agent = await launchAgent({
    name: 'outbox-a7',
    backendUrls: backend.agentUrl,
    extraArgs: [
      '--retry-min',
      '0.1',
      '--retry-max',
      '0.5',
      '--events-rate-limit',
      '4',
      '--events-burst-limit',
      '1',
    ],
  });
  await waitHealth(agent, 200);
  const started = Date.now();
  const names = await postAll(agent, 'paced', 9);
  await expectStoredOnce('outbox-a7', names);
  // A lower bound only: 1 at once, then 8 more at 4 per second cannot take less than 2 s.
  assert.ok(Date.now() - started >= 1900, `9 events relayed in ${Date.now() - started} ms`);
});

test('events survive SIGKILL of the agent and are sent after its restart', async () => {
  const first = await launchAgent({ name: 'outbox-a2', backendUrls: backend.agentUrl, extraArgs: FAST });
  await waitHealth(first, 200);
  await backend.kill('SIGKILL');
  await waitHealth(first, 503);
  const names = await postAll(first, 'durable', 30);
  await first.kill('SIGKILL');
  await launchBackend(backend);
  await sleep(1000);
  await expectNoneStored('outbox-a2', names);

  const second = await launchAgent(first.options);
  await expectStoredOnce('outbox-a2', names);
  const queue = fs.readdirSync(path.join(first.cacheDir, 'outbox'));
  assert.ok(queue.filter((n) => n.startsWith('seg-')).length >= 1, 'segments stay in cache-dir');
  await second.stop();
});

test('a second agent on the same cache-dir exits 2 with one clear line; a stale lock is taken over', async () => {
  const owner = await launchAgent({ name: 'outbox-a3', backendUrls: backend.agentUrl, extraArgs: FAST });
  await waitHealth(owner, 200);
  const pid = Number(fs.readFileSync(path.join(owner.cacheDir, 'monitor-agent.lock'), 'utf8'));
  const rival = await launchAgent({
    name: 'outbox-a3b',
    backendUrls: backend.agentUrl,
    cacheDir: owner.cacheDir,
  });
  const exit = await within(rival.proc.exited, 20000);
  assert.ok(exit, 'the second agent exits');
  assert.is(exit!.code, 2);
  const stderr = rival.proc.lines('stderr').filter((l) => !l.startsWith('{'));
  assert.equal(stderr, [
    `monitor-agent: another monitor-agent (pid ${pid}) uses ${path.resolve(owner.cacheDir)}`,
  ]);

  // SIGKILL leaves the lock behind; the restarted agent takes it over and keeps working.
  await owner.kill('SIGKILL');
  assert.ok(fs.existsSync(path.join(owner.cacheDir, 'monitor-agent.lock')));
  const again = await launchAgent(owner.options);
  await waitHealth(again, 200);
  await expectStoredOnce('outbox-a3', await postAll(again, 'after-takeover', 3));
});

test('a cache-dir that cannot be created is one clear error line and exit code 2', async () => {
  const file = path.join(backend.stateDir, 'not-a-dir');
  fs.writeFileSync(file, '');
  const agent = await launchAgent({
    name: 'outbox-a4',
    backendUrls: backend.agentUrl,
    cacheDir: path.join(file, 'cache'),
  });
  const exit = await within(agent.proc.exited, 20000);
  assert.is(exit?.code, 2);
  const stderr = agent.proc.lines('stderr').filter((l) => !l.startsWith('{'));
  assert.is(stderr.length, 1, stderr.join('\n'));
  assert.match(
    stderr[0]!,
    /^monitor-agent: cannot create cache-dir .*not-a-dir\/cache: ENOTDIR: not a directory$/,
  );
});

test('a full outbox refuses new events with 500 and keeps the queued ones', async () => {
  const agent = await launchAgent({
    name: 'outbox-a5',
    backendUrls: backend.agentUrl,
    extraArgs: [...FAST, '--outbox-max-bytes', '65536'],
  });
  await waitHealth(agent, 200);
  await backend.kill('SIGKILL');
  await waitHealth(agent, 503);
  const accepted: string[] = [];
  let refusal: { status: number; body: any } | undefined;
  for (let i = 0; i < 100 && !refusal; i++) {
    const name = `full-${i}`;
    const r = await post(agent, { check: { metadata: { name }, status: 0, output: 'x'.repeat(4000) } });
    if (r.status === 202) accepted.push(name);
    else refusal = r;
  }
  assert.ok(refusal, 'a refusal came');
  assert.is(refusal!.status, 500);
  assert.match(refusal!.body.message, /full/);
  assert.ok(accepted.length >= 5, `${accepted.length} accepted before the queue filled`);
  assert.ok(
    agent.proc.jsonLines().some((l) => l.level === 'warn' && /queue full/.test(l.msg)),
    'a warning is logged',
  );
  await launchBackend(backend);
  await expectStoredOnce('outbox-a5', accepted);
});

test.run();
