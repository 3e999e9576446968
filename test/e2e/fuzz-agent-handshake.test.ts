// suite-timeout: 240
import { randomBytes } from 'node:crypto';
import { connect, type Socket } from 'node:net';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import WebSocket from 'ws';
import { startBackend, type Backend } from '../harness/index.ts';
import { isError } from '../harness/api.ts';
import { fuzz } from '../harness/fuzz.ts';

// Fuzzing a real backend's agent port at the WebSocket upgrade (issue 13,
// docs/compatibility.md#handshake): requests whose handshake headers (credentials, namespace, agent
// name, user, subscriptions, capabilities, encodings, the WebSocket headers themselves) are deleted,
// replaced, repeated or made of arbitrary bytes, sent as raw HTTP so that any byte can be. Each is
// either upgraded (then a close frame is answered with one and the connection ends) or refused with a
// 4xx and the JSON error body: never a 5xx, never a connection closed without an answer. A well-formed
// agent still connects afterwards. Per-case bound: 10 s for the whole exchange.

const RUNS = 2_000;
const AGENT_AUTH = `Basic ${Buffer.from('agent:P@ssw0rd!').toString('base64')}`;
/** A user the backend knows that may not create events: its handshakes are the 403s. */
const VIEWER = { username: 'fz-viewer', password: 'fz-P@ssw0rd' };

let backend: Backend;
const sockets = new Set<Socket>();

test.before(async () => {
  // Failed handshakes would block the agent user's name and the loopback address after a few, and
  // every later handshake would be a 429 before its password is checked, well-formed ones included.
  // The limits have their own suite (login-limits.test.ts).
  backend = await startBackend({
    name: 'fuzz-agent-handshake',
    extraArgs: ['--login-user-failures', '0', '--login-address-failures', '0'],
  });
  const r = await backend.get('/api/core/v2/users', { method: 'POST', body: VIEWER });
  assert.is(r.status, 201, `POST /users: ${JSON.stringify(r.body)}`);
});

test.after(async () => {
  for (const s of sockets) s.destroy();
  await backend?.stop();
});

const b64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');
const VALID: Array<[string, string]> = [
  ['Connection', 'Upgrade'],
  ['Upgrade', 'websocket'],
  ['Sec-WebSocket-Version', '13'],
  ['Sec-WebSocket-Key', b64(randomBytes(16))],
  ['Monitor-Namespace', 'default'],
  ['Monitor-AgentName', 'fz-handshake'],
  ['Monitor-User', 'agent'],
  ['Monitor-Subscriptions', 'linux,fz'],
  ['Monitor-Capabilities', 'ack-retry'],
  ['Accept', 'application/json'],
  ['Authorization', AGENT_AUTH],
];

/** Text a header value may hold: visible ASCII, space, tab and obs-text (0x80-0xff). */
const fieldText = (maxLength: number) =>
  fc.string({
    unit: fc
      .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9))
      .map((c) => String.fromCharCode(c)),
    maxLength,
  });
/** Any byte but CR and LF (which would end the line): control bytes the HTTP parser refuses too. */
const anyBytes = fc.string({
  unit: fc
    .integer({ min: 0, max: 0xff })
    .filter((c) => c !== 10 && c !== 13)
    .map((c) => String.fromCharCode(c)),
  maxLength: 30,
});
const anyValue = fc.oneof(
  { weight: 6, arbitrary: fieldText(40) },
  { weight: 2, arbitrary: anyBytes },
  // Past the parser's header limit (16 KiB).
  { weight: 1, arbitrary: fc.constant('x'.repeat(20_000)) },
);
const name = fc.oneof(
  fc.constantFrom('default', 'fz-nowhere', 'fz-handshake', '', ' ', 'n'.repeat(254)),
  fc.stringMatching(/^[A-Za-z0-9_.:-]{1,30}$/),
  fieldText(30),
);
const list = (item: fc.Arbitrary<string>) => fc.array(item, { maxLength: 5 }).map((a) => a.join(','));
const password = fc.oneof(
  fc.string({ maxLength: 12 }),
  fc
    .tuple(fc.nat({ max: 9 }), fc.string({ maxLength: 2 }))
    .map(([at, add]) => `P@ssw0rd!`.slice(0, at) + add + `P@ssw0rd!`.slice(at + 1)),
);
// Right ones (an upgrade, or a 403 for the viewer), wrong ones (each costs the backend a password
// hash), and text that is no user:password pair.
const credentials = fc.oneof(
  { weight: 2, arbitrary: fc.constantFrom('agent:P@ssw0rd!', `${VIEWER.username}:${VIEWER.password}`) },
  {
    weight: 2,
    arbitrary: fc
      .tuple(fc.constantFrom('agent', VIEWER.username, 'admin', 'fz-nobody'), password)
      .map(([u, p]) => `${u}:${p}`),
  },
  { weight: 1, arbitrary: fc.string({ maxLength: 20 }) },
);

