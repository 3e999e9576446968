import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { decodeFrame, encodeFrame, FrameError, jsonCodec } from '../../proto/frames.ts';
import { decodeToken, encodeToken, eventKey, actorRecordKey, subjects } from '../../proto/names.ts';
import { KeepaliveEvent } from '../../proto/schemas/event.ts';
import { AgentHandshake } from '../../proto/schemas/handshake.ts';
import { decodeReply, encodeReply } from '../../actors/runtime/reply.ts';
import { ActorError } from '../../actors/runtime/types.ts';

test('frames round-trip type and payload', () => {
  const payload = jsonCodec.encode({ id: 'x', n: 1, s: 'line\nbreak' });
  const f = decodeFrame(encodeFrame('event', payload));
  assert.is(f.type, 'event');
  assert.equal(jsonCodec.decode(f.payload), { id: 'x', n: 1, s: 'line\nbreak' });
});

test('an empty payload is a valid frame', () => {
  const f = decodeFrame(encodeFrame('ack', Buffer.alloc(0)));
  assert.is(f.type, 'ack');
  assert.is(f.payload.length, 0);
});

test('garbage frames are refused with a clear error', () => {
  assert.throws(
    () => decodeFrame(Buffer.from('no newline at all')),
    (e: Error) => e instanceof FrameError && /no message type/.test(e.message),
  );
  assert.throws(
    () => decodeFrame(Buffer.from([0xff, 0xfe, 0x0a, 1, 2])),
    (e: Error) => e instanceof FrameError,
  );
  assert.throws(() => decodeFrame(Buffer.from('bogus\n{}')), /unknown message type "bogus"/);
  assert.throws(() => decodeFrame(Buffer.from('x'.repeat(1000) + '\n')), /no message type/);
  assert.throws(() => jsonCodec.decode(Buffer.from('{not json')), /malformed payload/);
});

test('token encoding is reversible and yields valid subject tokens and KV keys', () => {
  for (const s of [
    'web-01',
    'a.b.c',
    'x y',
    '*',
    '>',
    'ünïcödé',
    'a=b',
    '',
    'check:disk',
    'UPPER_lower-09',
  ]) {
    const t = encodeToken(s);
    assert.is(decodeToken(t), s, `round trip of ${JSON.stringify(s)}`);
    assert.ok(/^[-=_A-Za-z0-9]+$/.test(t), `token ${t}`);
  }
  assert.is(encodeToken('web-01'), 'web-01');
  assert.is(encodeToken('a.b'), 'a=2Eb');
});

test('keys and subjects put the shard first and escape names', () => {
  assert.is(actorRecordKey(7, ['default', 'web.01']), '007.default.web=2E01');
  assert.is(eventKey('default', 'web.01', 'check-disk'), 'default.web=2E01.check-disk');
  assert.is(subjects.actorShard(42), 'monitor.actor.042');
  assert.is(subjects.agent('default', 'a b'), 'monitor.agent.default.a=20b');
});

test('actor replies round-trip values and errors', () => {
  assert.equal(decodeReply(encodeReply({ value: { a: 1 } })), { a: 1 });
  assert.throws(
    () => decodeReply(encodeReply({ error: new ActorError('not_found', 'nope') })),
    (e: Error) => e instanceof ActorError && e.code === 'not_found' && e.message === 'nope',
  );
  assert.throws(() => decodeReply(Buffer.from('garbage')), /malformed actor reply/);
});

test('keepalive schema accepts an agent keepalive and refuses bad ones', () => {
  const good = {
    timestamp: 1,
    id: 'i',
    entity: { metadata: { name: 'a', namespace: 'default' }, subscriptions: ['x'] },
    check: { metadata: { name: 'keepalive' }, interval: 20, timeout: 120, ttl: 0 },
  };
  assert.ok(v.safeParse(KeepaliveEvent, good).success);
  assert.not.ok(v.safeParse(KeepaliveEvent, { ...good, entity: undefined }).success);
  assert.not.ok(v.safeParse(KeepaliveEvent, { ...good, check: { ...good.check, timeout: 2 } }).success);
  assert.not.ok(v.safeParse(KeepaliveEvent, { ...good, check: { ...good.check, interval: 'soon' } }).success);
  assert.not.ok(v.safeParse(KeepaliveEvent, 'a string').success);
});

test('handshake schema names the missing header and splits subscriptions', () => {
  const ok = v.safeParse(AgentHandshake, {
    namespace: 'default',
    agentName: 'web-01',
    subscriptions: 'linux, web,,',
  });
  assert.ok(ok.success);
  if (ok.success) assert.equal(ok.output.subscriptions, ['linux', 'web']);
  // The gateway always passes every header key, present or not.
  const missing = v.safeParse(AgentHandshake, {
    namespace: 'default',
    agentName: undefined,
    user: undefined,
    subscriptions: undefined,
  });
  assert.not.ok(missing.success);
  if (!missing.success) assert.match(missing.issues[0]!.message, /Monitor-AgentName/);
  assert.not.ok(v.safeParse(AgentHandshake, { namespace: 'default', agentName: 'bad name!' }).success);
});

test.run();
