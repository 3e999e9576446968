// suite-timeout: 180
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as fs from 'node:fs';
import * as path from 'node:path';
import * as net from 'node:net';
import * as dgram from 'node:dgram';
import * as http from 'node:http';
import { createHash, randomBytes } from 'node:crypto';
import { execFileSync } from 'node:child_process';
import { freePort, tempDir, startEtcd, loud, type EtcdServer } from '../harness/index.ts';
import { createLogger } from '../../lib/log.ts';
import { configKeys } from '../../proto/names.ts';
import { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import { ConfigStore } from '../../actors/config/store.ts';
import { runHandler } from '../../actors/pipeline/handlers/index.ts';
import { pipeMutate } from '../../actors/pipeline/mutators/pipe.ts';
import { BackendAssets } from '../../actors/pipeline/assets.ts';
import type { ExecContext, HandlerSpec, MutatorSpec } from '../../actors/pipeline/types.ts';

// The backend's pipe/tcp/udp handlers and pipe mutator against real child processes, real TCP and
// UDP listeners, and runtime assets served by a real HTTP server and resolved from a real etcd.

const work = tempDir('monitor-pipeline-handlers');
const logLines: string[] = [];
const log = createLogger('debug', {}, (l) => logLines.push(l));
const noAssets: ExecContext['assets'] = async (names) => {
  if (names.length) throw new Error(`no assets here: ${names.join(', ')}`);
  return { env: {} };
};
const ctx: ExecContext = { log, baseEnv: { PATH: process.env.PATH }, assets: noAssets };

const closers: Array<() => Promise<void> | void> = [];
let etcdSvc: EtcdServer | undefined;

const file = (name: string) => path.join(work, name);
const pipe = (name: string, command: string, extra: Partial<HandlerSpec> = {}): HandlerSpec =>
  ({ metadata: { name, namespace: 'default' }, type: 'pipe', command, ...extra }) as HandlerSpec;
const sock = (
  name: string,
  type: 'tcp' | 'udp',
  port: number,
  extra: Partial<HandlerSpec> = {},
): HandlerSpec =>
  ({
    metadata: { name, namespace: 'default' },
    type,
    socket: { host: '127.0.0.1', port },
    ...extra,
  }) as HandlerSpec;
const mutator = (name: string, command: string, extra: Partial<MutatorSpec> = {}): MutatorSpec =>
  ({ metadata: { name, namespace: 'default' }, type: 'pipe', command, ...extra }) as MutatorSpec;

const alive = (pid: number) => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};
async function waitFor(cond: () => boolean, ms: number): Promise<boolean> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (cond()) return true;
    await new Promise((r) => setTimeout(r, 50));
  }
  return cond();
}

test.after(async () => {
  for (const c of closers.reverse()) await Promise.resolve(c()).catch(() => {});
  await etcdSvc?.stop();
});

test('pipe handler: the payload reaches the command on stdin', async () => {
  const payload = Buffer.from(JSON.stringify({ check: { output: 'SECRET-PAYLOAD-MARK' } }));
  const out = await runHandler(pipe('to-file', `cat > '${file('payload.json')}'`), payload, 'default', ctx);
  assert.equal(out.ok, true, out.error);
  assert.equal(out.status, 0);
  assert.equal(out.handler, 'to-file');
  assert.equal(fs.readFileSync(file('payload.json')), payload);
  assert.ok(logLines.some((l) => l.includes('"handler ran"') && l.includes('to-file')));
  assert.not.ok(
    logLines.some((l) => l.includes('SECRET-PAYLOAD-MARK')),
    'the payload is never logged',
  );
});

test('pipe handler: a non-zero exit is ok=false with its status and stderr', async () => {
  const out = await runHandler(
    pipe('fails', 'echo broken pipe dream >&2; exit 3'),
    Buffer.from('{}'),
    'default',
    ctx,
  );
  assert.equal(out.ok, false);
  assert.equal(out.status, 3);
  assert.match(out.error ?? '', /exit status 3: broken pipe dream/);
  assert.ok(
    logLines.some(
      (l) => l.includes('"level":"warn"') && l.includes('"handler failed"') && l.includes('fails'),
    ),
  );
});

