import * as v from 'valibot';
// The schedule's own parser, so the API refuses exactly what the scheduler could not run.
import { parseCron } from '../../cron.ts';
import { Meta, OptStrings, OptUInt, EnvVars, Secrets, ResourceRef, Strings, UInt } from './meta.ts';
import { HOOK_TYPE } from '../check-request.ts';
import { MetricThresholds } from '../metric-thresholds.ts';
import { jsSources, type JsSyntaxCheck } from './javascript.ts';

export const HookList = v.object({
  type: v.pipe(
    v.string(),
    v.regex(HOOK_TYPE, 'hook type is 0-255, ok, warning, critical, unknown or non-zero'),
  ),
  hooks: Strings,
});

const TimeWindow = v.object({ begin: v.string(), end: v.string() });
const Subdue = v.object({
  begin: v.string(),
  end: v.string(),
  repeat: v.optional(v.nullable(Strings)),
});

const proxyRequests = (js?: JsSyntaxCheck) =>
  v.object({
    entity_attributes: jsSources('script', js),
    splay: v.optional(v.boolean()),
    splay_coverage: v.optional(v.pipe(UInt, v.maxValue(100, 'splay_coverage is a percentage'))),
  });

/** A legacy aggregate's name (docs/compatibility.md#legacy-api): the legacy generation's own pattern. */
const AggregateName = v.pipe(
  v.string(),
  v.regex(/^[\w.:|-]+$/, 'aggregate names may only contain letters, digits, "_", ".", ":", "|" and "-"'),
);

export const METRIC_FORMATS = [
  'nagios_perfdata',
  'graphite_plaintext',
  'influxdb_line',
  'opentsdb_line',
  'prometheus_text',
] as const;
export type MetricFormat = (typeof METRIC_FORMATS)[number];

/** core/v2 CheckConfig; with `js`, proxy_requests.entity_attributes must compile (./javascript.ts). */
export const checkConfigSchema = (js?: JsSyntaxCheck) =>
  v.pipe(
    v.object({
      metadata: Meta,
      command: v.pipe(v.string('command must be set'), v.minLength(1, 'command must be set')),
      handlers: OptStrings,
      interval: OptUInt,
      cron: v.optional(
        v.pipe(
          v.string(),
          v.rawCheck(({ dataset, addIssue }) => {
            if (!dataset.typed || dataset.value === '') return;
            try {
              parseCron(dataset.value);
            } catch (err) {
              addIssue({ message: `cron "${dataset.value}": ${(err as Error).message}` });
            }
          }),
        ),
      ),
      publish: v.optional(v.boolean()),
      runtime_assets: OptStrings,
      subscriptions: OptStrings,
      proxy_entity_name: v.optional(v.string()),
      check_hooks: v.optional(v.nullable(v.array(HookList))),
      stdin: v.optional(v.boolean()),
      subdue: v.optional(
        v.nullable(v.object({ days: v.optional(v.record(v.string(), v.array(TimeWindow))) })),
      ),
      subdues: v.optional(v.nullable(v.array(Subdue))),
      ttl: v.optional(v.number()),
      timeout: OptUInt,
      proxy_requests: v.optional(v.nullable(proxyRequests(js))),
      round_robin: v.optional(v.boolean()),
      output_metric_format: v.optional(
        v.union(
          [v.literal(''), v.picklist(METRIC_FORMATS)],
          `output_metric_format is one of ${METRIC_FORMATS.join(', ')}`,
        ),
      ),
      output_metric_handlers: OptStrings,
      output_metric_tags: v.optional(v.nullable(v.array(v.object({ name: v.string(), value: v.string() })))),
      output_metric_thresholds: MetricThresholds,
      env_vars: EnvVars,
      max_output_size: OptUInt,
      discard_output: v.optional(v.boolean()),
      secrets: Secrets,
      low_flap_threshold: OptUInt,
      high_flap_threshold: OptUInt,
      pipelines: v.optional(v.nullable(v.array(ResourceRef))),
      scheduler: v.optional(v.string()),
      // The legacy API's aggregates this check's results belong to: true for one named as the check.
      aggregate: v.optional(v.union([v.boolean(), AggregateName], 'aggregate is a boolean or a name')),
      aggregates: v.optional(v.nullable(v.array(AggregateName))),
    }),
    v.check((c) => !(c.cron && c.interval), 'a check has either an interval or a cron schedule, not both'),
    v.check(
      (c) => c.publish === false || !!c.cron || (c.interval ?? 0) > 0,
      'interval or cron must be set for a published check',
    ),
    v.check(
      (c) => !c.ttl || c.ttl <= 0 || !c.interval || c.ttl > c.interval,
      'ttl must be greater than the interval',
    ),
    v.check(
      (c) => !c.output_metric_thresholds?.length || !!c.output_metric_format,
      'output_metric_thresholds needs an output_metric_format to extract the metrics they judge',
    ),
    v.check(
      (c) => !(c.low_flap_threshold && c.high_flap_threshold) || c.low_flap_threshold < c.high_flap_threshold,
      'low_flap_threshold must be lower than high_flap_threshold',
    ),
  );
export const CheckConfig = checkConfigSchema();

/** core/v2 HookConfig. */
export const HookConfig = v.object({
  metadata: Meta,
  command: v.pipe(v.string('command must be set'), v.minLength(1, 'command must be set')),
  timeout: v.optional(UInt, 60),
  stdin: v.optional(v.boolean()),
  runtime_assets: OptStrings,
});

/** The body of POST /checks/:name/execute. */
export const AdhocRequest = v.object({
  check: v.optional(v.string()),
  subscriptions: OptStrings,
  creator: v.optional(v.string()),
  reason: v.optional(v.string()),
});

/** An ad hoc request as queued by the API on the MONITOR_ADHOC work queue, read by the schedulers. */
export const QueuedAdhoc = v.object({
  namespace: v.pipe(v.string(), v.minLength(1)),
  check: v.pipe(v.string(), v.minLength(1)),
  subscriptions: OptStrings,
  creator: v.optional(v.string()),
  reason: v.optional(v.string()),
  issued: UInt,
});
