// suite-timeout: 240
import { createSocket } from 'node:dgram';
import { connect } from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { startBackend, startLegacyClient, waitFor, type Backend } from '../harness/index.ts';
import { bodyText, fuzz } from '../harness/fuzz.ts';

// Fuzzing a legacy client's sockets (docs/compatibility.md#the-tcp-and-udp-socket): arbitrary,
// mutated and shadowed results and arrays of them, and raw bytes, on TCP (every answer is one of the
// protocol's words, within the watchdog), UDP (never answered) and the HTTP socket (every status one
// the table lists, every body JSON); arbitrary paths, methods and content types. Afterwards the agent
// is still alive and a valid result still reaches the backend.

const TCP_RUNS = 600;
const UDP_RUNS = 300;
const HTTP_RUNS = 600;
const PATH_RUNS = 300;

let backend: Backend;
type Client = Awaited<ReturnType<typeof startLegacyClient>>;
let client: Client;

const VALID = { name: 'fz-check', output: 'fine', status: 1, source: 'fz-proxy', ttl: 60, handlers: ['a'] };

test.before(async () => {
  backend = await startBackend({ name: 'fuzz-legacy-client', logLevel: 'warn' });
  client = await startLegacyClient({
    name: 'fz-client',
    backendUrls: backend.agentUrl,
    logLevel: 'warn',
    client: { http_socket: { user: 'u', password: 'p' } },
  });
  await waitFor(async () => (await fetch(`${client.httpUrl}/brew`).catch(() => undefined))?.status === 418, {
    timeoutMs: 20_000,
    what: 'the HTTP socket',
  });
});

test.after(async () => {
  await client?.stop().catch(() => {});
  await backend?.stop();
});

/** Writes `data` in one go, closes our side, and reads the answer until the agent closes. */
function tcp(data: Buffer | string): Promise<string> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port: client.socketPort, host: '127.0.0.1', allowHalfOpen: true });
    let answer = '';
    sock.setTimeout(10_000, () => {
      sock.destroy();
      reject(new Error(`no answer within 10 s; got "${answer}"`));
    });
    sock.on('data', (d) => (answer += d.toString()));
    sock.on('error', reject);
    sock.on('close', () => resolve(answer));
    sock.on('connect', () => sock.end(data));
  });
}

/** A message as a sender may write it: a body, an array of bodies, or raw bytes. */
const message: fc.Arbitrary<Buffer | string> = fc.oneof(
  { weight: 4, arbitrary: bodyText(VALID) },
  {
    weight: 2,
    arbitrary: fc.array(bodyText(VALID), { maxLength: 4 }).map((bodies) => `[${bodies.join(',')}]`),
  },
  { weight: 1, arbitrary: fc.uint8Array({ maxLength: 64 }).map((b) => Buffer.from(b)) },
  { weight: 1, arbitrary: bodyText(VALID).map((b) => b.slice(0, Math.max(0, b.length - 3))) },
);

test('TCP: every message is answered ok, invalid, pong or error (an empty one not at all), and the connection closed', async () => {
  await fuzz(
    'legacy client TCP socket',
    fc.asyncProperty(message, async (m) => {
      const answer = await tcp(m);
      // A connection that sent nothing is closed without a word, as the legacy socket did.
      const words = m.length === 0 ? [''] : ['ok', 'invalid', 'pong', 'error'];
      assert.ok(words.includes(answer), `answer "${answer}" to ${String(m)}`);
    }),
    TCP_RUNS,
  );
});

test('UDP: no datagram is ever answered', async () => {
  const s = createSocket('udp4');
  const answers: string[] = [];
  s.on('message', (m) => answers.push(m.toString()));
  await new Promise<void>((r) => s.bind(0, '127.0.0.1', r));
  try {
    await fuzz(
      'legacy client UDP socket',
      fc.asyncProperty(message, async (m) => {
        await new Promise<void>((resolve, reject) =>
          s.send(m, client.socketPort, '127.0.0.1', (err) => (err ? reject(err) : resolve())),
        );
      }),
      UDP_RUNS,
    );
    await new Promise((r) => setTimeout(r, 500));
    assert.equal(answers, []);
  } finally {
    s.close();
  }
});

/** Statuses the HTTP socket answers with (docs/compatibility.md#the-http-socket). */
const LAWFUL = [200, 202, 400, 401, 404, 405, 413, 415, 418, 500];

async function lawfulHttp(r: Response, what: string): Promise<void> {
  const text = await r.text();
  assert.ok(LAWFUL.includes(r.status), `${what}: status ${r.status} ${text}`);
  if (r.status === 500) assert.match(text, /check result not queued/, `${what}: a 500 only when not queued`);
  assert.is(r.headers.get('content-type')?.split(';')[0], 'application/json', what);
  JSON.parse(text);
}

test('HTTP POST /results: lawful statuses, JSON bodies, whatever the body and content type', async () => {
  await fuzz(
    'legacy client HTTP results',
    fc.asyncProperty(
      message,
      fc.constantFrom(
        'application/json',
        'application/json; charset=utf-8',
        'text/plain',
        '',
        'APPLICATION/JSON',
      ),
      async (m, type) => {
        const r = await fetch(`${client.httpUrl}/results`, {
          method: 'POST',
          body: m,
          headers: type ? { 'content-type': type } : {},
          signal: AbortSignal.timeout(10_000),
        });
        await lawfulHttp(r, `POST /results (${type}) ${String(m)}`);
      },
    ),
    HTTP_RUNS,
  );
});

test('HTTP: arbitrary paths, methods and queries get lawful answers', async () => {
  const segment = fc.oneof(
    fc.constantFrom('info', 'results', 'settings', 'brew', '', '..', '%2e%2e', 'info?redacted=false'),
    fc.string({ maxLength: 8 }).map(encodeURIComponent),
  );
  await fuzz(
    'legacy client HTTP paths',
    fc.asyncProperty(
      fc.array(segment, { minLength: 1, maxLength: 3 }),
      fc.constantFrom('GET', 'POST', 'PUT', 'DELETE', 'PATCH', 'OPTIONS', 'HEAD'),
      fc.option(fc.constantFrom('Basic dTpw', 'Basic !!', 'Bearer x', 'Basic '), { nil: undefined }),
      async (parts, method, authorization) => {
        const r = await fetch(`${client.httpUrl}/${parts.join('/')}`, {
          method,
          headers: authorization ? { authorization } : {},
          signal: AbortSignal.timeout(10_000),
        });
        if (method === 'HEAD') {
          assert.ok(LAWFUL.includes(r.status), `HEAD ${parts.join('/')}: ${r.status}`);
          return;
        }
        await lawfulHttp(r, `${method} /${parts.join('/')}`);
      },
    ),
    PATH_RUNS,
  );
});

test('after the fuzzing the agent is alive and a valid result still reaches the backend', async () => {
  assert.ok(client.proc.running, 'the agent is still running');
  assert.is(await tcp(JSON.stringify({ name: 'after-fuzz', output: 'still here', status: 2 })), 'ok');
  await waitFor(
    async () =>
      (await backend.get('/api/core/v2/namespaces/default/events/fz-client/after-fuzz')).body?.check,
    { timeoutMs: 30_000, what: 'the result sent after the fuzzing' },
  );
});

test.run();