test('pipe handler: a timeout kills the whole process group', async () => {
  const pidFile = file('sleep.pid');
  const started = Date.now();
  const out = await runHandler(
    pipe('slow', `sleep 30 & echo $! > '${pidFile}'; wait`, { timeout: 1 }),
    Buffer.from('{}'),
    'default',
    ctx,
  );
  const took = Date.now() - started;
  assert.equal(out.ok, false);
  assert.equal(out.status, 2);
  assert.match(out.error ?? '', /timed out after 1 s/);
  assert.ok(took < 10_000, `returned after ${took} ms`);
  const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  assert.ok(pid > 0);
  assert.ok(await waitFor(() => !alive(pid), 3000), 'the background sleep was killed');
});

test('pipe handler: a background child that keeps stdout open does not hold the result', async () => {
  const pidFile = file('bg.pid');
  const out = await runHandler(
    pipe('daemonizes', `sleep 30 & echo $! > '${pidFile}'; exit 0`),
    Buffer.from('{}'),
    'default',
    ctx,
  );
  assert.equal(out.ok, true, out.error);
  const pid = Number(fs.readFileSync(pidFile, 'utf8').trim());
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    /* gone */
  }
});

test('pipe handler: timeout 0 means none', async () => {
  const out = await runHandler(pipe('quick', 'sleep 0.2', { timeout: 0 }), Buffer.from('{}'), 'default', ctx);
  assert.equal(out.ok, true, out.error);
});

test('pipe handler: env_vars reach the command; invalid entries are skipped with a warning', async () => {
  const spec = pipe(
    'envy',
    `printf '%s|%s|%s' "$GREETING" "$WITH_EQ" "$MONITOR_BASE" > '${file('env.txt')}'`,
    {
      env_vars: ['GREETING=hello world', 'WITH_EQ=a=b', '=nokey', 'NOEQUALS'],
    },
  );
  const out = await runHandler(spec, Buffer.from('{}'), 'default', {
    ...ctx,
    baseEnv: { ...ctx.baseEnv, MONITOR_BASE: 'base' },
  });
  assert.equal(out.ok, true, out.error);
  assert.is(fs.readFileSync(file('env.txt'), 'utf8'), 'hello world|a=b|base');
  const warns = logLines.filter((l) => l.includes('invalid env_vars entry'));
  assert.is(warns.length, 2);
  assert.not.ok(
    warns.some((l) => l.includes('NOEQUALS')),
    'the entry itself is not logged',
  );
});

test('pipe handler: secrets come from the env provider; their values are masked in what is logged', async () => {
  const value = `s3cr3t-${randomBytes(6).toString('hex')}`;
  const spec = pipe(
    'secretive',
    `printf %s "$API_TOKEN" > '${file('secret.txt')}'; echo "bad $API_TOKEN" >&2; exit 1`,
    {
      secrets: [{ name: 'API_TOKEN', secret: 'PIPELINE_TEST_TOKEN' }],
    },
  );
  const out = await runHandler(spec, Buffer.from('{}'), 'default', {
    ...ctx,
    secretEnv: { PIPELINE_TEST_TOKEN: value },
  });
  assert.is(fs.readFileSync(file('secret.txt'), 'utf8'), value);
  assert.is(out.ok, false);
  assert.is(out.error, 'exit status 1: bad REDACTED');
  assert.not.ok(logLines.some((l) => l.includes(value)));
  const missing = await runHandler(spec, Buffer.from('{}'), 'default', { ...ctx, secretEnv: {} });
  assert.is(
    missing.error,
    'secret API_TOKEN: the env provider has no variable PIPELINE_TEST_TOKEN on this backend',
  );
});

test('pipe handler: a command that never reads stdin, with a large payload', async () => {
  const big = randomBytes(8 * 1024 * 1024);
  const a = await runHandler(pipe('ignores', 'exit 0'), big, 'default', ctx);
  assert.equal(a.ok, true, a.error);
  const b = await runHandler(pipe('ignores-slowly', 'sleep 0.3; exit 5'), big, 'default', ctx);
  assert.equal(b.ok, false);
  assert.equal(b.status, 5);
});

test('pipe handler: output past the cap is read and dropped, the handler still succeeds', async () => {
  const out = await runHandler(
    pipe('chatty', 'head -c 1000000 /dev/zero'),
    Buffer.from('{}'),
    'default',
    ctx,
  );
  assert.equal(out.ok, true, out.error);
});

test('pipe handler: a missing runtime asset is ok=false naming it', async () => {
  const out = await runHandler(
    pipe('needs-asset', 'true', { runtime_assets: ['nothere'] }),
    Buffer.from('{}'),
    'default',
    ctx,
  );
  assert.equal(out.ok, false);
  assert.match(out.error ?? '', /nothere/);
});

