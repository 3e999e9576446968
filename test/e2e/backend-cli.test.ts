// suite-timeout: 240
import { spawnSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import { createServer, type Server } from 'node:net';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  BACKEND_BIN,
  freePort,
  getJson,
  loud,
  Proc,
  sleep,
  startAgent,
  startBackend,
  tempDir,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';

// The backend's command line: version, configuration sources and their errors, ports in use, and
// the embedded etcd and NATS children, which never outlive the backend.

const run = (args: string[], env: Record<string, string> = {}) =>
  spawnSync(BACKEND_BIN, args, { encoding: 'utf8', env: { ...process.env, ...env }, timeout: 60_000 });

const servers: Server[] = [];
const backends: Backend[] = [];
const agents: AgentProc[] = [];
async function occupy(): Promise<number> {
  const port = await freePort();
  const s = createServer();
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
  servers.push(s);
  return port;
}
const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return !readFileSync(`/proc/${pid}/stat`, 'utf8').split(') ')[1]?.startsWith('Z');
  } catch {
    return false;
  }
};

test.after(async () => {
  for (const a of agents) await a.kill().catch(() => {});
  for (const b of backends) await b.kill().catch(() => {});
  for (const s of servers) s.close();
});

test('version prints the version', () => {
  const r = run(['version']);
  assert.is(r.status, 0);
  assert.match(r.stdout, /^monitor-backend version \d+\.\d+\.\d+\n$/);
});

test('a bad flag value or an unknown flag: one line naming it, exit 2', () => {
  const bad = run(['start', '--api-port', 'abc']);
  assert.is(bad.status, 2);
  assert.is(bad.stderr.trim().split('\n').length, 1);
  assert.match(bad.stderr, /--api-port/);
  const range = run(['start', '--agent-port', '70000']);
  assert.is(range.status, 2);
  assert.match(range.stderr, /--agent-port/);
  const unknown = run(['start', '--no-such-flag', '1']);
  assert.is(unknown.status, 2);
  assert.match(unknown.stderr, /unknown flag: --no-such-flag/);
  const level = run(['start', '--log-level', 'loud']);
  assert.is(level.status, 2);
  assert.match(level.stderr, /--log-level/);
});

test('a missing explicit config file is an error; bad YAML too', () => {
  const missing = run(['start', '--config-file', '/nonexistent/backend.yml']);
  assert.is(missing.status, 2);
  assert.match(missing.stderr, /does not exist/);
  const dir = tempDir('cfg');
  const file = join(dir, 'backend.yml');
  writeFileSync(file, 'api-port: [1, 2\n');
  const bad = run(['start', '-c', file]);
  assert.is(bad.status, 2);
  assert.match(bad.stderr, /not valid YAML/);
  writeFileSync(file, 'bogus-setting: 1\n');
  assert.match(run(['start', '-c', file]).stderr, /unknown setting "bogus-setting"/);
});

test('ports in use: one line naming the flag to change', async () => {
  const dir = tempDir('ports');
  const cases: Array<[string[], string]> = [
    [['--api-port', String(await occupy())], '--api-port'],
    [['--agent-port', String(await occupy())], '--agent-port'],
    [['--etcd-listen-client-urls', `http://127.0.0.1:${await occupy()}`], '--etcd-listen-client-urls'],
    [['--nats-listen', `127.0.0.1:${await occupy()}`], '--nats-listen'],
    [['--legacy-api-port', String(await occupy())], '--legacy-api-port'],
  ];
  for (const [args, flag] of cases) {
    const base = [
      'start',
      '--state-dir',
      join(dir, flag),
      '--api-host',
      '127.0.0.1',
      '--agent-host',
      '127.0.0.1',
      '--api-port',
      String(await freePort()),
      '--agent-port',
      String(await freePort()),
      '--legacy-api-host',
      '127.0.0.1',
      '--legacy-api-port',
      String(await freePort()),
      '--etcd-listen-client-urls',
      `http://127.0.0.1:${await freePort()}`,
      '--etcd-listen-peer-urls',
      `http://127.0.0.1:${await freePort()}`,
      '--nats-listen',
      `127.0.0.1:${await freePort()}`,
    ];
    const r = run([...base, ...args]);
    assert.is(r.status, 1, `${flag}: ${r.stderr}`);
    const lines = r.stderr
      .trim()
      .split('\n')
      .filter((l) => !l.startsWith('{'));
    assert.is(lines.length, 1, r.stderr);
    assert.match(lines[0]!, new RegExp(`already in use; change ${flag}$`));
  }
});

