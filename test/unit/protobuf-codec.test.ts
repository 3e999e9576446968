import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import {
  CONTENT_JSON,
  CONTENT_PROTOBUF,
  decodeFrame,
  encodeFrame,
  FrameError,
  jsonCodec,
} from '../../proto/frames.ts';
import { codecForAccept, codecForContentType, protobufCodec } from '../../proto/wire/codec.ts';
import { Event, KeepaliveEvent } from '../../proto/schemas/event.ts';

const entity = {
  metadata: { name: 'web-01', namespace: 'default', labels: { region: 'eu' }, annotations: { note: 'n' } },
  entity_class: 'agent' as const,
  system: {
    hostname: 'web-01',
    os: 'linux',
    arch: 'amd64',
    network: { interfaces: [{ name: 'lo', addresses: ['127.0.0.1/8'] }] },
  },
  subscriptions: ['linux', 'entity:web-01'],
  last_seen: 1763700000,
  deregister: true,
  deregistration: { handler: 'dereg' },
  user: 'agent',
  redact: ['password'],
  monitor_agent_version: '0.1.0',
  keepalive_handlers: ['keepalive'],
};

const roundTrip = (type: Parameters<typeof protobufCodec.encode>[1], value: unknown) =>
  protobufCodec.decode(decodeFrame(encodeFrame(type!, protobufCodec.encode(value, type))).payload, type);

test('a keepalive event survives the round trip and still validates', () => {
  const ka = {
    timestamp: 1763700001,
    id: '0b7e8c1a-4b6f-4d1e-9a3b-2c4d5e6f7a8b',
    sequence: 3,
    entity,
    check: {
      metadata: { name: 'keepalive', namespace: 'default' },
      interval: 20,
      timeout: 120,
      ttl: 0,
      handlers: ['keepalive'],
    },
    metadata: { namespace: 'default' },
  };
  const back = roundTrip('keepalive', ka) as any;
  assert.equal(back.entity, entity);
  assert.is(back.id, ka.id);
  assert.is(back.sequence, 3);
  assert.is(back.check.status, 0, 'a zero status comes back as 0, not absent');
  assert.ok(v.safeParse(KeepaliveEvent, back).success);
});

test('a check event keeps output, history, durations and large timestamps', () => {
  const ev = {
    timestamp: 1763700002,
    id: 'not-a-uuid',
    entity,
    check: {
      metadata: { name: 'disk', namespace: 'default', labels: { team: 'ops' } },
      command: 'check-disk',
      status: 2,
      output: 'full\n',
      duration: 0.25,
      executed: 1763700001,
      issued: 1763700000,
      history: [
        { status: 0, executed: 1 },
        { status: 2, executed: 2 },
      ],
      occurrences: 5,
      occurrences_watermark: 7,
      state: 'failing',
      handlers: ['slack'],
      ttl: -1,
      proxy_entity_name: 'router',
    },
    metrics: {
      handlers: ['influx'],
      points: [
        {
          name: 'disk.used',
          value: 91.5,
          timestamp: 1763700001000000000,
          tags: [{ name: 'mount', value: '/' }],
        },
      ],
    },
  };
  const back = roundTrip('event', ev) as any;
  assert.equal(back.check, ev.check);
  assert.is(back.id, 'not-a-uuid');
  assert.is(back.metrics.points[0].value, 91.5);
  assert.equal(back.metrics.points[0].tags, [{ name: 'mount', value: '/' }]);
  assert.ok(v.safeParse(Event, back).success);
});

test('entity_config, check_request and ack round trips', () => {
  const cfg = roundTrip('entity_config', entity) as any;
  assert.equal(cfg.metadata, entity.metadata);
  assert.equal(cfg.subscriptions, entity.subscriptions);
  assert.equal(cfg.redact, ['password']);
  assert.is(cfg.deregister, true);
  assert.equal(cfg.deregistration, { handler: 'dereg' });
  assert.is(cfg.system, undefined, 'EntityConfig carries no host facts');
  assert.equal(roundTrip('entity_config', { metadata: { name: 'not found' } }), {
    metadata: { name: 'not found' },
  });
  const req = {
    config: {
      metadata: { name: 'disk', namespace: 'default' },
      command: 'check-disk',
      interval: 60,
      subscriptions: ['linux'],
    },
    issued: 1763700000,
  };
  assert.equal(roundTrip('check_request', req), req);
  assert.equal(roundTrip('ack', { id: 'x', ok: true }), { id: 'x', ok: true });
  assert.equal(roundTrip('ack', { id: 'x', ok: false, code: 'invalid', message: 'no' }), {
    id: 'x',
    ok: false,
    code: 'invalid',
    message: 'no',
  });
});

test('garbage payloads are a FrameError, never a crash', () => {
  assert.throws(
    () => protobufCodec.decode(Buffer.from([0xff, 0xff, 0xff, 0xff, 0xff]), 'event'),
    (e: Error) => e instanceof FrameError,
  );
  assert.throws(
    () => protobufCodec.decode(Buffer.from('{"json": true}'), 'keepalive'),
    (e: Error) => e instanceof FrameError,
  );
  assert.throws(
    () => protobufCodec.decode(Buffer.from([1]), undefined),
    (e: Error) => e instanceof FrameError,
  );
});

test('negotiation: protobuf only for an Accept of exactly application/octet-stream', () => {
  assert.is(codecForAccept(CONTENT_PROTOBUF), protobufCodec);
  assert.is(codecForAccept(' Application/Octet-Stream '), protobufCodec);
  assert.is(codecForAccept(`${CONTENT_PROTOBUF}, ${CONTENT_JSON}`), jsonCodec);
  assert.is(codecForAccept(undefined), jsonCodec);
  assert.is(codecForContentType(`${CONTENT_PROTOBUF}; charset=binary`), protobufCodec);
  assert.is(codecForContentType(undefined), jsonCodec);
  assert.is(codecForContentType('text/plain'), undefined);
});

test.run();