test('pipe handler: an aborted signal kills the running command', async () => {
  const ac = new AbortController();
  const started = Date.now();
  const p = runHandler(pipe('stopping', 'sleep 30'), Buffer.from('{}'), 'default', {
    ...ctx,
    signal: ac.signal,
  });
  setTimeout(() => ac.abort(), 200);
  const out = await p;
  assert.equal(out.ok, false);
  assert.match(out.error ?? '', /cancelled/);
  assert.ok(Date.now() - started < 10_000);
});

test('set handler: not run here', async () => {
  const out = await runHandler(
    { metadata: { name: 'all' }, type: 'set', handlers: ['a'] } as HandlerSpec,
    Buffer.from('{}'),
    'default',
    ctx,
  );
  assert.equal(out.ok, false);
  assert.is(out.error, 'set handlers are expanded, not run');
});

test('pipe mutator: stdout is the payload', async () => {
  const out = await pipeMutate(
    mutator('upper', 'tr a-z A-Z; echo note >&2'),
    '{"check":"abc"}',
    'default',
    ctx,
  );
  assert.is(out.toString('utf8'), '{"CHECK":"ABC"}');
});

test('pipe mutator: a failure throws naming the mutator, its status and stderr', async () => {
  try {
    await pipeMutate(
      mutator('breaks', 'cat >/dev/null; echo cannot parse the event >&2; exit 4'),
      '{}',
      'default',
      ctx,
    );
    assert.unreachable('should throw');
  } catch (err) {
    assert.match((err as Error).message, /mutator breaks failed \(status 4\).*cannot parse the event/);
  }
  try {
    await pipeMutate(mutator('hangs', 'sleep 30', { timeout: 1 }), '{}', 'default', ctx);
    assert.unreachable('should throw');
  } catch (err) {
    assert.match((err as Error).message, /mutator hangs failed \(status 2\).*timed out after 1 s/);
  }
});

test('pipe mutator: output past 16 MiB is an error, not a cut payload', async () => {
  try {
    await pipeMutate(mutator('flood', 'head -c 20000000 /dev/zero'), '{}', 'default', ctx);
    assert.unreachable('should throw');
  } catch (err) {
    assert.match((err as Error).message, /mutator flood failed.*output larger than 16777216 bytes/);
  }
});

test('tcp handler: a real server receives the exact payload', async () => {
  const received: Buffer[] = [];
  let done!: () => void;
  const closed = new Promise<void>((r) => {
    done = r;
  });
  const server = net.createServer((c) => {
    c.on('data', (b) => received.push(b));
    c.on('end', () => {
      c.end();
      done();
    });
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => server.close(() => r())));
  const payload = randomBytes(1024 * 1024);
  const out = await runHandler(sock('tcp-ok', 'tcp', port), payload, 'default', ctx);
  assert.equal(out.ok, true, out.error);
  await closed;
  assert.ok(Buffer.concat(received).equals(payload), 'exact payload');
});

test('tcp handler: a closed port is ok=false', async () => {
  const port = await freePort();
  const out = await runHandler(sock('tcp-closed', 'tcp', port), Buffer.from('{}'), 'default', ctx);
  assert.equal(out.ok, false);
  assert.match(out.error ?? '', /ECONNREFUSED/);
});

test('tcp handler: a server that never reads is bounded by the timeout', async () => {
  const conns: net.Socket[] = [];
  const server = net.createServer((c) => {
    c.pause();
    conns.push(c);
  });
  const port = await freePort();
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  closers.push(
    () =>
      new Promise<void>((r) => {
        conns.forEach((c) => c.destroy());
        server.close(() => r());
      }),
  );
  const started = Date.now();
  const out = await runHandler(
    sock('tcp-stuck', 'tcp', port, { timeout: 1 }),
    randomBytes(64 * 1024 * 1024),
    'default',
    ctx,
  );
  assert.equal(out.ok, false);
  assert.match(out.error ?? '', /timed out after 1 s/);
  assert.ok(Date.now() - started < 10_000);
});

