import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeFrame, ENTITY_NOT_FOUND, jsonCodec } from '../../proto/frames.ts';
import { protobufCodec } from '../../proto/wire/codec.ts';
import {
  checkRequestFrame,
  effectiveSubscriptions,
  subscriptionsOfEntityConfig,
} from '../../gateway/agents/subscriptions.ts';
import type { CheckRequest } from '../../proto/schemas/check-request.ts';

test('effective subscriptions: always entity:<name>, no duplicates, no empty names', () => {
  assert.equal(effectiveSubscriptions('web-1', ['linux', 'linux', '', 'entity:web-1']), [
    'linux',
    'entity:web-1',
  ]);
  assert.equal(effectiveSubscriptions('web-1', undefined), ['entity:web-1']);
  assert.equal(effectiveSubscriptions('web-1', null), ['entity:web-1']);
});

test('entity_config payloads: a stored entity gives its subscriptions; "not found" and garbage give none', () => {
  assert.equal(
    subscriptionsOfEntityConfig({
      metadata: { name: 'web-1', namespace: 'default' },
      entity_class: 'agent',
      subscriptions: ['db'],
    }),
    ['db'],
  );
  assert.equal(
    subscriptionsOfEntityConfig({ metadata: { name: 'web-1', namespace: 'default' }, entity_class: 'agent' }),
    [],
  );
  assert.is(subscriptionsOfEntityConfig(ENTITY_NOT_FOUND), undefined);
  assert.is(subscriptionsOfEntityConfig('nope'), undefined);
  assert.is(subscriptionsOfEntityConfig({ metadata: { name: 'x' }, subscriptions: 'db' }), undefined);
});

test('a check_request frame is encoded once per request and codec, and decodes back', () => {
  const req: CheckRequest = {
    config: { metadata: { name: 'disk', namespace: 'default' }, command: 'check-disk', interval: 60 },
    issued: 1700000000,
  };
  const json = checkRequestFrame(req, jsonCodec);
  assert.is(checkRequestFrame(req, jsonCodec), json, 'cached per codec');
  const f = decodeFrame(json);
  assert.is(f.type, 'check_request');
  assert.equal(jsonCodec.decode(f.payload, 'check_request'), req);
  const pb = checkRequestFrame(req, protobufCodec);
  assert.is.not(pb, json);
  const back = protobufCodec.decode(decodeFrame(pb).payload, 'check_request') as CheckRequest;
  assert.is(back.config.command, 'check-disk');
  assert.is(back.issued, 1700000000);
});

test.run();
