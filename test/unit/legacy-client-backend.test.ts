import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  HISTORY_LENGTH,
  isFlapping,
  legacyTotalStateChange,
  mergeCheck,
  totalStateChange,
} from '../../actors/entity/check-state.ts';
import {
  LEGACY_API_USER,
  legacyDeregistrationCheck,
  legacyOkOutput,
  legacyRegistrationCheck,
  legacySilentOutput,
  truncatedOutput,
} from '../../actors/entity/legacy-client.ts';
import { deregistrationEvent } from '../../actors/entity/deregistration.ts';
import { registrationEvent } from '../../actors/entity/registration.ts';
import { cloudvmLookup } from '../../actors/entity/cloudvm.ts';
import { LEGACY_USER } from '../../gateway/legacy/entities.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Check } from '../../proto/schemas/event.ts';

const hist = (statuses: number[]) => statuses.map((status, i) => ({ status, executed: 1000 + i }));

test('legacy total_state_change: the reference vectors (101, 0, 6, 4, 14)', () => {
  assert.is(legacyTotalStateChange(hist(Array.from({ length: 21 }, (_, i) => i % 2))), 101);
  assert.is(legacyTotalStateChange(hist(Array(21).fill(2))), 0);
  assert.is(legacyTotalStateChange(hist([...Array(20).fill(0), 1])), 6);
  assert.is(legacyTotalStateChange(hist([0, 1, ...Array(19).fill(1)])), 4);
  assert.is(legacyTotalStateChange(hist([0, 3, 3, 3, 3, 3, 3, ...Array(13).fill(0), 1])), 14);
});

test('legacy total_state_change is 0 until the history is full, and differs from the current one', () => {
  assert.is(legacyTotalStateChange(hist(Array.from({ length: 20 }, (_, i) => i % 2))), 0);
  const alternating = hist(Array.from({ length: HISTORY_LENGTH }, (_, i) => i % 2));
  assert.is(totalStateChange(alternating), 98);
  assert.is(legacyTotalStateChange(alternating), 101);
});

test('mergeCheck scores a legacy result with the legacy formula and flaps with it', () => {
  let cur: Check | undefined;
  let legacyCur: Check | undefined;
  for (let i = 0; i < 21; i++) {
    const c = {
      metadata: { name: 'c' },
      status: i % 2,
      executed: i,
      low_flap_threshold: 0,
      high_flap_threshold: 100,
    };
    cur = mergeCheck(cur, c);
    legacyCur = mergeCheck(legacyCur, c, true);
  }
  assert.is(legacyCur!.total_state_change, 101);
  assert.is(legacyCur!.state, 'flapping', 'low 0 is an integer threshold for a legacy result');
  assert.is(cur!.total_state_change, 98);
  assert.is.not(cur!.state, 'flapping', 'a current check with low 0 never flaps');
});

test('legacy flapping: hysteresis between the integer thresholds', () => {
  assert.ok(isFlapping(30, false, 10, 30, true));
  assert.not.ok(isFlapping(29, false, 10, 30, true));
  assert.ok(isFlapping(11, true, 10, 30, true));
  assert.not.ok(isFlapping(10, true, 10, 30, true));
  assert.not.ok(isFlapping(50, false, undefined, 30, true));
});

test('keepalive texts of legacy clients', () => {
  assert.is(legacySilentOutput(125, 120), 'No keepalive sent from client for 125 seconds (>=120)');
  assert.is(legacyOkOutput(3), 'Keepalive sent from client 3 seconds ago');
});

const chk = (o: Record<string, unknown>) => ({ metadata: { name: 'c' }, ...o }) as Check;

