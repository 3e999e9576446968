// suite-timeout: 60
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import * as v from 'valibot';
import { createLogger } from '../../lib/log.ts';
import { sandboxReady } from '../../lib/sandbox/index.ts';
import { EventFilter } from '../../proto/schemas/resources/pipeline.ts';
import type { Event } from '../../proto/schemas/event.ts';
import { applyFilter, inWindows, parseTimeOfDay } from '../../actors/pipeline/filters.ts';
import { eventExtras, filterView } from '../../actors/pipeline/synthesize.ts';
import type { EventFilterSpec, FilterRef } from '../../actors/pipeline/types.ts';

// Filters and proxy matching call the sandbox synchronously: its module loads first, as at a node's start.
await sandboxReady();

const lines: string[] = [];
const log = createLogger('debug', {}, (l) => lines.push(l));
const NOW = new Date(Date.UTC(2026, 10, 21, 18, 30, 0)); // Saturday 18:30 UTC

const ev = (check?: Record<string, unknown>, extra: Record<string, unknown> = {}): Event =>
  ({
    entity: {
      metadata: { name: 'web-1', namespace: 'default' },
      entity_class: 'agent',
      system: { hostname: 'web-1' },
      labels: { password: 'hunter2' },
    },
    ...(check ? { check: { metadata: { name: 'disk' }, ...check } } : {}),
    ...extra,
  }) as unknown as Event;
const hist = (...s: number[]) => s.map((status, i) => ({ status, executed: 1000 + i }));

const filter = (
  action: 'allow' | 'deny',
  expressions: string[],
  when?: EventFilterSpec['when'],
  name = `f-${Math.random()}`,
): FilterRef => ({
  kind: 'resource',
  filter: { metadata: { name, namespace: 'default' }, action, expressions, when } as EventFilterSpec,
});
const apply = (ref: FilterRef, e: Event, prev?: string, now = NOW) =>
  applyFilter(ref, e, eventExtras(e, prev), now, log);

test('extras: has_check, has_metrics, is_incident, is_resolution, is_silenced', () => {
  assert.equal(eventExtras(ev()), {
    has_check: false,
    has_metrics: false,
    is_incident: false,
    is_resolution: false,
    is_silenced: false,
    is_flapping_start: false,
    is_flapping_end: false,
  });
  const m = eventExtras(ev(undefined, { metrics: { points: [] } }));
  assert.ok(m.has_metrics && !m.has_check && !m.is_incident);
  assert.ok(eventExtras(ev({ status: 2, history: hist(0, 2) })).is_incident);
  assert.not.ok(eventExtras(ev({ status: 0, history: hist(0, 0) })).is_incident);
  assert.ok(eventExtras(ev({ status: 0, history: hist(1, 0) })).is_resolution);
  assert.ok(eventExtras(ev({ status: 0, history: hist(0, 2, 0) })).is_resolution);
  assert.not.ok(eventExtras(ev({ status: 0, history: hist(0, 0) })).is_resolution);
  assert.not.ok(
    eventExtras(ev({ status: 0, history: hist(0) })).is_resolution,
    'a first OK result is no resolution',
  );
  assert.not.ok(eventExtras(ev({ status: 1, history: hist(2, 1) })).is_resolution);
  assert.ok(eventExtras(ev({ status: 1, is_silenced: true })).is_silenced);
});

test('extras: flapping start and end from the previous state', () => {
  assert.ok(eventExtras(ev({ status: 1, state: 'flapping' }), 'failing').is_flapping_start);
  assert.ok(eventExtras(ev({ status: 1, state: 'flapping' })).is_flapping_start);
  assert.not.ok(eventExtras(ev({ status: 1, state: 'flapping' }), 'flapping').is_flapping_start);
  assert.ok(eventExtras(ev({ status: 0, state: 'passing' }), 'flapping').is_flapping_end);
  assert.not.ok(eventExtras(ev({ status: 1, state: 'flapping' }), 'flapping').is_flapping_end);
  assert.not.ok(eventExtras(ev({ status: 0, state: 'passing' }), 'passing').is_flapping_end);
});

test('filter view: extras at the top level, entity redacted', () => {
  const e = ev({ status: 2 });
  const v = filterView(e, eventExtras(e)) as Record<string, any>;
  assert.is(v.is_incident, true);
  assert.is(v.entity.labels.password, 'REDACTED');
  assert.is((e.entity as any).labels.password, 'hunter2', 'the event itself is untouched');
  assert.is(apply(filter('allow', ["event.entity.labels.password == 'REDACTED'"]), e).pass, true);
  assert.is(
    apply(filter('allow', ['event.is_incident && event.has_check && !event.is_silenced']), e).pass,
    true,
  );
});

