// suite-timeout: 240
import { randomUUID } from 'node:crypto';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import WebSocket from 'ws';
import { encodeFrame, jsonCodec, type FrameType, type PayloadCodec } from '../../proto/frames.ts';
import { protobufCodec } from '../../proto/wire/codec.ts';
import { startBackend, type Backend } from '../harness/index.ts';
import { fuzz, jsonValue, mutated } from '../harness/fuzz.ts';

// Fuzzing a real backend's agent port (issue 13, docs/compatibility.md#frames): arbitrary and mutated
// frames over an authenticated session, in both payload encodings. After each frame the session
// either still serves (a valid probe event sent after it is acknowledged) or has closed with a
// documented code (1007 a frame that does not decode, 1009 too big); frames go as binary or as text
// messages (the session reads both); then the next case opens a new
// session. The backend keeps serving. Per-case bound: 10 s for the probe's ack or the close.

const RUNS = 500;
const NAME = 'fz-ws-agent';

let backend: Backend;
const sockets: WebSocket[] = [];

test.before(async () => {
  backend = await startBackend({ name: 'fuzz-agent-ws' });
});

test.after(async () => {
  for (const ws of sockets) ws.terminate();
  await backend?.stop();
});

interface Session {
  ws: WebSocket;
  codec: PayloadCodec;
  acks: Map<string, unknown>;
  closed?: { code: number; reason: string };
  changed: () => void;
}

function open(codec: PayloadCodec): Promise<Session> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(backend.agentUrl, {
      headers: {
        'Monitor-Namespace': 'default',
        'Monitor-AgentName': NAME,
        'Monitor-Subscriptions': 'linux',
        Accept: codec.contentType,
        Authorization: 'Basic ' + Buffer.from('agent:P@ssw0rd!').toString('base64'),
      },
    });
    sockets.push(ws);
    const s: Session = { ws, codec, acks: new Map(), changed: () => {} };
    ws.on('message', (d: Buffer) => {
      const nl = d.indexOf(0x0a);
      if (d.subarray(0, nl).toString() === 'ack') {
        const ack = codec.decode(d.subarray(nl + 1), 'ack') as { id: string };
        s.acks.set(ack.id, ack);
        s.changed();
      }
    });
    ws.on('close', (code, reason) => {
      s.closed = { code, reason: reason.toString() };
      s.changed();
    });
    ws.on('open', () => resolve(s));
    ws.on('unexpected-response', (_req, res) => reject(new Error(`handshake refused: ${res.statusCode}`)));
    ws.on('error', () => {});
  });
}

/** Resolves once `done()` holds (checked at each ack or close), or fails after 10 s. */
function until(s: Session, done: () => boolean, what: string): Promise<void> {
  return new Promise((resolve, reject) => {
    if (done()) return resolve();
    const timer = setTimeout(() => reject(new Error(`no ${what} within 10 s`)), 10000);
    s.changed = () => {
      if (done()) {
        clearTimeout(timer);
        resolve();
      }
    };
  });
}

const event = () => ({
  id: randomUUID(),
  timestamp: Math.floor(Date.now() / 1000),
  entity: { metadata: { name: NAME, namespace: 'default' }, entity_class: 'agent', subscriptions: ['linux'] },
  check: { metadata: { name: 'fz-probe', namespace: 'default' }, status: 0, output: 'ok', interval: 60 },
});
const TYPES: FrameType[] = ['keepalive', 'event', 'check_request', 'entity_config', 'ack'];

/** What a case sends: arbitrary bytes, an arbitrary value, a mutated event, or a valid frame with bytes flipped. */
type Case = { bytes: Uint8Array } | { type: FrameType; value: unknown } | { flips: Array<[number, number]> };

const fuzzCase: fc.Arbitrary<Case> = fc.oneof(
  fc.uint8Array({ maxLength: 200 }).map((bytes) => ({ bytes })),
  fc
    .tuple(fc.constantFrom(...TYPES), fc.uint8Array({ maxLength: 200 }))
    .map(([t, b]) => ({ bytes: Buffer.concat([Buffer.from(t + '\n'), b]) })),
  fc.record({ type: fc.constantFrom<FrameType>('keepalive', 'event'), value: jsonValue() }),
  fc.record({ type: fc.constantFrom<FrameType>('keepalive', 'event'), value: mutated(event()) }),
  fc.record({
    flips: fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { minLength: 1, maxLength: 4 }),
  }),
);

function frameOf(c: Case, codec: PayloadCodec): Buffer {
  if ('bytes' in c) return Buffer.from(c.bytes);
  if ('type' in c) {
    const json = Buffer.from(JSON.stringify(c.value) ?? '');
    if (codec === jsonCodec) return encodeFrame(c.type, json);
    try {
      return encodeFrame(c.type, codec.encode(c.value, c.type));
    } catch {
      // A value protobuf cannot hold (a map where a list goes): its JSON text, as a protobuf payload.
      return encodeFrame(c.type, json);
    }
  }
  const b = Buffer.from(encodeFrame('event', codec.encode(event(), 'event')));
  for (const [at, x] of c.flips) b[at % b.length] = x;
  return b;
}

for (const codec of [jsonCodec, protobufCodec]) {
  test(`agent port (${codec.contentType}): ${RUNS} arbitrary and mutated frames are served or close the session with 1007/1009`, async () => {
    let s = await open(codec);
    let closes = 0;
    await fuzz(
      `agent port frames (${codec.contentType})`,
      fc.asyncProperty(fuzzCase, fc.boolean(), async (c, text) => {
        if (s.closed) s = await open(codec);
        const bytes = frameOf(c, codec);
        s.ws.send(bytes, { binary: !text });
        const probe = event();
        s.ws.send(encodeFrame('event', codec.encode(probe, 'event')));
        await until(s, () => !!s.closed || s.acks.has(probe.id), 'ack of the probe nor close');
        if (s.closed) {
          closes++;
          assert.ok(
            [1007, 1009].includes(s.closed.code),
            `close after ${bytes.toString('hex').slice(0, 200)}: ${s.closed.code} ${s.closed.reason}`,
          );
          assert.ok(s.closed.reason.length > 0, `the close ${s.closed.code} names its reason`);
        } else assert.is((s.acks.get(probe.id) as { ok: boolean }).ok, true, 'the probe is stored');
      }),
      RUNS,
    );
    s.ws.close();
    process.stdout.write(`${codec.contentType}: ${closes} of ${RUNS} frames closed the session\n`);
    assert.is((await backend.health()).status, 200, 'the backend still serves');
  });
}

test.run();