/** The headers fuzzed, each with values shaped for it (and arbitrary ones besides). */
const HEADERS: Array<[string, fc.Arbitrary<string>]> = [
  [
    'Authorization',
    fc.oneof(
      credentials.map((c) => `Basic ${b64(c)}`),
      fc.uint8Array({ maxLength: 40 }).map((b) => `Basic ${b64(b)}`),
      fieldText(40).map((t) => `Basic ${t}`),
      fc.constantFrom('Basic', 'Basic ', `basic ${AGENT_AUTH.slice(6)}`, 'Bearer x', 'Key y'),
    ),
  ],
  ['Monitor-Namespace', name],
  ['Monitor-AgentName', name],
  ['Monitor-User', name],
  ['Monitor-Subscriptions', list(fc.oneof(name, fc.constant('s'.repeat(254))))],
  [
    'Monitor-Capabilities',
    fc.oneof(list(fc.oneof(fc.constant('ack-retry'), name)), fc.constant('c'.repeat(1025))),
  ],
  [
    'Accept',
    fc.constantFrom(
      'application/json',
      'application/octet-stream',
      'application/x-protobuf',
      '*/*',
      'text/plain;q=0.5, application/octet-stream',
      '',
    ),
  ],
  ['Content-Type', fc.constantFrom('application/json', 'application/octet-stream', 'text/plain', '')],
  ['Sec-WebSocket-Protocol', list(fc.oneof(fc.constantFrom('monitor', 'v1', '', ' ', 'a b', '"x"'), name))],
  [
    'Sec-WebSocket-Extensions',
    fc.constantFrom('permessage-deflate', 'permessage-deflate; client_max_window_bits', 'x; y=', ';;'),
  ],
  [
    'Sec-WebSocket-Key',
    fc.oneof(fc.uint8Array({ maxLength: 20 }).map(b64), fc.base64String({ maxLength: 30 })),
  ],
  ['Sec-WebSocket-Version', fc.constantFrom('13', '8', '12', '', '14, 13', '013')],
  ['Upgrade', fc.constantFrom('websocket', 'WebSocket', 'h2c', '', 'websocket, h2c')],
  ['Connection', fc.constantFrom('Upgrade', 'keep-alive, Upgrade', 'close', '', 'upgrade, close')],
];

interface Edit {
  name: string;
  how: 'delete' | 'set' | 'add';
  value: string;
}
const edit: fc.Arbitrary<Edit> = fc.oneof(
  {
    weight: 9,
    arbitrary: fc.constantFrom(...HEADERS).chain(([n, value]) =>
      fc.record({
        name: fc.constant(n),
        how: fc.constantFrom<Edit['how']>('delete', 'set', 'set', 'add'),
        value: fc.oneof({ weight: 3, arbitrary: value }, { weight: 1, arbitrary: anyValue }),
      }),
    ),
  },
  // A header of any name: a token, or bytes no header name may hold.
  {
    weight: 1,
    arbitrary: fc.record({
      name: fc.oneof(fc.stringMatching(/^[A-Za-z0-9-]{1,12}$/), fieldText(8)),
      how: fc.constant<Edit['how']>('add'),
      value: anyValue,
    }),
  },
);
const fuzzCase = fc.record({
  method: fc.oneof(
    { weight: 19, arbitrary: fc.constant('GET') },
    { weight: 1, arbitrary: fc.constantFrom('POST', 'PUT', 'DELETE', 'OPTIONS') },
  ),
  path: fc.oneof(
    { weight: 19, arbitrary: fc.constant('/') },
    { weight: 1, arbitrary: fc.constantFrom('/x', '/?a=b', '//', '/%00') },
  ),
  edits: fc.array(edit, { maxLength: 4 }),
});
type Case = typeof fuzzCase extends fc.Arbitrary<infer C> ? C : never;