test('built-ins', () => {
  const b = (name: 'is_incident' | 'not_silenced' | 'has_metrics'): FilterRef => ({ kind: 'builtin', name });
  assert.is(apply(b('is_incident'), ev({ status: 2, history: hist(2) })).pass, true);
  assert.is(apply(b('is_incident'), ev({ status: 0, history: hist(2, 0) })).pass, true, 'resolutions pass');
  const ok = apply(b('is_incident'), ev({ status: 0, history: hist(0, 0) }));
  assert.is(ok.pass, false);
  assert.match(ok.reason!, /is_incident/);
  assert.is(apply(b('not_silenced'), ev({ status: 2, is_silenced: true })).pass, false);
  assert.is(apply(b('not_silenced'), ev({ status: 2 })).pass, true);
  assert.is(apply(b('has_metrics'), ev({ status: 0 }, { metrics: { points: [] } })).pass, true);
  assert.is(apply(b('has_metrics'), ev({ status: 0 })).pass, false);
});

test('allow: passes only when every expression is true (1 and 3 expressions)', () => {
  const e = ev({ status: 2, occurrences: 3 });
  assert.is(apply(filter('allow', ['event.check.status == 2']), e).pass, true);
  assert.is(apply(filter('allow', ['event.check.status == 1']), e).pass, false);
  assert.is(
    apply(
      filter('allow', [
        'event.check.status == 2',
        'event.check.occurrences >= 3',
        "event.entity.entity_class == 'agent'",
      ]),
      e,
    ).pass,
    true,
  );
  assert.is(
    apply(
      filter('allow', [
        'event.check.status == 2',
        'event.check.occurrences > 3',
        "event.entity.entity_class == 'agent'",
      ]),
      e,
    ).pass,
    false,
  );
});

test('deny: drops when any expression is true (1 and 3 expressions)', () => {
  const e = ev({ status: 2, occurrences: 3 });
  assert.is(apply(filter('deny', ['event.check.status == 2']), e).pass, false);
  assert.is(apply(filter('deny', ['event.check.status == 0']), e).pass, true);
  assert.is(
    apply(filter('deny', ['event.check.status == 0', 'event.check.occurrences == 3', 'false']), e).pass,
    false,
  );
  assert.is(
    apply(filter('deny', ['event.check.status == 0', 'event.check.occurrences == 1', 'false']), e).pass,
    true,
  );
});

test('a failing expression is never true: allow drops the event, deny does not deny it; logged once per filter version', () => {
  lines.length = 0;
  const e = ev({ status: 2 });
  const failing = [
    'event.nope.deeper == 1', // throws
    'while (true) {}', // a statement does not compile as an expression
    'event.(', // does not compile
    '(function () { while (true) {} })()', // runs out of time
    "event.constructor.constructor('return process')().exit(1)", // no code generation
    '(async () => true)()', // a promise
    '(() => { let a = []; for (;;) a.push(new Uint8Array(1e6).fill(1)); })()', // out of memory
  ];
  for (const [i, bad] of failing.entries()) {
    const allow = apply(filter('allow', ['event.check.status == 2', bad], undefined, `allow-${i}`), e);
    assert.is(allow.pass, false, `allow drops: ${bad}`);
    assert.match(allow.reason!, new RegExp(`allow-${i}: allow expression 1 failed`));
    assert.is(apply(filter('deny', [bad], undefined, `deny-${i}`), e).pass, true, `deny passes: ${bad}`);
    assert.is(
      apply(filter('deny', [bad, 'event.check.status == 2'], undefined, `deny2-${i}`), e).pass,
      false,
      `a true deny expression still denies: ${bad}`,
    );
  }
  const warns = lines.map((l) => JSON.parse(l)).filter((r) => r.level === 'warn');
  assert.ok(warns.some((r) => r.filter === 'allow-0' && /TypeError/.test(r.error)));
  assert.ok(warns.some((r) => r.filter === 'allow-1' && /does not compile/.test(r.error)));
  assert.ok(warns.some((r) => r.filter === 'allow-3' && /timed out/.test(r.error)));
  assert.ok(warns.some((r) => r.filter === 'allow-5' && /Promise/.test(r.error)));
  assert.ok(warns.some((r) => r.filter === 'allow-6' && /out of memory/.test(r.error)));
  assert.not.ok(
    lines.some((l) => l.includes('hunter2') || l.includes('web-1')),
    'no event data in the logs',
  );
  // The same filter again and again: one log line.
  const before = lines.length;
  for (let i = 0; i < 3; i++)
    assert.is(apply(filter('allow', ['event.nope.deeper == 1'], undefined, 'again'), e).pass, false);
  assert.is(lines.length, before + 1, 'logged once per filter version');
  assert.is(apply(filter('allow', ['event.check.status == 2']), e).pass, true);
});

test('helpers in filter expressions use the injected now', () => {
  const e = ev({ status: 2, executed: Math.floor(NOW.getTime() / 1000) - 600 });
  assert.is(apply(filter('allow', ['seconds_since(event.check.executed) == 600']), e).pass, true);
  assert.is(
    apply(
      filter('allow', [
        'hour(event.check.executed) == 18',
        'minute(event.check.executed) == 20',
        'weekday(event.check.executed) == 6',
      ]),
      e,
    ).pass,
    true,
  );
});

