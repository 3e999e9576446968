import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { createServer, type IncomingHttpHeaders, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo } from 'node:net';
import { fileURLToPath } from 'node:url';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { WebSocket, WebSocketServer } from 'ws';
import { Agent } from '../../agent/agent.ts';
import { decodeFrame, encodeFrame, jsonCodec, type Ack } from '../../proto/frames.ts';
import { createLogger } from '../../lib/log.ts';
import { loadAgentConfig } from '../../agent/config.ts';
import { KeepaliveEvent } from '../../proto/schemas/event.ts';
import { tempDir } from '../harness/tmp.ts';
import { freePorts } from '../harness/ports.ts';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';

// The agent's connection to its backends. Where a real backend can produce the case, the agent talks
// to one (startBackend): moving on to the second URL when the first refuses connections, and a quiet
// connection kept open by the backend's pongs.
//
// Every other test uses a backend peer made of a plain http server and a `ws` server (class Peer),
// because a real backend cannot produce its case or does not show what it asserts: the exact
// handshake headers the agent sends and the close codes it ends with; refusing a handshake with a
// 401 or a 403 (with a body of the test's choosing) a given number of times and then accepting;
// closing a socket on demand and counting the agent's keepalive sequence per connection; never
// answering pings; answering with a Content-Type the agent cannot decode; sending malformed frames.

const BIN = fileURLToPath(new URL('../../bin/monitor-agent', import.meta.url));

interface Received {
  conn: number;
  type: string;
  value: any;
  at: number;
}
interface PeerOptions {
  reject?: number;
  rejection?: string;
  contentType?: string;
  autoPong?: boolean;
}

const UNAUTHORIZED =
  'HTTP/1.1 401 Unauthorized\r\nContent-Type: text/plain\r\nContent-Length: 16\r\nConnection: close\r\n\r\nbad credentials\n';

class Peer {
  readonly handshakes: IncomingHttpHeaders[] = [];
  readonly conns: WebSocket[] = [];
  readonly closes: number[] = [];
  readonly frames: Received[] = [];
  url = '';
  private readonly server: Server = createServer((_req, res) => res.writeHead(404).end());
  private readonly wss: WebSocketServer;
  private rejectLeft: number;
  private readonly rejection: string;

  constructor(opts: PeerOptions = {}) {
    this.rejectLeft = opts.reject ?? 0;
    this.rejection = opts.rejection ?? UNAUTHORIZED;
    this.wss = new WebSocketServer({ noServer: true, autoPong: opts.autoPong ?? true });
    this.wss.on('headers', (h) =>
      h.push(`Content-Type: ${opts.contentType ?? 'application/json'}`, 'Backend-ID: peer-1'),
    );
    this.server.on('upgrade', (req, socket, head) => {
      this.handshakes.push(req.headers);
      if (this.rejectLeft-- > 0) {
        socket.end(this.rejection);
        return;
      }
      this.wss.handleUpgrade(req, socket, head, (ws) => this.accept(ws));
    });
  }

  async listen(): Promise<this> {
    this.server.listen(0, '127.0.0.1');
    await once(this.server, 'listening');
    this.url = `ws://127.0.0.1:${(this.server.address() as AddressInfo).port}`;
    return this;
  }

  private accept(ws: WebSocket): void {
    const conn = this.conns.push(ws) - 1;
    ws.on('message', (data) => {
      const frame = decodeFrame(data as Buffer);
      this.frames.push({ conn, type: frame.type, value: jsonCodec.decode(frame.payload), at: Date.now() });
    });
    ws.on('close', (code) => this.closes.push(code));
  }

  keepalives(conn?: number): Received[] {
    return this.frames.filter((f) => f.type === 'keepalive' && (conn === undefined || f.conn === conn));
  }

  async close(): Promise<void> {
    for (const ws of this.conns) ws.terminate();
    this.wss.close();
    this.server.closeAllConnections();
    await new Promise((r) => this.server.close(r));
  }
}

async function until<T>(what: string, fn: () => T | undefined | false, timeoutMs = 5000): Promise<T> {
  const end = Date.now() + timeoutMs;
  for (;;) {
    const r = fn();
    if (r) return r;
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((res) => setTimeout(res, 10));
  }
}

async function refusedUrl(): Promise<string> {
  const s = createNetServer().listen(0, '127.0.0.1');
  await once(s, 'listening');
  const port = (s.address() as AddressInfo).port;
  await new Promise((r) => s.close(r));
  return `ws://127.0.0.1:${port}`;
}

