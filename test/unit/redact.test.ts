import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { REDACTED, redactEntity, redactEventEntity, redactFields, redactJsonText } from '../../lib/redact.ts';
import { DEFAULT_REDACT } from '../../proto/schemas/entity.ts';

const entity = () => ({
  metadata: {
    name: 'web-01',
    namespace: 'default',
    labels: { region: 'eu', password: 'hunter2' },
    annotations: { API_KEY: 'k', note: 'n' },
  },
  entity_class: 'agent',
  system: { hostname: 'web-01', extra: { nested: { secret: 's', keep: 1 }, list: [{ passwd: 'p' }, 'x'] } },
  redact: undefined as string[] | undefined | null,
});

test('the default list hides labels, annotations and nested keys, case-insensitively', () => {
  const e = entity();
  const r = redactEntity(e);
  assert.is(r.metadata.labels.password, REDACTED);
  assert.is(r.metadata.labels.region, 'eu');
  assert.is(r.metadata.annotations.API_KEY, REDACTED);
  assert.is(r.metadata.annotations.note, 'n');
  assert.is(r.system.extra.nested.secret, REDACTED);
  assert.is(r.system.extra.nested.keep, 1);
  assert.equal(r.system.extra.list, [{ passwd: REDACTED }, 'x']);
  // The input is untouched: stored data keeps its values.
  assert.is(e.metadata.labels.password, 'hunter2');
  assert.is(e.system.extra.nested.secret, 's');
});

test('an entity with its own list hides only those fields; an empty list hides nothing', () => {
  const e = { ...entity(), redact: ['region'] };
  const r = redactEntity(e);
  assert.is(r.metadata.labels.region, REDACTED);
  assert.is(r.metadata.labels.password, 'hunter2');
  assert.equal(r.redact, ['region']);
  const none = { ...entity(), redact: [] };
  assert.is(redactEntity(none), none);
  assert.equal(redactFields({ redact: null }), DEFAULT_REDACT);
});

test('identity and the redact list itself stay visible', () => {
  const e = { ...entity(), redact: ['name', 'namespace', 'redact'] };
  const r = redactEntity(e);
  assert.is(r.metadata.name, 'web-01');
  assert.is(r.metadata.namespace, 'default');
  assert.equal(r.redact, ['name', 'namespace', 'redact']);
});

test('nothing to hide returns the same object', () => {
  const e = { metadata: { name: 'a', namespace: 'default', labels: { x: '1' } }, redact: ['token'] };
  assert.is(redactEntity(e), e);
});

test('an event has its entity redacted and the rest as stored', () => {
  const ev = { check: { metadata: { name: 'disk' }, output: 'password: shown' }, entity: entity() };
  const r = redactEventEntity(ev);
  assert.is(r.entity.metadata.labels.password, REDACTED);
  assert.is(r.check.output, 'password: shown');
  assert.is(redactEventEntity({ check: {} } as any).entity, undefined);
});

test('stored JSON text: unchanged when there is nothing to hide, redacted otherwise', () => {
  const clean = JSON.stringify({ metadata: { name: 'a', labels: { x: '1' } }, redact: ['password'] });
  assert.is(
    redactJsonText(clean, 'entity', () => JSON.parse(clean)),
    clean,
  );
  const dirty = JSON.stringify({ metadata: { name: 'a', labels: { Password: '1' } }, redact: ['password'] });
  assert.equal(JSON.parse(redactJsonText(dirty, 'entity', () => JSON.parse(dirty))).metadata.labels, {
    Password: REDACTED,
  });
  const custom = JSON.stringify({ metadata: { name: 'a', labels: { token: 't' } }, redact: ['token'] });
  assert.equal(JSON.parse(redactJsonText(custom, 'entity', () => JSON.parse(custom))).metadata.labels, {
    token: REDACTED,
  });
  // An event whose check also has a "redact" key: the entity's own list still applies.
  const ev = JSON.stringify({
    check: { redact: [] },
    entity: { metadata: { name: 'a', labels: { token: 't' } }, redact: ['token'] },
  });
  assert.equal(JSON.parse(redactJsonText(ev, 'event', () => JSON.parse(ev))).entity.metadata.labels, {
    token: REDACTED,
  });
  // A broken list falls back to parsing, never to showing.
  const odd = '{"metadata":{"name":"a","labels":{"x]":"1"}},"redact":["x]"]}';
  assert.equal(JSON.parse(redactJsonText(odd, 'entity', () => JSON.parse(odd))).metadata.labels, {
    'x]': REDACTED,
  });
});

test.run();
