// suite-timeout: 180
import { createSocket } from 'node:dgram';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { WebSocketServer } from 'ws';
import { decodeFrame, encodeFrame, messageBytes } from '../../proto/frames.ts';
import {
  freePort,
  startAgent,
  startBackend,
  waitFor,
  type AgentProc,
  type Backend,
} from '../harness/index.ts';
import { fresh } from '../harness/api.ts';

// The agent's StatsD listener. With a real backend: flushes become metrics events (no check) that
// the backend acknowledges without storing, and garbage never hurts the agent. With a WebSocket
// server in the test standing in for the backend: the exact event the agent sends.

let backend: Backend;
let wss: WebSocketServer | undefined;
const agents: AgentProc[] = [];
const received: any[] = [];

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

test.before(async () => {
  backend = await startBackend({ name: 'agent-statsd' });
});

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  wss?.close();
  for (const c of wss?.clients ?? []) c.terminate();
  await backend?.stop();
});

test('real backend: a flush becomes a metrics event the backend acknowledges, and nothing is stored', async () => {
  const name = fresh('statsd-agent');
  const agent = await startAgent({
    name,
    backendUrls: backend.agentUrl,
    extraArgs: ['--statsd-flush-interval', '1', '--statsd-event-handlers', 'influx,graphite'],
  });
  agents.push(agent);
  await agent.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
  await udp(agent.ports.statsd, 'page.views:1|c\npage.views:2|c|@0.5\nload:0.5|g\nlat:12|ms\nusers:ann|s');
  const line = await waitFor(
    () => backend.logs().find((l) => l.msg?.startsWith('metrics event accepted') && l.agent === name),
    { timeoutMs: 15000, what: 'backend log of the metrics event' },
  );
  assert.is(line.points, 2 + 1 + 10 + 1);
  assert.equal(line.handlers, ['influx', 'graphite']);
  const events = await backend.get(`/api/core/v2/namespaces/default/events/${name}`);
  assert.equal(
    events.body.map((e: any) => e.check.metadata.name),
    ['keepalive'],
    'metrics events are not stored',
  );
});

test('real backend: garbage datagrams are ignored and counted; good lines still flush', async () => {
  const name = fresh('statsd-junk');
  const agent = await startAgent({
    name,
    backendUrls: backend.agentUrl,
    extraArgs: ['--statsd-flush-interval', '1'],
  });
  agents.push(agent);
  await agent.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
  const port = agent.ports.statsd;
  for (const junk of [
    'garbage',
    ':1|c',
    'a:1|zz',
    'a:x|c',
    'a:1|c|@7',
    '\n\n\n',
    'a:1|c|#',
    '{"json": true}',
    'x'.repeat(60000),
  ])
    await udp(port, junk);
  await udp(port, Buffer.from([0xff, 0x00, 0x3a, 0x7c]));
  await udp(port, 'bad line\nok.metric:4|c\nanother bad|c');
  await agent.proc.waitForLine(
    (l) => l.includes('bad StatsD line ignored') && l.includes('"bad_lines":10'),
    15000,
  );
  const line = await waitFor(
    () => backend.logs().find((l) => l.msg?.startsWith('metrics event accepted') && l.agent === name),
    { timeoutMs: 15000, what: 'metrics event after the garbage' },
  );
  assert.is(line.points, 2, 'ok.metric.value and ok.metric.per_second');
  assert.ok(agent.proc.running);
});

test('the exact event: entity, no check, handlers, point names, values and tags', async () => {
  const port = await freePort();
  wss = new WebSocketServer({ port, host: '127.0.0.1' });
  wss.on('connection', (ws) => {
    ws.on('message', (data) => {
      const frame = decodeFrame(messageBytes(data as Buffer));
      if (frame.type !== 'event') return;
      const event = JSON.parse(frame.payload.toString('utf8'));
      received.push(event);
      ws.send(encodeFrame('ack', JSON.stringify({ id: event.id, ok: true })));
    });
  });
  const name = fresh('statsd-shape');
  const agent = await startAgent({
    name,
    backendUrls: `ws://127.0.0.1:${port}`,
    extraArgs: ['--statsd-flush-interval', '2', '--statsd-event-handlers', 'influx'],
  });
  agents.push(agent);
  await agent.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
  await udp(
    agent.ports.statsd,
    'hits:3|c|#env:prod,canary\nhits:1|c|@0.5|#canary,env:prod\ntemp:20|g\ntemp:+1.5|g\nlat:10|ms\nlat:30|h\nusers:a|s\nusers:b|s\nusers:a|s',
  );
  const ev = await waitFor(() => received.find((e) => e.metrics), {
    timeoutMs: 15000,
    what: 'metrics event',
  });
  assert.is(ev.check, undefined);
  assert.is(ev.entity.metadata.name, name);
  assert.type(ev.timestamp, 'number');
  assert.type(ev.id, 'string');
  assert.equal(ev.metrics.handlers, ['influx']);
  const points: any[] = ev.metrics.points;
  const val = (n: string) => points.find((p) => p.name === n)?.value;
  assert.is(val('hits.value'), 5);
  assert.is(val('hits.per_second'), 2.5);
  assert.equal(points.find((p) => p.name === 'hits.value').tags, [
    { name: 'env', value: 'prod' },
    { name: 'canary', value: '' },
  ]);
  assert.is(val('temp.value'), 21.5);
  assert.is(val('users.value'), 2);
  for (const [k, v] of Object.entries({
    min: 10,
    max: 30,
    count: 2,
    per_second: 1,
    mean: 20,
    median: 20,
    stddev: 10,
    sum: 40,
    sum_squares: 1000,
    percentile_90: 30,
  })) {
    assert.is(val(`lat.${k}`), v, `lat.${k}`);
  }
  assert.is(points.length, 2 + 1 + 1 + 10);
  assert.ok(points.every((p) => p.timestamp === ev.timestamp && Array.isArray(p.tags)));
  // An interval without data sends nothing.
  const count = received.filter((e) => e.metrics).length;
  await new Promise((r) => setTimeout(r, 4500));
  assert.is(received.filter((e) => e.metrics).length, count);
});

test('--statsd-disable: the port is free; a taken StatsD port stops the agent with code 2', async () => {
  const name = fresh('statsd-off');
  const off = await startAgent({ name, backendUrls: backend.agentUrl, extraArgs: ['--statsd-disable'] });
  agents.push(off);
  await off.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
  assert.not.ok(off.proc.lines().some((l) => l.includes('StatsD listener started')));
  // The disabled agent's StatsD port can be bound by someone else.
  const s = createSocket('udp4');
  await new Promise<void>((resolve, reject) => {
    s.once('error', reject);
    s.bind(off.ports.statsd, '127.0.0.1', () => resolve());
  });
  const clash = await startAgent({
    name: fresh('statsd-clash'),
    backendUrls: backend.agentUrl,
    ports: { api: await freePort(), socket: await freePort(), statsd: off.ports.statsd },
  });
  agents.push(clash);
  const exit = await waitFor(() => clash.proc.exit, { timeoutMs: 15000, what: 'clashing agent exit' });
  s.close();
  assert.is(exit.code, 2);
  assert.ok(
    clash.proc.lines().some((l) => /StatsD listener: cannot listen on 127\.0\.0\.1:\d+: EADDRINUSE/.test(l)),
    clash.proc.tail(10),
  );
});

test.run();
