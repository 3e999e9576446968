// suite-timeout: 180
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { Hono } from 'hono';
import { ApiError } from '../../gateway/api/errors.ts';
import { errorBody } from '../../proto/errors.ts';
import { EVENT_FIELDS } from '../../gateway/api/selector-fields.ts';
import { eventLabels, selectorOf } from '../../gateway/api/selectors.ts';
import { fuzz } from '../harness/fuzz.ts';

// Fuzzing the label and field selector parser in-process (issue 13), through a Hono app as the API
// uses it: any labelSelector / fieldSelector text either selects (a predicate that never throws on
// the stored objects) or is refused with an ApiError invalid_argument (400, code 1).

const RUNS = 10_000;
const OBJECTS: unknown[] = [
  {
    metadata: { name: 'e1', labels: { region: 'eu' } },
    entity: { metadata: { name: 'web', labels: { tier: 'web' } }, subscriptions: ['linux', 'x'] },
    check: { metadata: { name: 'disk' }, status: 2, output: 'full' },
  },
  { metadata: { name: 'e2' }, check: null, entity: { subscriptions: null } },
  {},
];

const app = new Hono();
app.get('/', (c) => {
  const pred = selectorOf(c, EVENT_FIELDS, eventLabels);
  const kept = pred ? OBJECTS.filter((o) => pred(o)).length : OBJECTS.length;
  return c.json({ kept });
});
app.onError((err, c) => {
  if (err instanceof ApiError) return c.json(errorBody(err.kind, err.message), 400);
  return c.json({ message: `not an ApiError: ${String(err)}`, code: -1 }, 500);
});

const token = fc.oneof(
  fc.constantFrom('==', '!=', ' in ', ' notin ', ' matches ', '&&', '(', ')', '[', ']', ',', '"', "'", ' '),
  fc.constantFrom('event.check.status', 'check.name', 'entity.subscriptions', 'region', 'linux', '2', ''),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'grapheme', maxLength: 4 }),
);
const selector = fc.oneof(
  fc.string({ maxLength: 40 }),
  fc.array(token, { maxLength: 10 }).map((t) => t.join('')),
);

test(`selectors: ${RUNS.toLocaleString('en')} label and field selectors select or are refused as invalid_argument`, async () => {
  await fuzz(
    'selectors (labelSelector, fieldSelector)',
    fc.asyncProperty(
      fc.array(fc.tuple(fc.boolean(), selector), { minLength: 1, maxLength: 3 }),
      async (sels) => {
        const q = new URLSearchParams();
        for (const [label, s] of sels) q.append(label ? 'labelSelector' : 'fieldSelector', s);
        const res = await app.request(`/?${q}`);
        const body = (await res.json()) as { message?: string; code?: number };
        if (res.status === 200) return;
        assert.is(res.status, 400, `status of ${q}: ${JSON.stringify(body)}`);
        assert.is(body.code, 1, `code of ${q}: ${JSON.stringify(body)}`);
        assert.type(body.message, 'string');
      },
    ),
    RUNS,
  );
});

test.run();