test('truncation of a legacy result: first line, cut at the length, "\\n..." when more', () => {
  assert.is(truncatedOutput(chk({ output: 'a\nb' })), undefined, 'off without truncate_output or metric');
  assert.is(truncatedOutput(chk({ output: 'line1\nline2', truncate_output: true })), 'line1\n...');
  assert.is(
    truncatedOutput(chk({ output: 'x'.repeat(300), truncate_output: true })),
    `${'x'.repeat(255)}\n...`,
  );
  assert.is(truncatedOutput(chk({ output: 'x'.repeat(255), truncate_output: true })), 'x'.repeat(255));
  assert.is(
    truncatedOutput(chk({ output: 'abcdef', truncate_output: true, truncate_output_length: 3 })),
    'abc\n...',
  );
  assert.is(truncatedOutput(chk({ output: 'm 1 2\nm 2 3\n', type: 'metric' })), 'm 1 2\n...');
  assert.is(truncatedOutput(chk({ output: 'one line\n', type: 'metric' })), 'one line');
  assert.is(truncatedOutput(chk({ output: 'a\nb', type: 'metric', truncate_output: false })), undefined);
});

const legacyEntity = (legacy: Record<string, unknown>): Entity => ({
  metadata: { name: 'web-1', namespace: 'default' },
  entity_class: 'agent',
  legacy,
});

test('registration check: defaults, the scope deep-merged, its handler folded into handlers', () => {
  const plain = legacyRegistrationCheck(legacyEntity({}), 'default', 100, 'n1');
  assert.equal(plain.handlers, ['registration']);
  assert.is(plain.status, 1);
  assert.is(plain.output, 'new client registration');
  assert.is(plain.metadata.name, 'registration');
  const scoped = legacyRegistrationCheck(
    legacyEntity({ registration: { handler: 'cmdb', status: 2, output: 'x', name: 'y', team: { a: 1 } } }),
    'default',
    100,
    'n1',
  );
  assert.equal(scoped.handlers, ['cmdb']);
  assert.is(scoped.status, 2);
  assert.is(scoped.output, 'new client registration');
  assert.is(scoped.metadata.name, 'registration');
  assert.equal((scoped as Record<string, unknown>).team, { a: 1 });
  assert.is((scoped as Record<string, unknown>).handler, undefined);
  const ev = registrationEvent(legacyEntity({ registration: { handlers: ['a', 'b'] } }), 'id', 100, 'n1');
  assert.equal(ev.check!.handlers, ['a', 'b']);
});

test('deregistration check: name, output, status and issued of the scope are ignored', () => {
  const c = legacyDeregistrationCheck(
    legacyEntity({
      deregistration: { handler: 'dereg', status: 2, output: 'x', issued: 5, name: 'n', team: 'ops' },
    }),
    'default',
    100,
    'n1',
  );
  assert.equal(c.handlers, ['dereg']);
  assert.is(c.status, 1);
  assert.is(c.output, 'client initiated deregistration');
  assert.is(c.issued, 100);
  assert.is(c.metadata.name, 'deregistration');
  assert.is((c as Record<string, unknown>).team, 'ops');
  const job = deregistrationEvent(legacyEntity({}), 'agent stopped', 100_000, 'n1', 'other');
  assert.equal(job.handlers, ['deregistration'], 'the legacy default, not --deregistration-handler');
});

test('cloudvm lookup: only with the scope and a cloudvm keepalive handler; defaults and encoding', () => {
  assert.is(cloudvmLookup(legacyEntity({ cloudvm: {} }), ['keepalive']), undefined);
  assert.is(cloudvmLookup(legacyEntity({}), ['cloudvm']), undefined);
  const d = cloudvmLookup(legacyEntity({ cloudvm: { access_key_id: 'k', secret_access_key: 's' } }), [
    'cloudvm',
  ]);
  assert.equal(d, { path: 'us-east-1/web-1', allowed: ['running'], timeoutMs: 10_000 });
  const e = cloudvmLookup(
    legacyEntity({
      cloudvm: { instance_id: 'i/1 x', region: 'eu west', allowed_instance_states: ['stopped'], timeout: 2 },
    }),
    ['cloudvm'],
  );
  assert.equal(e, { path: 'eu%20west/i%2F1%20x', allowed: ['stopped'], timeoutMs: 2000 });
});

test('the legacy API sends results as the user the entity actor recognises', () => {
  assert.is(LEGACY_USER, LEGACY_API_USER);
});

test.run();