/** The real backend of the tests that need no Peer. */
let backend: Backend;
/** The agent credential of the real backend, given after (so over) the Peer tests' own. */
const REAL_BACKEND_USER = ['--namespace', 'default', '--user', 'agent', '--password', 'P@ssw0rd!'];

const peers: Peer[] = [];
const agents: Agent[] = [];
const children: ChildProcess[] = [];

async function peer(opts?: PeerOptions): Promise<Peer> {
  const p = await new Peer(opts).listen();
  peers.push(p);
  return p;
}

function agent(urls: string[], extra: string[] = [], random = () => 0.999) {
  const logs: Record<string, any>[] = [];
  const args = [
    ...urls.flatMap((u) => ['--backend-url', u]),
    '--name',
    'test-agent',
    '--namespace',
    'ops',
    '--subscriptions',
    'linux,web',
    '--user',
    'agent-u',
    '--password',
    'p:w d',
    '--keepalive-interval',
    '1',
    '--keepalive-warning-timeout',
    '10',
    '--keepalive-critical-timeout',
    '20',
    '--keepalive-handlers',
    'slack',
    '--retry-min',
    '0.1',
    '--retry-max',
    '0.3',
    '--labels',
    'region=eu',
    '--cache-dir',
    tempDir('agent-connection'),
    ...extra,
  ];
  const config = loadAgentConfig(args, {}, { defaultConfigFile: '/nonexistent/agent.yml' });
  const logger = createLogger('debug', {}, (line) => logs.push(JSON.parse(line)));
  const a = new Agent(config, { logger, random });
  agents.push(a);
  a.start();
  return { agent: a, logs };
}

test.before(async () => {
  backend = await startBackend({ name: 'agent-connection' });
});

test.after(async () => {
  for (const c of children) if (c.exitCode === null) c.kill('SIGKILL');
  await Promise.all(agents.map((a) => a.stop()));
  await Promise.all(peers.map((p) => p.close()));
  await backend?.stop();
});

/** The keepalive event the real backend stores for the agent of these tests, once it has one. */
const keepaliveStored = () =>
  waitFor(
    async () =>
      (await backend.get('/api/core/v2/namespaces/default/events/test-agent/keepalive')).status === 200,
    { timeoutMs: 15000, what: 'the keepalive of test-agent stored by the backend' },
  );

test('handshake headers, Basic auth, and a keepalive at once then every interval', async () => {
  const p = await peer();
  const { agent: a, logs } = agent([p.url]);
  await until('connection', () => p.conns.length === 1);
  const h = p.handshakes[0]!;
  assert.is(h['monitor-namespace'], 'ops');
  assert.is(h['monitor-agentname'], 'test-agent');
  assert.is(h['monitor-user'], 'agent-u');
  assert.is(h['monitor-subscriptions'], 'linux,web');
  assert.is(h.accept, 'application/json');
  assert.is(
    h['monitor-capabilities'],
    'ack-retry',
    'the agent announces that it resends events refused as retryable',
  );
  assert.is(h.authorization, 'Basic ' + Buffer.from('agent-u:p:w d').toString('base64'));
  const first = await until('first keepalive', () => p.keepalives(0)[0], 1000);
  const ka = v.parse(KeepaliveEvent, first.value);
  assert.is(ka.sequence, 1);
  assert.is(ka.check.metadata.name, 'keepalive');
  assert.is(ka.check.metadata.namespace, 'ops');
  assert.equal([ka.check.interval, ka.check.timeout, ka.check.ttl], [1, 10, 20]);
  assert.equal(ka.check.handlers, ['slack']);
  assert.is(ka.metadata?.namespace, 'ops');
  assert.match(ka.id!, /^[0-9a-f-]{36}$/);
  assert.ok(Math.abs(ka.timestamp! - Date.now() / 1000) < 5);
  assert.is(ka.entity.metadata.name, 'test-agent');
  assert.equal(ka.entity.metadata.labels, { region: 'eu' });
  assert.is(ka.entity.entity_class, 'agent');
  assert.equal(ka.entity.subscriptions, ['linux', 'web', 'entity:test-agent']);
  assert.is(ka.entity.user, 'agent-u');
  assert.equal(ka.entity.keepalive_handlers, ['slack']);
  assert.ok(ka.entity.system?.hostname && ka.entity.system.arch);
  assert.ok(!JSON.stringify(ka).includes('p:w d'), 'the password never travels in a keepalive');
  const second = await until('second keepalive', () => p.keepalives(0)[1], 2500);
  assert.is(second.value.sequence, 2);
  assert.ok(second.at - first.at >= 800, `interval was ${second.at - first.at} ms`);
  assert.ok(a.connected);
  assert.ok(
    logs.some(
      (l) =>
        l.level === 'info' &&
        l.msg === 'connected to backend' &&
        l.url === p.url &&
        l.backend_id === 'peer-1',
    ),
  );
  await a.stop();
  await until('close frame', () => p.closes.length === 1);
  assert.equal(p.closes, [1000]);
  assert.is(a.connected, false);
});

