// suite-timeout: 180
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { decodeFrame, encodeFrame, FrameError, jsonCodec, type FrameType } from '../../proto/frames.ts';
import { protobufCodec } from '../../proto/wire/codec.ts';
import { fuzz, jsonValue } from '../harness/fuzz.ts';

// Fuzzing the agent <-> backend frame decoder and both payload codecs in-process (issue 13): arbitrary
// bytes and mutated valid frames. Decoding either gives a frame / a value or throws a FrameError,
// nothing else.

const RUNS = 10_000;
const TYPES: FrameType[] = ['keepalive', 'event', 'check_request', 'entity_config', 'ack'];
const event = {
  id: '0f8e6f6c-3c1e-4b7f-9a57-2d5f1c0b9a11',
  timestamp: 1700000000,
  entity: { metadata: { name: 'web-01', namespace: 'default' }, subscriptions: ['linux'] },
  check: {
    metadata: { name: 'disk', namespace: 'default' },
    status: 1,
    output: 'x',
    history: [{ status: 0, executed: 1 }],
    hooks: [{ metadata: { name: 'h' }, command: 'true', status: 0, output: 'y' }],
  },
};
const VALID: Record<FrameType, unknown> = {
  keepalive: event,
  event,
  check_request: { config: { metadata: { name: 'disk' }, command: 'true', interval: 60 }, issued: 1 },
  entity_config: { metadata: { name: 'web-01' }, subscriptions: ['linux'] },
  ack: { id: 'abc', ok: false, code: 'invalid', message: 'no' },
};

/** Valid frames of both encodings, then bytes flipped, cut, or spliced in. */
const mutatedFrame = fc
  .tuple(
    fc.constantFrom(...TYPES),
    fc.boolean(),
    fc.array(fc.tuple(fc.nat(), fc.integer({ min: 0, max: 255 })), { maxLength: 8 }),
    fc.option(fc.nat()),
    fc.uint8Array({ maxLength: 16 }),
  )
  .map(([type, proto, flips, cut, extra]) => {
    const payload = (proto ? protobufCodec : jsonCodec).encode(VALID[type], type);
    const bytes = Buffer.from(encodeFrame(type, payload));
    for (const [at, b] of flips) if (bytes.length) bytes[at % bytes.length] = b;
    const cutBytes = cut === null ? bytes : bytes.subarray(0, cut % (bytes.length + 1));
    return Buffer.concat([cutBytes, Buffer.from(extra)]);
  });

const frames = fc.oneof(
  fc.uint8Array({ maxLength: 256 }).map((b) => Buffer.from(b)),
  fc
    .tuple(fc.constantFrom(...TYPES), fc.uint8Array({ maxLength: 256 }))
    .map(([t, b]) => Buffer.concat([Buffer.from(t + '\n'), b])),
  fc.tuple(fc.constantFrom(...TYPES), jsonValue()).map(([t, x]) => encodeFrame(t, JSON.stringify(x) ?? '')),
  mutatedFrame,
);

function decodeAll(bytes: Buffer, codec: typeof jsonCodec): void {
  let frame;
  try {
    frame = decodeFrame(bytes);
  } catch (err) {
    assert.instance(err, FrameError, `decodeFrame threw ${String(err)}`);
    return;
  }
  assert.ok(TYPES.includes(frame.type));
  try {
    codec.decode(frame.payload, frame.type);
  } catch (err) {
    assert.instance(err, FrameError, `${codec.contentType} decode threw ${String(err)}`);
  }
}

test('valid frames of both encodings decode to their values', () => {
  for (const type of TYPES) {
    const f = decodeFrame(encodeFrame(type, protobufCodec.encode(VALID[type], type)));
    assert.is(f.type, type);
    assert.type(protobufCodec.decode(f.payload, type), 'object');
    assert.equal(
      jsonCodec.decode(decodeFrame(encodeFrame(type, jsonCodec.encode(VALID[type]))).payload),
      VALID[type],
    );
  }
});

test(`JSON frames: ${RUNS.toLocaleString('en')} arbitrary and mutated frames decode or throw a FrameError`, async () => {
  await fuzz(
    'frames (JSON)',
    fc.property(frames, (b) => decodeAll(b, jsonCodec)),
    RUNS,
  );
});

test(`protobuf frames: ${RUNS.toLocaleString('en')} arbitrary and mutated frames decode or throw a FrameError`, async () => {
  await fuzz(
    'frames (protobuf)',
    fc.property(frames, (b) => decodeAll(b, protobufCodec)),
    RUNS,
  );
});

test.run();
