import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { decodeJob, encodeJob, namedHandlers, pipelineRefs } from '../../proto/pipeline-job.ts';
import type { Event } from '../../proto/schemas/event.ts';

const event = {
  id: 'e1',
  timestamp: 1,
  metadata: { namespace: 'default' },
  check: { metadata: { name: 'disk' }, status: 2, output: 'full', handlers: ['mail'] },
};

test('a job decodes to what was encoded, with the event text as written', () => {
  // Key order and spacing differ from JSON.stringify's, so a re-serialized event would not match.
  const eventJson =
    '{"check":{"metadata":{"name":"disk"},"status":2,"output":"full","handlers":["mail"]}, "id":"e1","timestamp":1,"metadata":{"namespace":"default"}}';
  const text = encodeJob('m1.e1', 'check', eventJson, 'passing');
  const { job, eventJson: raw } = decodeJob(text);
  assert.is(job.id, 'm1.e1');
  assert.is(job.source, 'check');
  assert.is(job.previous_state, 'passing');
  assert.equal(job.event, JSON.parse(eventJson));
  assert.is(raw, eventJson);
});

test('a job without a previous state has none', () => {
  const { job } = decodeJob(encodeJob('e1', 'metrics', JSON.stringify(event)));
  assert.is(job.previous_state, undefined);
  assert.not.ok('previous_state' in job);
});

test('what is not a job does not decode', () => {
  for (const text of [
    'not json',
    '{}',
    JSON.stringify({ id: '', source: 'check', event }),
    JSON.stringify({ id: 'x', source: 'other', event }),
  ]) {
    assert.throws(() => decodeJob(text), undefined, text);
  }
});

test('handlers and pipelines an event names', () => {
  const e = {
    ...event,
    metrics: { handlers: ['mail', 'influx', 3] },
    pipelines: [{ name: 'p1', type: 'Pipeline' }, null],
    check: { ...event.check, pipelines: [{ name: 'p2' }] },
  } as unknown as Event;
  assert.equal(namedHandlers(e), ['mail', 'influx']);
  assert.equal(pipelineRefs(e), [{ name: 'p1', type: 'Pipeline' }, { name: 'p2' }]);
  assert.equal(pipelineRefs(event as unknown as Event), []);
});

test.run();