test('time of day parsing', () => {
  assert.is(parseTimeOfDay('5:00 PM'), 17 * 60);
  assert.is(parseTimeOfDay('5:00PM'), 17 * 60);
  assert.is(parseTimeOfDay('12:00 AM'), 0);
  assert.is(parseTimeOfDay('12:30 pm'), 12 * 60 + 30);
  assert.is(parseTimeOfDay('08:00'), 8 * 60);
  assert.is(parseTimeOfDay('23:59'), 23 * 60 + 59);
  for (const bad of ['24:00', '13:00 PM', '0:00 AM', '8', '8:60', 'noon', ''])
    assert.is(parseTimeOfDay(bad), undefined, bad);
});

test('when windows: all, weekday, crossing midnight, bad windows', () => {
  const at = (h: number, m: number, day = 21) => new Date(Date.UTC(2026, 10, day, h, m)); // the 21st is a Saturday
  const warns: string[] = [];
  const w = (days: Record<string, { begin: string; end: string }[]>, d: Date) =>
    inWindows(days, d, (m) => warns.push(m));
  assert.is(w({ all: [{ begin: '9:00 AM', end: '5:00 PM' }] }, at(9, 0)), true, 'begin is inside');
  assert.is(w({ all: [{ begin: '9:00 AM', end: '5:00 PM' }] }, at(16, 59)), true);
  assert.is(w({ all: [{ begin: '9:00 AM', end: '5:00 PM' }] }, at(17, 0)), false, 'end is outside');
  assert.is(w({ saturday: [{ begin: '08:00', end: '10:00' }] }, at(9, 0)), true);
  assert.is(w({ Saturday: [{ begin: '08:00', end: '10:00' }] }, at(9, 0)), true);
  assert.is(w({ monday: [{ begin: '08:00', end: '10:00' }] }, at(9, 0)), false);
  assert.is(
    w({ monday: [{ begin: '08:00', end: '10:00' }], all: [{ begin: '11:00', end: '12:00' }] }, at(11, 30)),
    true,
  );
  const night = { all: [{ begin: '10:00 PM', end: '6:00 AM' }] };
  assert.is(w(night, at(23, 0)), true);
  assert.is(w(night, at(3, 0)), true);
  assert.is(w(night, at(6, 0)), false);
  assert.is(w(night, at(12, 0)), false);
  assert.is(w({ all: [{ begin: '08:00', end: '08:00' }] }, at(8, 0)), false, 'an empty window');
  assert.is(
    w({ all: [{ begin: 'soon', end: '08:00' }], funday: [{ begin: '1:00', end: '2:00' }] }, at(8, 0)),
    false,
  );
  assert.equal(warns.length, 2);
});

test('when windows on filters: outside, allow drops and deny passes; inside, expressions decide', () => {
  const when = { days: { all: [{ begin: '5:00 PM', end: '8:00 PM' }] } };
  const e = ev({ status: 2 });
  assert.is(
    apply(filter('allow', ['true'], when), e, undefined, new Date(Date.UTC(2026, 10, 21, 18, 0))).pass,
    true,
  );
  assert.is(
    apply(filter('allow', ['false'], when), e, undefined, new Date(Date.UTC(2026, 10, 21, 18, 0))).pass,
    false,
  );
  const out = apply(filter('allow', ['true'], when), e, undefined, new Date(Date.UTC(2026, 10, 21, 9, 0)));
  assert.is(out.pass, false);
  assert.match(out.reason!, /outside/);
  assert.is(
    apply(filter('deny', ['true'], when), e, undefined, new Date(Date.UTC(2026, 10, 21, 9, 0))).pass,
    true,
  );
  assert.is(
    apply(filter('deny', ['true'], when), e, undefined, new Date(Date.UTC(2026, 10, 21, 18, 0))).pass,
    false,
  );
  assert.is(apply(filter('allow', ['true'], { days: {} }), e).pass, true, 'no windows: no time restriction');
});

test('the EventFilter schema refuses bad windows and day names with a clear message', () => {
  const f = (days: unknown) =>
    v.safeParse(EventFilter, {
      metadata: { name: 'f', namespace: 'default' },
      action: 'allow',
      expressions: ['true'],
      when: { days },
    });
  assert.ok(
    f({ all: [{ begin: '5:00 PM', end: '08:00' }], Monday: [{ begin: '1:00 AM', end: '2:00 AM' }] }).success,
  );
  const bad = f({ all: [{ begin: 'later', end: '08:00' }] });
  assert.not.ok(bad.success);
  assert.match(JSON.stringify(bad.issues?.map((i) => i.message)), /time of day/);
  const day = f({ funday: [{ begin: '1:00', end: '2:00' }] });
  assert.not.ok(day.success);
  assert.match(JSON.stringify(day.issues?.map((i) => i.message)), /days are all, sunday/);
});

test.run();
