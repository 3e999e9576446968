// suite-timeout: 180
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import * as v from 'valibot';
import { parseApiEvent } from '../../agent/api/server.ts';
import { parsePayload } from '../../agent/sockets/payload.ts';
import { parseStatsdLine, StatsdLine } from '../../proto/schemas/statsd.ts';
import { fuzz, jsonValue, mutated, statsdLine } from '../harness/fuzz.ts';

// Fuzzing the parsers of the agent's local inputs in-process (issue 13): POST /events bodies, TCP/UDP
// socket payloads and StatsD lines, 10,000 cases each. Each gives its documented result: an event or
// an HTTP 400 error; ping / event / incomplete / invalid; a metric or the reason it is not one.

const RUNS = 10_000;
const bytes = (s: string) => Buffer.from(s, 'utf8');

const apiBody = fc.oneof(
  fc.string({ maxLength: 80 }),
  jsonValue().map((x) => JSON.stringify(x) ?? ''),
  mutated({ check: { metadata: { name: 'disk' }, status: 1, output: 'x' } }).map(
    (x) => JSON.stringify(x) ?? '',
  ),
  fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b).toString('latin1')),
);

test(`agent API: ${RUNS.toLocaleString('en')} POST /events bodies give an event or a 400`, async () => {
  await fuzz(
    'agent API POST /events body',
    fc.property(apiBody, (body) => {
      try {
        assert.type(parseApiEvent(bytes(body)), 'object');
      } catch (err) {
        const e = err as { name?: string; status?: number; message?: string };
        if (e.status !== 400 || typeof e.message !== 'string')
          throw new Error(`not a 400: ${String(err)}`, { cause: err });
      }
    }),
    RUNS,
  );
});

const socketPayload = fc.oneof(
  fc.string({ maxLength: 80 }),
  fc.constantFrom('ping', ' ping\n', 'PING'),
  jsonValue().map((x) => JSON.stringify(x) ?? ''),
  mutated({ name: 'disk', output: 'x', status: 1, source: 'web' }).map((x) => JSON.stringify(x) ?? ''),
  fc.uint8Array({ maxLength: 80 }).map((b) => Buffer.from(b).toString('latin1')),
);

test(`agent sockets: ${RUNS.toLocaleString('en')} payloads are a ping, an event, incomplete or invalid`, async () => {
  await fuzz(
    'agent socket payload',
    fc.property(socketPayload, (text) => {
      const p = parsePayload(bytes(text));
      assert.ok(['ping', 'event', 'incomplete', 'invalid'].includes(p.kind));
      if (p.kind === 'invalid') assert.type(p.reason, 'string');
      if (p.kind === 'event') assert.type(p.event.check, 'object');
    }),
    RUNS,
  );
});

test(`StatsD: ${RUNS.toLocaleString('en')} lines give a metric or the reason they are refused`, async () => {
  await fuzz(
    'StatsD line',
    fc.property(statsdLine, (line) => {
      const m = parseStatsdLine(line);
      if (typeof m === 'string') assert.ok(m.length > 0);
      else {
        assert.ok(Number.isFinite(m.value) && m.rate > 0 && m.rate <= 1, `metric of ${JSON.stringify(line)}`);
        assert.ok(m.name.length > 0);
      }
      const r = v.safeParse(StatsdLine, line);
      assert.is(r.success, typeof m !== 'string');
    }),
    RUNS,
  );
});

test.run();