test('udp handler: a real socket receives the payload; too large a payload is refused', async () => {
  const s = dgram.createSocket('udp4');
  const port = await freePort();
  await new Promise<void>((r) => s.bind(port, '127.0.0.1', r));
  closers.push(() => new Promise<void>((r) => s.close(() => r())));
  const got = new Promise<Buffer>((r) => s.once('message', (m) => r(m)));
  const payload = Buffer.from(JSON.stringify({ metrics: { points: [{ name: 'x', value: 1 }] } }));
  const out = await runHandler(sock('udp-ok', 'udp', port), payload, 'default', ctx);
  assert.equal(out.ok, true, out.error);
  assert.ok((await got).equals(payload));
  const big = await runHandler(sock('udp-big', 'udp', port), Buffer.alloc(65508), 'default', ctx);
  assert.equal(big.ok, false);
  assert.match(big.error ?? '', /larger than one datagram/);
});

test(
  'runtime asset: served over HTTP, resolved from etcd, its bin/ on the PATH of a pipe handler',
  loud(async () => {
    // Build the asset with the system tar.
    const src = file('asset-src');
    fs.mkdirSync(path.join(src, 'bin'), { recursive: true });
    fs.writeFileSync(
      path.join(src, 'bin', 'greet'),
      '#!/bin/sh\necho "greetings from $GREET_ASSET_PATH"\ncat\n',
      { mode: 0o755 },
    );
    const archive = file('greet.tar.gz');
    execFileSync('tar', ['-czf', archive, '-C', src, '.']);
    const data = fs.readFileSync(archive);
    const server = http.createServer((req, res) => {
      if (req.url === '/greet.tar.gz') {
        res.writeHead(200);
        res.end(data);
      } else {
        res.writeHead(404);
        res.end();
      }
    });
    const port = await freePort();
    await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
    closers.push(
      () =>
        new Promise<void>((r) => {
          server.closeAllConnections();
          server.close(() => r());
        }),
    );

    etcdSvc = await startEtcd();
    const etcd = new EtcdAdapter({ endpoints: [etcdSvc.url] });
    const config = new ConfigStore(etcd, log);
    await config.start();
    closers.push(async () => {
      await config.stop();
      etcd.client.close();
    });
    await config.put(configKeys.namespaced('assets', 'default', 'greet-asset'), {
      metadata: { name: 'greet-asset', namespace: 'default' },
      builds: [
        {
          url: `http://127.0.0.1:${port}/missing-other-os.tar.gz`,
          sha512: 'a'.repeat(128),
          filters: ["entity.system.os == 'plan9'"],
        },
        {
          url: `http://127.0.0.1:${port}/greet.tar.gz`,
          sha512: createHash('sha512').update(data).digest('hex'),
          filters: [`entity.system.os == '${process.platform}'`, "entity.entity_class == 'backend'"],
        },
      ],
    });
    const stateDir = tempDir('monitor-backend-state');
    const assets = new BackendAssets({ config, stateDir, log, node: 'node-1' });
    const actx: ExecContext = { ...ctx, assets: assets.assets };

    const outFile = file('greet.txt');
    const out = await runHandler(
      pipe('greeter', `greet > '${outFile}'`, { runtime_assets: ['greet-asset'] }),
      Buffer.from('payload-line'),
      'default',
      actx,
    );
    assert.equal(out.ok, true, out.error);
    const text = fs.readFileSync(outFile, 'utf8');
    assert.match(
      text,
      new RegExp(`greetings from ${stateDir.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')}/assets/[0-9a-f]{128}`),
    );
    assert.match(text, /payload-line$/);

    // A mutator with the same asset: cached, no second download needed.
    const m = await pipeMutate(
      mutator('greet-mutator', 'greet', { runtime_assets: ['greet-asset'] }),
      '{"a":1}',
      'default',
      actx,
    );
    assert.match(m.toString('utf8'), /greetings from .*\n\{"a":1\}$/);

    // Another namespace does not see the asset.
    const other = await runHandler(
      pipe('greeter', 'greet', { runtime_assets: ['greet-asset'] }),
      Buffer.from('{}'),
      'elsewhere',
      actx,
    );
    assert.equal(other.ok, false);
    assert.match(other.error ?? '', /asset greet-asset not found in namespace elsewhere/);

    // A deleted asset is seen at once (prepared environments follow the configuration).
    await config.remove(configKeys.namespaced('assets', 'default', 'greet-asset'));
    const gone = await runHandler(
      pipe('greeter', 'greet', { runtime_assets: ['greet-asset'] }),
      Buffer.from('{}'),
      'default',
      actx,
    );
    assert.equal(gone.ok, false);
    assert.match(gone.error ?? '', /asset greet-asset not found in namespace default/);
  }),
);

test.run();
