// suite-timeout: 180
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  freePort,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { fresh } from '../harness/api.ts';

// The legacy TCP and UDP check-result sockets with a real backend and a real agent: results become
// stored events (proxy entities for `source`/`client`), and bad input of every kind is answered
// `invalid` (TCP) or dropped (UDP) without hurting the agent.

const AGENT = 'socket-agent';
let backend: Backend;
let agent: AgentProc;
const others: AgentProc[] = [];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** Sends the parts (a number is a pause in ms), optionally half-closes, and reads the answer until the agent closes. */
function tcp(port: number, parts: (string | Buffer | number)[], end = true): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    sock.setTimeout(15000, () => {
      sock.destroy();
      reject(new Error(`no answer; got "${answer}"`));
    });
    sock.on('data', (d) => {
      answer += d.toString();
    });
    sock.on('error', reject);
    sock.on('end', () => {
      resolve(answer);
      sock.destroy();
    });
    sock.on('close', () => resolve(answer));
    sock.on('connect', async () => {
      for (const p of parts) {
        if (typeof p === 'number') await sleep(p);
        else sock.write(p);
      }
      if (end) sock.end();
    });
  });
}

function udp(port: number, payload: string | Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.send(payload, port, '127.0.0.1', (err) => {
      s.close();
      if (err) reject(err);
      else resolve();
    });
  });
}

async function storedEvent(entity: string, check: string, timeoutMs = 15000) {
  return waitFor(
    async () => {
      const r = await backend.get(`/api/core/v2/namespaces/default/events/${entity}/${check}`);
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs, intervalMs: 100, what: `event ${entity}/${check}` },
  );
}

test.before(async () => {
  backend = await startBackend({ name: 'agent-sockets' });
  agent = await startAgent({ name: AGENT, backendUrls: backend.agentUrl });
  await agent.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
});

test.after(async () => {
  for (const a of others) await a.stop().catch(() => {});
  await agent?.stop().catch(() => {});
  await backend?.stop();
});

test('TCP: a legacy check result is answered ok and stored with its fields', async () => {
  const check = fresh('tcp-check');
  const answer = await tcp(agent.ports.socket, [
    JSON.stringify({
      name: check,
      status: 1,
      output: 'load high',
      handlers: ['mail'],
      command: 'check-load',
      interval: 60,
      duration: 0.25,
      executed: 1700000000,
      subscribers: ['ignored'],
      ttl: 30,
      unknown: { deep: true },
    }),
  ]);
  assert.is(answer, 'ok');
  const ev = await storedEvent(AGENT, check);
  assert.is(ev.entity.metadata.name, AGENT);
  assert.is(ev.check.status, 1);
  assert.is(ev.check.output, 'load high');
  assert.equal(ev.check.handlers, ['mail']);
  assert.is(ev.check.command, 'check-load');
  assert.is(ev.check.interval, 60);
  assert.is(ev.check.duration, 0.25);
  assert.is(ev.check.executed, 1700000000);
  assert.is(ev.check.unknown, undefined, 'unknown attributes are ignored');
  assert.is(ev.check.ttl, undefined, 'the socket ignores ttl');
});

test('TCP: a result split over several writes, without closing our side, is still read', async () => {
  const check = fresh('tcp-split');
  const json = JSON.stringify({ name: check, status: 0, output: 'fine' });
  const answer = await tcp(
    agent.ports.socket,
    [json.slice(0, 10), 200, json.slice(10, 20), 200, json.slice(20)],
    false,
  );
  assert.is(answer, 'ok');
  await storedEvent(AGENT, check);
});

test('TCP: source and client make proxy entities', async () => {
  const proxy = fresh('tcp-proxy');
  const check = fresh('tcp-p');
  assert.is(
    await tcp(agent.ports.socket, [
      JSON.stringify({ name: check, status: 2, output: 'down', source: proxy }),
    ]),
    'ok',
  );
  const ev = await storedEvent(proxy, check);
  assert.is(ev.entity.entity_class, 'proxy');
  assert.is(ev.check.status, 2);
  const legacy = fresh('tcp-client');
  assert.is(
    await tcp(agent.ports.socket, [JSON.stringify({ name: check, status: 0, output: 'up', client: legacy })]),
    'ok',
  );
  assert.is((await storedEvent(legacy, check)).entity.metadata.name, legacy);
});

test('TCP: ping gets pong', async () => {
  assert.is(await tcp(agent.ports.socket, ['ping']), 'pong');
  assert.is(await tcp(agent.ports.socket, [' ping \n'], false), 'pong');
});

