// suite-timeout: 240
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { getJson, startAgent, startBackend, type AgentProc, type Backend } from '../harness/index.ts';
import { fuzz, jsonValue, mutated, statsdLine } from '../harness/fuzz.ts';

// Fuzzing a real agent's local inputs (issue 13, docs/compatibility.md#agent-local-inputs): POST
// /events bodies, TCP and UDP socket payloads and StatsD datagrams. Every input gets its documented
// answer (HTTP 202 or 400 {message}; TCP ok / invalid / pong / error, or a closed connection; UDP
// nothing) and the agent keeps running and answering. Per-case time bounds: the HTTP client's
// timeout and 10 s per TCP connection (the agent's own read timeout is 5 s).

const HTTP_RUNS = 2_000;
const TCP_RUNS = 1_500;
const UDP_RUNS = 1_500;
const STATSD_RUNS = 3_000;

let backend: Backend;
let agent: AgentProc;

test.before(async () => {
  backend = await startBackend({ name: 'fuzz-agent' });
  agent = await startAgent({ name: 'fuzz-agent', backendUrls: backend.agentUrl });
  await agent.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
});

test.after(async () => {
  await agent?.stop().catch(() => {});
  await backend?.stop();
});

/** Sends the payload, half-closes, and reads the answer until the agent closes. */
function tcp(port: number, payload: Buffer): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    sock.setTimeout(10000, () => {
      sock.destroy();
      reject(new Error(`no answer within 10 s; got "${answer}"`));
    });
    sock.on('data', (d) => {
      answer += d.toString();
    });
    sock.on('error', (err: NodeJS.ErrnoException) =>
      err.code === 'ECONNRESET' ? resolve(answer) : reject(err),
    );
    sock.on('close', () => resolve(answer));
    sock.on('end', () => sock.destroy());
    sock.on('connect', () => sock.end(payload));
  });
}

function udp(port: number, payload: Buffer): Promise<void> {
  return new Promise((resolve, reject) => {
    const s = createSocket('udp4');
    s.send(payload, port, '127.0.0.1', (err) => {
      s.close();
      if (err) reject(err);
      else resolve();
    });
  });
}

/** The agent is alive and answers on each of its inputs. */
async function stillAnswers(what: string): Promise<void> {
  assert.ok(agent.proc.running, `${what}: the agent is running (${JSON.stringify(agent.proc.exit)})`);
  const v = await getJson(`${agent.apiUrl}/version`);
  assert.is(v.status, 200, `${what}: GET /version`);
  assert.is(await tcp(agent.ports.socket, Buffer.from('ping')), 'pong', `${what}: the socket answers ping`);
}

const text = (valid: unknown) =>
  fc.oneof(
    fc.string({ maxLength: 60 }).map((s) => Buffer.from(s)),
    fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b)),
    jsonValue().map((x) => Buffer.from(JSON.stringify(x) ?? '')),
    mutated(valid).map((x) => Buffer.from(JSON.stringify(x) ?? '')),
    mutated(valid).map((x) => Buffer.from(JSON.stringify(x) ?? '')),
  );

test(`agent HTTP API: ${HTTP_RUNS.toLocaleString('en')} POST /events bodies are answered 202 or 400 {message}`, async () => {
  await fuzz(
    'agent API POST /events',
    fc.asyncProperty(
      text({ check: { metadata: { name: 'fz-api' }, status: 1, output: 'x' } }),
      async (body) => {
        const r = await getJson(`${agent.apiUrl}/events`, { method: 'POST', body });
        if (r.status === 202) return;
        assert.is(
          r.status,
          400,
          `answer to ${body.toString().slice(0, 200)}: ${r.status} ${JSON.stringify(r.body)}`,
        );
        assert.type(r.body?.message, 'string', `a JSON {message}: ${JSON.stringify(r.body)}`);
      },
    ),
    HTTP_RUNS,
  );
  await stillAnswers('after the HTTP API bodies');
});

const socketValid = { name: 'fz-socket', status: 1, output: 'x', source: 'fz-proxy', interval: 60 };

test(`agent TCP socket: ${TCP_RUNS.toLocaleString('en')} payloads are answered ok, invalid, pong or error, or closed`, async () => {
  await fuzz(
    'agent TCP socket',
    fc.asyncProperty(text(socketValid), async (payload) => {
      const answer = await tcp(agent.ports.socket, payload);
      assert.ok(
        ['', 'ok', 'invalid', 'pong', 'error'].includes(answer),
        `answer to ${JSON.stringify(payload.toString().slice(0, 200))}: "${answer.slice(0, 200)}"`,
      );
    }),
    TCP_RUNS,
  );
  await stillAnswers('after the TCP payloads');
});

test(`agent UDP socket: ${UDP_RUNS.toLocaleString('en')} datagrams leave the agent answering`, async () => {
  await fuzz(
    'agent UDP socket',
    fc.asyncProperty(text(socketValid), async (payload) => udp(agent.ports.socket, payload)),
    UDP_RUNS,
  );
  await stillAnswers('after the UDP datagrams');
});

test(`agent StatsD: ${STATSD_RUNS.toLocaleString('en')} datagrams of arbitrary lines leave the agent answering`, async () => {
  await fuzz(
    'agent StatsD',
    fc.asyncProperty(
      fc.oneof(
        fc.array(statsdLine, { minLength: 1, maxLength: 5 }).map((l) => Buffer.from(l.join('\n'))),
        fc.uint8Array({ maxLength: 100 }).map((b) => Buffer.from(b)),
      ),
      async (payload) => udp(agent.ports.statsd, payload),
    ),
    STATSD_RUNS,
  );
  await stillAnswers('after the StatsD datagrams');
});

test.run();
