// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { startBackend, waitFor, type Backend } from '../harness/index.ts';
import { backendAgents, type CheckAgent } from './agent-checks/backend.ts';

// output_metric_thresholds (docs/compatibility.md#output-metric-thresholds) end to end: the API takes
// and refuses them, the backend carries them to a real agent in the check request (JSON and protobuf),
// and the agent judges the metrics it extracted: the status is raised (never lowered) and each breach
// is an annotation of the stored event.

let backend: Backend;
const real = backendAgents(() => backend);
const { agentOn, run, api } = real;
let json: CheckAgent;
let protobuf: CheckAgent;

const T = 'monitor.io/output_metric_thresholds/';
const N = 'monitor.io/notifications/';
/** Graphite lines: disk.used 93 for sda, 40 for sdb, and load 0.5. */
const OUTPUT = `printf 'disk.used;device=sda 93 1700000000\\ndisk.used;device=sdb 40 1700000000\\nload 0.5 1700000000\\n'`;
const disk = {
  name: 'disk.used',
  tags: [{ name: 'device', value: 'sda' }],
  thresholds: [
    { max: '80', status: 1 },
    { max: '90', status: 2 },
  ],
};

test.before(async () => {
  backend = await startBackend({ name: 'check-thresholds' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
  json = await agentOn();
  protobuf = await agentOn(['--protobuf']);
});

test.after(async () => {
  await real.stopAll();
  await backend?.stop();
});

for (const [kind, target] of [
  ['json', () => json],
  ['protobuf', () => protobuf],
] as const)
  test(`${kind}: a breached max raises an OK check to the worst breached status, with its annotations`, async () => {
    const e = await run(target(), `thr-max-${kind}`, {
      command: OUTPUT,
      output_metric_format: 'graphite_plaintext',
      output_metric_thresholds: [disk, { name: 'load', thresholds: [{ min: '0', max: '4', status: 2 }] }],
    });
    assert.is(e.check.status, 2);
    const a = e.check.metadata.annotations;
    assert.is(
      a[`${T}disk.used.device=sda/max/warning`],
      'disk.used (device=sda) is 93, above the maximum of 80: status 1',
    );
    assert.is(
      a[`${T}disk.used.device=sda/max/critical`],
      'disk.used (device=sda) is 93, above the maximum of 90: status 2',
    );
    assert.is(a[`${N}critical`], 'disk.used (device=sda) is 93, above the maximum of 90: status 2');
    assert.is(a[`${N}warning`], 'disk.used (device=sda) is 93, above the maximum of 80: status 1');
    // sdb (40) and load (0.5) are within their ranges: nothing about them.
    assert.not.ok(Object.keys(a).some((k) => k.includes('sdb') || k.includes('load')));
    // The stored check keeps its thresholds, as configured.
    assert.equal(e.check.output_metric_thresholds[0].thresholds, disk.thresholds);
  });

test('a breached min, and null_status for a metric the output lacks', async () => {
  const e = await run(json, 'thr-min-null', {
    command: OUTPUT,
    output_metric_format: 'graphite_plaintext',
    output_metric_thresholds: [
      { name: 'load', thresholds: [{ min: '1', status: 1 }] },
      { name: 'swap.used', null_status: 3 },
    ],
  });
  assert.is(e.check.status, 3);
  const a = e.check.metadata.annotations;
  assert.is(a[`${T}load/min/warning`], 'load is 0.5, below the minimum of 1: status 1');
  assert.is(a[`${T}swap.used/null-status/unknown`], "swap.used is not among the check's metrics: status 3");
  assert.is(a[`${N}unknown`], "swap.used is not among the check's metrics: status 3");
});

test('the status is never lowered, and metrics within range add no annotation', async () => {
  const e = await run(json, 'thr-not-lower', {
    command: `${OUTPUT}; exit 2`,
    output_metric_format: 'graphite_plaintext',
    output_metric_thresholds: [{ name: 'load', thresholds: [{ max: '0.1', status: 1 }] }],
  });
  assert.is(e.check.status, 2, 'a warning breach leaves a critical check critical');
  assert.is(
    e.check.metadata.annotations[`${T}load/max/warning`],
    'load is 0.5, above the maximum of 0.1: status 1',
  );
  const ok = await run(json, 'thr-within', {
    metadata: { annotations: { team: 'ops' } },
    command: OUTPUT,
    output_metric_format: 'graphite_plaintext',
    output_metric_thresholds: [{ name: 'load', thresholds: [{ min: '0', max: '1', status: 2 }] }],
  });
  assert.is(ok.check.status, 0);
  assert.equal(ok.check.metadata.annotations, { team: 'ops' });
});

test('the API refuses thresholds it could not evaluate, naming the rule', async () => {
  const put = (name: string, body: Record<string, unknown>) =>
    api(`/namespaces/default/checks/${name}`, 'PUT', {
      metadata: { name, namespace: 'default' },
      command: 'true',
      interval: 60,
      subscriptions: ['x'],
      output_metric_format: 'graphite_plaintext',
      ...body,
    });
  const cases: [Record<string, unknown>, RegExp][] = [
    [
      { output_metric_thresholds: [{ name: 'x', thresholds: [{ max: 'ten', status: 1 }] }] },
      /number written as a string/,
    ],
    [{ output_metric_thresholds: [{ name: 'x', thresholds: [{ status: 1 }] }] }, /needs a min or a max/],
    [
      { output_metric_thresholds: [{ name: 'x', thresholds: [{ min: '5', max: '1', status: 1 }] }] },
      /min must not be above its max/,
    ],
    [{ output_metric_thresholds: [{ name: '', null_status: 1 }] }, /needs the metric name/],
    [
      { output_metric_thresholds: [{ name: 'x', thresholds: [{ max: '1', status: 256 }] }] },
      /status is 0 to 255/,
    ],
    [
      { output_metric_format: '', output_metric_thresholds: [{ name: 'x', null_status: 1 }] },
      /needs an output_metric_format/,
    ],
  ];
  for (const [i, [body, message]] of cases.entries()) {
    const r = await put(`thr-bad-${i}`, body);
    assert.is(r.status, 400, JSON.stringify(body));
    assert.match(r.body.message, message);
  }
});

test.run();