function requestOf(c: Case): Buffer {
  let headers: Array<[string, string]> = [['Host', `127.0.0.1:${backend.agentPort}`], ...VALID];
  for (const e of c.edits) {
    const same = (h: [string, string]) => h[0].toLowerCase() === e.name.toLowerCase();
    if (e.how === 'delete') headers = headers.filter((h) => !same(h));
    else if (e.how === 'set' && headers.some(same))
      headers = headers.map((h): [string, string] => (same(h) ? [h[0], e.value] : h));
    else headers.push([e.name, e.value]);
  }
  const head = `${c.method} ${c.path} HTTP/1.1\r\n${headers.map(([n, v]) => `${n}: ${v}\r\n`).join('')}\r\n`;
  return Buffer.from(head, 'latin1');
}

/** A client's close frame, code 1000 (masked, as a client's must be). */
function closeFrame(): Buffer {
  const mask = randomBytes(4);
  const payload = Buffer.from([0x03, 0xe8]).map((b, i) => b ^ mask[i]!);
  return Buffer.concat([Buffer.from([0x88, 0x80 | 2]), mask, payload]);
}

/** The code of the first close frame among a server's frames (unmasked), if one came whole. */
function closeCodeIn(buf: Buffer): number | undefined {
  let at = 0;
  while (buf.length - at >= 2) {
    const opcode = buf[at]! & 0x0f;
    let len = buf[at + 1]! & 0x7f;
    let start = at + 2;
    if (len === 126) {
      if (buf.length < at + 4) return undefined;
      len = buf.readUInt16BE(at + 2);
      start = at + 4;
    } else if (len === 127) {
      if (buf.length < at + 10) return undefined;
      len = Number(buf.readBigUInt64BE(at + 2));
      start = at + 10;
    }
    if (buf.length < start + len) return undefined;
    if (opcode === 8) return len >= 2 ? buf.readUInt16BE(start) : 1005;
    at = start + len;
  }
  return undefined;
}

/** A chunked body's bytes, once its last chunk has come. */
function dechunk(b: Buffer): Buffer | undefined {
  const parts: Buffer[] = [];
  for (let at = 0; ;) {
    const nl = b.indexOf('\r\n', at);
    if (nl < 0) return undefined;
    const size = parseInt(b.subarray(at, nl).toString('latin1'), 16);
    if (Number.isNaN(size) || b.length < nl + 2 + size + 2) return undefined;
    if (size === 0) return Buffer.concat(parts);
    parts.push(b.subarray(nl + 2, nl + 2 + size));
    at = nl + 2 + size + 2;
  }
}

interface Answer {
  status: number;
  head: string;
  body: string;
  /** After a 101: the code of the server's close frame. */
  closed?: number;
}

/**
 * Sends a raw upgrade request and reads the answer: a refusal's head and body (to its Content-Length,
 * or the end of the connection), or after a 101, our close frame's echo and the end of the
 * connection. Fails on a connection that ends before an answer's head, and after 10 s.
 */