test('reconnects after the backend closes the socket; sequence restarts', async () => {
  const p = await peer();
  const { agent: a, logs } = agent([p.url]);
  await until('first keepalive', () => p.keepalives(0)[0]);
  p.conns[0]!.close(1001, 'going away');
  const again = await until('keepalive on the second connection', () => p.keepalives(1)[0]);
  assert.is(again.value.sequence, 1);
  assert.is(p.handshakes.length, 2);
  const disc = logs.find((l) => l.msg === 'disconnected');
  assert.ok(
    disc && disc.level === 'info' && disc.code === 1001 && disc.reason === 'going away',
    JSON.stringify(disc),
  );
  assert.is(logs.filter((l) => l.msg === 'connected to backend').length, 2);
  await a.stop();
});

test('a 401 at the handshake is logged with its status and message, then retried', async () => {
  const p = await peer({ reject: 2 });
  const { agent: a, logs } = agent([p.url]);
  await until('keepalive after two rejections', () => p.keepalives(0)[0]);
  assert.is(p.handshakes.length, 3);
  const failed = logs.filter((l) => l.msg === 'backend connection failed');
  assert.is(failed.length, 2);
  assert.is(failed[0]!.level, 'warn');
  assert.is(failed[0]!.status, 401);
  assert.is(failed[0]!.url, p.url);
  assert.match(failed[0]!.reason, /HTTP 401 Unauthorized: bad credentials/);
  assert.ok(failed[1]!.retry_in_seconds > failed[0]!.retry_in_seconds, 'the delay grows between failures');
  await a.stop();
});

test("a 403 with a JSON error body logs the body's message", async () => {
  const body = JSON.stringify({ message: 'user agent-u may not create events in ops', code: 4 });
  const p = await peer({
    reject: 1,
    rejection: `HTTP/1.1 403 Forbidden\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\n\r\n${body}`,
  });
  const { agent: a, logs } = agent([p.url]);
  await until('keepalive after the rejection', () => p.keepalives(0)[0]);
  const failed = logs.find((l) => l.msg === 'backend connection failed');
  assert.is(failed?.status, 403);
  assert.is(failed?.reason, 'HTTP 403 Forbidden: user agent-u may not create events in ops');
  await a.stop();
});

test('a 429 with Retry-After holds the next attempt back that long, past --retry-max', async () => {
  const body = JSON.stringify({ message: 'too many failed logins: try again in 1 seconds', code: 12 });
  const p = await peer({
    reject: 1,
    rejection: `HTTP/1.1 429 Too Many Requests\r\nRetry-After: 1\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body}`,
  });
  const start = Date.now();
  const { agent: a, logs } = agent([p.url]);
  await until('keepalive after the 429', () => p.keepalives(0)[0]);
  const failed = logs.find((l) => l.msg === 'backend connection failed');
  assert.is(failed?.status, 429);
  assert.is(failed?.retry_in_seconds, 1, 'Retry-After, not the 0.3 s of --retry-max');
  assert.ok(Date.now() - start >= 1000, `connected after ${Date.now() - start} ms`);
  await a.stop();
});

test('cycles to the second URL when the first refuses connections', async () => {
  const dead = await refusedUrl();
  // random 0.999 keeps the given order
  const { agent: a, logs } = agent([dead, backend.agentUrl], REAL_BACKEND_USER);
  await keepaliveStored(); // a keepalive through the second URL
  const failed = logs.find((l) => l.msg === 'backend connection failed');
  assert.ok(
    failed && failed.level === 'warn' && failed.url === dead && /ECONNREFUSED/.test(failed.reason),
    JSON.stringify(failed),
  );
  assert.is(a.connection.url, backend.agentUrl);
  await a.stop();
});

test('a silent backend (no pongs) is dropped after the heartbeat timeout', async () => {
  const p = await peer({ autoPong: false });
  const { agent: a, logs } = agent(
    [p.url],
    ['--backend-heartbeat-interval', '0.1', '--backend-heartbeat-timeout', '0.4'],
  );
  await until('reconnection', () => p.conns.length >= 2, 4000);
  assert.ok(logs.some((l) => l.level === 'warn' && l.msg === 'backend heartbeat timed out'));
  assert.ok(logs.some((l) => l.msg === 'disconnected' && /no data from backend/.test(l.reason)));
  await a.stop();
});