test(
  'flags override the environment, which overrides the config file',
  loud(async () => {
    const dir = tempDir('precedence');
    const [fileApi, envApi, fileAgent] = [await freePort(), await freePort(), await freePort()];
    const file = join(dir, 'backend.yml');
    writeFileSync(
      file,
      [
        `api-port: ${fileApi}`,
        `agent-port: ${fileAgent}`,
        'api-host: 127.0.0.1',
        'agent-host: 127.0.0.1',
        'legacy-api-port: 0',
        'name: from-file',
        'log-level: warn',
        `state-dir: ${join(dir, 'state')}`,
        `etcd-listen-client-urls: [http://127.0.0.1:${await freePort()}]`,
        `etcd-listen-peer-urls: http://127.0.0.1:${await freePort()}`,
        `nats-listen: 127.0.0.1:${await freePort()}`,
        '',
      ].join('\n'),
    );
    const proc = Proc.start('precedence', BACKEND_BIN, ['start', '-c', file, '--name', 'from-flag'], {
      env: { MONITOR_BACKEND_API_PORT: String(envApi), MONITOR_BACKEND_NAME: 'from-env' },
    });
    try {
      const h = await waitFor(
        async () => {
          const r = await getJson(`http://127.0.0.1:${envApi}/health`, {
            signal: AbortSignal.timeout(1000),
          }).catch(() => undefined);
          return r?.status === 200 ? r : undefined;
        },
        { timeoutMs: 30000, what: 'the backend on the port from the environment' },
      );
      assert.is(h.body.node, 'from-flag', 'the flag beats the environment and the file');
      const agentPort = await fetch(`http://127.0.0.1:${fileAgent}/`);
      assert.is(agentPort.status, 426, 'the agent port came from the file');
      const filePort = await fetch(`http://127.0.0.1:${fileApi}/health`).then(
        () => 'open',
        () => 'closed',
      );
      assert.is(filePort, 'closed', 'the environment beat the file');
    } finally {
      await proc.stop(10000);
    }
  }),
);

test(
  'a killed embedded nats-server or etcd is restarted and the backend keeps serving',
  loud(async () => {
    const b = await startBackend({ name: 'embedded-restart' });
    backends.push(b);
    const agent = await startAgent({
      name: 'steady',
      backendUrls: [b.agentUrl],
      keepaliveInterval: 1,
      warning: 30,
    });
    agents.push(agent);
    const seen = async () =>
      (await b.get('/api/core/v2/namespaces/default/events/steady/keepalive')).body?.check?.executed as
        number | undefined;
    await waitFor(seen, { timeoutMs: 20000, what: 'the first keepalive' });
    for (const child of ['nats-server', 'etcd']) {
      const pid = Number(readFileSync(join(b.stateDir, `${child}.pid`), 'utf8'));
      process.kill(pid, 'SIGKILL');
      await waitFor(
        async () => {
          const p = Number(readFileSync(join(b.stateDir, `${child}.pid`), 'utf8'));
          return p !== pid && alive(p) ? p : undefined;
        },
        { timeoutMs: 15000, what: `${child} to be restarted` },
      );
      // The child is back before the backend's NATS connection is: a read in between fails, and
      // comparing with its undefined would never succeed.
      const before = await waitFor(seen, { timeoutMs: 20000, what: `a read after ${child} restarted` });
      await waitFor(async () => ((await seen()) ?? 0) > before + 1 || undefined, {
        timeoutMs: 20000,
        what: `keepalives to flow after ${child} restarted`,
      });
    }
    assert.is((await b.health()).status, 200);
    await agent.kill();
    await b.stop();
  }),
);

test(
  'embedded etcd and NATS die with a SIGKILLed backend; the next start reuses the data',
  loud(async () => {
    const b = await startBackend({ name: 'embedded-kill' });
    backends.push(b);
    const agent = await startAgent({ name: 'survivor', backendUrls: [b.agentUrl] });
    agents.push(agent);
    await waitFor(
      async () =>
        (await b.get('/api/core/v2/namespaces/default/entities/survivor')).status === 200 || undefined,
      { timeoutMs: 20000, what: 'the entity' },
    );
    await agent.kill();
    const etcdPid = Number(readFileSync(join(b.stateDir, 'etcd.pid'), 'utf8'));
    const natsPid = Number(readFileSync(join(b.stateDir, 'nats-server.pid'), 'utf8'));
    assert.ok(alive(etcdPid) && alive(natsPid));
    // Only the backend process: its children live in their own process groups.
    process.kill(b.proc.pid, 'SIGKILL');
    await b.proc.exited;
    await waitFor(async () => (!alive(etcdPid) && !alive(natsPid)) || undefined, {
      timeoutMs: 10000,
      what: 'etcd and nats-server to exit',
    });

    const again = await startBackend(b.options);
    backends.push(again);
    const entity = await again.get('/api/core/v2/namespaces/default/entities/survivor');
    assert.is(entity.status, 200, 'state survived the restart');
    const children = ['etcd.pid', 'nats-server.pid'].map((f) =>
      Number(readFileSync(join(again.stateDir, f), 'utf8')),
    );
    await again.stop();
    await sleep(200);
    for (const pid of children) assert.not.ok(alive(pid), `child ${pid} outlived an orderly stop`);
  }),
);

test.run();