function exchange(request: Buffer): Promise<Answer> {
  return new Promise((resolve, reject) => {
    const sock = connect({ port: backend.agentPort, host: '127.0.0.1' });
    sockets.add(sock);
    let buf = Buffer.alloc(0);
    let answer: Answer | undefined;
    let length: number | undefined;
    let chunked = false;
    const finish = (err?: Error) => {
      clearTimeout(timer);
      sockets.delete(sock);
      sock.destroy();
      if (err) reject(err);
      else resolve(answer!);
    };
    const timer = setTimeout(
      () => finish(new Error(`no whole answer within 10 s; got ${JSON.stringify(buf.toString('latin1'))}`)),
      10000,
    );
    sock.on('data', (d: Buffer) => {
      buf = Buffer.concat([buf, d]);
      if (!answer) {
        const end = buf.indexOf('\r\n\r\n');
        if (end < 0) return;
        const head = buf.subarray(0, end).toString('latin1');
        const status = /^HTTP\/1\.1 (\d{3}) /.exec(head);
        if (!status) return finish(new Error(`not an HTTP answer: ${JSON.stringify(head)}`));
        answer = { status: Number(status[1]), head, body: '' };
        const cl = /\r\ncontent-length: *(\d+)/i.exec(head);
        length = cl ? Number(cl[1]) : undefined;
        chunked = /\r\ntransfer-encoding: *chunked/i.test(head);
        buf = buf.subarray(end + 4);
        if (answer.status === 101) sock.write(closeFrame());
      }
      if (answer.status === 101) answer.closed ??= closeCodeIn(buf);
      else {
        // A 426 (no upgrade asked) may leave the connection open for more requests.
        const body = chunked ? dechunk(buf) : length === undefined || buf.length >= length ? buf : undefined;
        answer.body = (body ?? buf).toString('utf8');
        if (body && (chunked || length !== undefined)) finish();
      }
    });
    sock.on('error', () => {}); // a reset shows as a close without an answer
    sock.on('close', () =>
      answer
        ? finish()
        : finish(
            new Error(
              `the connection closed without an answer; got ${JSON.stringify(buf.toString('latin1'))}`,
            ),
          ),
    );
    sock.on('connect', () => sock.write(request));
  });
}

test(`agent port: ${RUNS.toLocaleString('en')} upgrade requests with fuzzed handshake headers are upgraded (and close cleanly) or refused with a 4xx {message, code}`, async () => {
  const statuses = new Map<number, number>();
  await fuzz(
    'agent handshake headers',
    fc.asyncProperty(fuzzCase, async (c) => {
      const request = requestOf(c);
      const what = JSON.stringify(request.toString('latin1')).slice(0, 600);
      const a = await exchange(request);
      statuses.set(a.status, (statuses.get(a.status) ?? 0) + 1);
      if (a.status === 101) {
        assert.is(a.closed, 1000, `${what}: upgraded, our close frame is answered with one`);
        return;
      }
      let body: unknown = a.body;
      try {
        body = JSON.parse(a.body);
      } catch {
        /* isError names the text */
      }
      assert.ok(a.status >= 400 && a.status < 500, `${what}: 101 or a 4xx, got ${a.head}`);
      isError({ status: a.status, headers: new Headers(), body }, a.status, `${what} (${a.head})`);
    }),
    RUNS,
  );
  const seen = [...statuses].sort(([x], [y]) => x - y).map(([s, n]) => `${s}: ${n}`);
  process.stdout.write(`answers: ${seen.join(', ')}\n`);
});

test('after the fuzzing: the backend serves and a well-formed agent connects', async () => {
  assert.is((await backend.health()).status, 200, 'the backend still serves');
  const ws = new WebSocket(backend.agentUrl, { headers: Object.fromEntries(VALID.slice(4)) });
  const opened = await new Promise<boolean>((resolve) => {
    ws.on('open', () => resolve(true));
    ws.on('unexpected-response', (_req, res) => {
      process.stderr.write(`handshake refused: ${res.statusCode}\n`);
      resolve(false);
    });
    ws.on('error', () => resolve(false));
  });
  assert.ok(opened, 'the agent connects');
  const closed = new Promise<number>((resolve) => ws.on('close', (code) => resolve(code)));
  ws.close(1000);
  assert.is(await closed, 1000, 'and closes cleanly');
});

test.run();