test('pongs keep a quiet connection open', async () => {
  const { agent: a, logs } = agent(
    [backend.agentUrl],
    [
      '--backend-heartbeat-interval',
      '0.1',
      '--backend-heartbeat-timeout',
      '0.4',
      '--keepalive-interval',
      '20',
      ...REAL_BACKEND_USER,
    ],
  );
  await until('connection', () => a.connected, 15000);
  await new Promise((r) => setTimeout(r, 1000));
  // One connection all along: connected once, never dropped.
  assert.is(logs.filter((l) => l.msg === 'connected to backend').length, 1);
  assert.not.ok(
    logs.some((l) => l.msg === 'disconnected' || l.msg === 'backend heartbeat timed out'),
    JSON.stringify(logs.filter((l) => l.level !== 'debug')),
  );
  assert.ok(a.connected);
  await a.stop();
});

test('a backend answering a Content-Type the agent cannot decode is closed and retried', async () => {
  // application/octet-stream (protobuf) is understood since the protobuf codec; XML never is.
  const p = await peer({ contentType: 'application/xml' });
  const { agent: a, logs } = agent([p.url]);
  await until('two attempts', () => p.closes.length >= 2);
  assert.is(p.closes[0], 1003);
  assert.is(p.keepalives().length, 0);
  assert.ok(
    logs.some(
      (l) => l.level === 'warn' && l.msg === 'backend connection failed' && /application\/xml/.test(l.reason),
    ),
  );
  assert.ok(!logs.some((l) => l.msg === 'connected to backend'));
  await a.stop();
});

test('malformed frames from the backend are logged and ignored; acks are emitted', async () => {
  const p = await peer();
  const { agent: a, logs } = agent([p.url]);
  await until('connection', () => p.conns[0]?.readyState === WebSocket.OPEN && a.connected);
  const acks: Ack[] = [];
  const configs: unknown[] = [];
  a.connection.on('ack', (x) => acks.push(x));
  a.connection.on('entity_config', (x) => configs.push(x));
  const ws = p.conns[0]!;
  ws.send(Buffer.from('no newline at all'));
  ws.send(Buffer.from('bogus\n{}'));
  ws.send(Buffer.from('ack\n{not json'));
  ws.send(encodeFrame('ack', jsonCodec.encode({ id: 42 })));
  ws.send(encodeFrame('ack', jsonCodec.encode({ id: 'e-1', ok: true })));
  ws.send(encodeFrame('entity_config', jsonCodec.encode({ metadata: { name: 'test-agent' } })));
  await until('ack', () => acks.length === 1 && configs.length === 1);
  assert.equal(acks[0], { id: 'e-1', ok: true });
  assert.is(logs.filter((l) => l.level === 'warn' && /ignoring malformed (frame|ack)/.test(l.msg)).length, 4);
  assert.ok(a.connected);
  assert.is(p.conns.length, 1);
  await a.stop();
});

test('send() answers false while disconnected', async () => {
  const dead = await refusedUrl();
  const { agent: a } = agent([dead]);
  assert.is(a.connection.send('event', { check: {} }), false);
  await a.stop();
});

test('the real binary connects, sends keepalives and exits 0 on SIGTERM with a 1000 close', async () => {
  const p = await peer();
  const env = Object.fromEntries(Object.entries(process.env).filter(([k]) => !k.startsWith('MONITOR_')));
  // Never the default listener ports: something may already listen there.
  const [api, socket, statsd] = await freePorts(3);
  const child = spawn(
    BIN,
    [
      'start',
      '--backend-url',
      p.url,
      '--name',
      'proc-agent',
      '--keepalive-interval',
      '1',
      '--api-port',
      String(api),
      '--socket-port',
      String(socket),
      '--statsd-metrics-port',
      String(statsd),
      '--retry-min',
      '0.1',
      '--log-level',
      'info',
      '-c',
      '/dev/null',
      '--cache-dir',
      tempDir('agent-connection-bin'),
    ],
    { env, stdio: ['ignore', 'pipe', 'pipe'] },
  );
  children.push(child);
  let stderr = '';
  child.stderr!.on('data', (d) => {
    stderr += d;
  });
  const first = await until('keepalive from the process', () => p.keepalives(0)[0], 15000);
  assert.is(v.parse(KeepaliveEvent, first.value).entity.metadata.name, 'proc-agent');
  assert.is(p.handshakes[0]!['monitor-agentname'], 'proc-agent');
  child.kill('SIGTERM');
  const [code] = await once(child, 'exit');
  assert.is(code, 0, stderr);
  assert.equal(p.closes, [1000]);
  assert.match(stderr, /"msg":"connected to backend"/);
});

test.run();