test('TCP: bad input is answered invalid', async () => {
  const port = agent.ports.socket;
  assert.is(await tcp(port, ['{"name": "x", "status": 0,']), 'invalid', 'truncated JSON then EOF');
  assert.is(await tcp(port, ['hello there']), 'invalid', 'not JSON');
  assert.is(await tcp(port, ['']), 'invalid', 'nothing');
  assert.is(await tcp(port, ['[1,2,3]']), 'invalid', 'array');
  assert.is(await tcp(port, ['{"status": 0, "output": "no name"}']), 'invalid', 'no name');
  assert.is(await tcp(port, ['{"name": "x", "status": 0}']), 'invalid', 'no output');
  assert.is(await tcp(port, ['{"name": "x", "output": "o"}']), 'invalid', 'no status');
  assert.is(await tcp(port, ['{"name": "x", "status": "0", "output": "o"}']), 'invalid', 'status a string');
  assert.is(await tcp(port, ['{"name": "x", "status": -3, "output": "o"}']), 'invalid', 'negative status');
  assert.is(await tcp(port, ['{"name": "bad name", "status": 0, "output": "o"}']), 'invalid', 'bad name');
  assert.is(
    await tcp(port, ['{"name": "x", "status": 0, "output": "o", "source": "bad source!"}']),
    'invalid',
    'bad source',
  );
  assert.is(
    await tcp(port, ['{"name": "x", "status": 0, "output": "o", "handlers": "mail"}']),
    'invalid',
    'handlers a string',
  );
  assert.is(await tcp(port, [Buffer.from([0xff, 0xfe, 0x00, 0x01])]), 'invalid', 'binary');
});

test('TCP: a client that never completes its JSON gets invalid after the 5 s deadline', async () => {
  const t0 = Date.now();
  const answer = await tcp(agent.ports.socket, ['{"name": "slow", "status": 0,'], false);
  assert.is(answer, 'invalid');
  assert.ok(Date.now() - t0 >= 4500, 'waited for the deadline');
});

test('TCP: an oversized result is refused', async () => {
  const big = '{"name": "big", "status": 0, "output": "' + 'x'.repeat(600 * 1024);
  const answer = await tcp(agent.ports.socket, [big], false).catch(() => 'reset');
  assert.ok(answer === 'invalid' || answer === 'reset', answer);
  assert.is(await tcp(agent.ports.socket, ['ping']), 'pong', 'still serving');
});

test('UDP: one datagram is one result; garbage is dropped; source makes a proxy', async () => {
  const port = agent.ports.socket;
  for (const junk of [
    'garbage',
    '{"name":',
    '{}',
    '[]',
    'null',
    '{"name":"x","status":"bad","output":"o"}',
    'ping',
  ])
    await udp(port, junk);
  await udp(port, Buffer.from([0, 1, 2, 3, 255]));
  const check = fresh('udp-check');
  await udp(port, JSON.stringify({ name: check, status: 1, output: 'via udp', handlers: ['h1'] }));
  const ev = await storedEvent(AGENT, check);
  assert.is(ev.check.output, 'via udp');
  assert.equal(ev.check.handlers, ['h1']);
  const proxy = fresh('udp-proxy');
  await udp(port, JSON.stringify({ name: check, status: 0, output: 'p', source: proxy }));
  assert.is((await storedEvent(proxy, check)).entity.entity_class, 'proxy');
  // A large datagram (beyond Sensu's 1500 bytes) is accepted too.
  const large = fresh('udp-large');
  await udp(port, JSON.stringify({ name: large, status: 0, output: 'y'.repeat(8000) }));
  assert.is((await storedEvent(AGENT, large)).check.output.length, 8000);
  assert.ok(agent.proc.running, 'agent alive');
});

test('--disable-sockets: nothing listens on the socket port', async () => {
  const quiet = await startAgent({
    name: fresh('nosock'),
    backendUrls: backend.agentUrl,
    extraArgs: ['--disable-sockets'],
  });
  others.push(quiet);
  await quiet.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
  const r = await tcp(quiet.ports.socket, ['ping']).catch((err: NodeJS.ErrnoException) => err.code);
  assert.is(r, 'ECONNREFUSED');
});

test('socket port already in use: one clear log line and exit code 2', async () => {
  const clash = await startAgent({
    name: fresh('sockclash'),
    backendUrls: backend.agentUrl,
    ports: { api: await freePort(), socket: agent.ports.socket, statsd: await freePort() },
  });
  others.push(clash);
  const exit = await waitFor(() => clash.proc.exit, { timeoutMs: 15000, what: 'clashing agent exit' });
  assert.is(exit.code, 2);
  assert.ok(
    clash.proc.lines().some((l) => /TCP socket: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/.test(l)),
    clash.proc.tail(10),
  );
});

test.run();
