import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  legacyResultClient,
  legacyResultToCheck,
  validateLegacyResult,
  type LegacyResult,
} from '../../proto/legacy/results.ts';

// The legacy check-result rules (the reference's order, first failure's message, defaults first),
// and the check and client a valid result becomes.

const message = (obj: unknown) => {
  const r = validateLegacyResult(obj);
  return r.ok ? 'valid' : r.message;
};
const ok = { name: 'disk', output: 'fine' };

test('{} fails on the output first; a name and an output are enough (status 0 and executed now by default)', () => {
  assert.is(message({}), 'check output must be a string');
  const r = validateLegacyResult(ok);
  assert.ok(r.ok);
  if (!r.ok) return;
  assert.is(r.result.status, 0);
  assert.type(r.result.executed, 'number');
  assert.ok(Math.abs((r.result.executed as number) - Date.now() / 1000) < 5, 'executed is now');
});

test('non-objects are refused', () => {
  for (const x of [null, [], 'x', 3, true]) assert.is(validateLegacyResult(x).ok, false, JSON.stringify(x));
});

test('the rules in order: output, status, executed, name, handlers, aggregates, flap thresholds, truncation, source, ttl', () => {
  assert.is(message({ ...ok, output: 3 }), 'check output must be a string');
  assert.is(message({ ...ok, status: 1.5 }), 'check status must be an integer');
  assert.is(message({ ...ok, status: '1' }), 'check status must be an integer');
  assert.is(
    message({ ...ok, status: 1.5, name: 'a b' }),
    'check status must be an integer',
    'status before name',
  );
  assert.is(message({ ...ok, executed: 'now' }), 'check executed timestamp must be an integer');
  assert.is(message({ output: 'x' }), 'check name must be a string');
  assert.is(message({ ...ok, name: 'a b' }), 'check name cannot contain spaces or special characters');
  assert.is(message({ ...ok, name: 'disk\n' }), 'check name cannot contain spaces or special characters');
  assert.is(message({ ...ok, name: 'dïsk' }), 'check name cannot contain spaces or special characters');
  assert.is(message({ ...ok, handler: 1 }), 'check handler must be a string');
  assert.is(message({ ...ok, handlers: 'slack' }), 'check handlers must be an array');
  assert.is(message({ ...ok, handlers: ['a', 1] }), 'check handlers must each be a string');
  assert.is(message({ ...ok, aggregate: 'a b' }), 'check aggregate must be a string (name) or boolean');
  assert.is(message({ ...ok, aggregate: true }), 'valid');
  assert.is(message({ ...ok, aggregate: 'web:prod|x' }), 'valid');
  assert.is(
    message({ ...ok, aggregates: ['ok', 'not ok'] }),
    'check aggregates must be an array of strings (names)',
  );
  assert.is(message({ ...ok, low_flap_threshold: 5 }), 'check high flap threshold must be an integer');
  assert.is(message({ ...ok, high_flap_threshold: 5 }), 'check low flap threshold must be an integer');
  assert.is(
    message({ ...ok, low_flap_threshold: 5.5, high_flap_threshold: 20 }),
    'check low flap threshold must be an integer',
  );
  assert.is(message({ ...ok, low_flap_threshold: 5, high_flap_threshold: 20 }), 'valid');
  assert.is(message({ ...ok, truncate_output: 'yes' }), 'check truncate_output must be a boolean');
  assert.is(
    message({ ...ok, truncate_output_length: 0 }),
    'check truncate_output_length must be an integer greater than 0',
  );
  const badSource = 'check source cannot contain spaces, special characters, or invalid tokens';
  assert.is(message({ ...ok, source: '' }), badSource, 'an empty source is invalid');
  assert.is(message({ ...ok, source: 'a b' }), badSource);
  assert.is(message({ ...ok, source: 'switch-01' }), 'valid');
  assert.is(message({ ...ok, source: 'db-:::name:::' }), 'valid', 'a token form');
  assert.is(message({ ...ok, ttl: 0 }), 'check ttl must be greater than 0');
  assert.is(message({ ...ok, ttl: -5 }), 'check ttl must be greater than 0');
  assert.is(message({ ...ok, ttl: 'x' }), 'check ttl must be an integer');
  assert.is(message({ ...ok, ttl: 30, ttl_status: 'two' }), 'check ttl_status must be an integer');
  assert.is(message({ ...ok, ttl: 0, source: '' }), badSource, 'source before ttl');
});

test('status false or null takes the default 0, as the reference did', () => {
  assert.is(message({ ...ok, status: null }), 'valid');
  assert.is(message({ ...ok, status: false }), 'valid');
});

const valid = (obj: Record<string, unknown>): LegacyResult => {
  const r = validateLegacyResult(obj);
  if (!r.ok) throw new Error(r.message);
  return r.result;
};

test('the check of a result: name as metadata, handler folded into handlers, subscribers mapped, now, custom attributes kept', () => {
  const check = legacyResultToCheck(
    valid({
      ...ok,
      status: 2,
      handler: 'mail',
      handlers: ['slack', 'mail'],
      subscribers: ['client:web-01', 'linux'],
      executed: 1,
      issued: 2,
      source: 'switch-01',
      environment: 'prod',
      ttl: 2,
      ttl_status: 3,
    }),
    1700000000,
  )!;
  assert.equal(check.metadata, { name: 'disk' });
  assert.equal(check.handlers, ['mail', 'slack']);
  assert.equal(check.subscriptions, ['entity:web-01', 'linux']);
  assert.is(check.executed, 1700000000);
  assert.is(check.issued, 1700000000);
  assert.is(check.status, 2);
  assert.is(check.environment, 'prod');
  assert.is(check.ttl, 5, 'a ttl under our 5 s minimum is raised to it');
  assert.is(check.ttl_status, 3);
  assert.is(check.source, undefined, 'source names the client, it is not part of the check');
  assert.is(check.name, undefined);
});

test('a negative status is unknown (3); an interval of the wrong type makes no check', () => {
  assert.is(legacyResultToCheck(valid({ ...ok, status: -1 }), 1)!.status, 3);
  assert.is(legacyResultToCheck(valid({ ...ok, interval: 'often' }), 1), undefined);
});

test('the client of a result: source, else a valid client field, else the fallback', () => {
  assert.is(legacyResultClient(valid({ ...ok, source: 'sw-1', client: 'web' }), 'monitor-api'), 'sw-1');
  assert.is(legacyResultClient(valid({ ...ok, client: 'web-01' }), 'monitor-api'), 'web-01');
  assert.is(legacyResultClient(valid({ ...ok, client: 'web 01' }), 'monitor-api'), 'monitor-api');
  assert.is(legacyResultClient(valid({ ...ok, client: 7 }), 'monitor-api'), 'monitor-api');
  assert.is(legacyResultClient(valid(ok), 'monitor-api'), 'monitor-api');
});

test.run();
