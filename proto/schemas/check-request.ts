import * as v from 'valibot';
import { ObjectMeta, StringMap, UInt } from './common.ts';
import { MetricThresholds } from './metric-thresholds.ts';

// The `check_request` frame from the backend (core/v2 CheckRequest). Loose objects: the check
// configuration carries many fields the agent does not act on, and they travel into the event
// unchanged. Only what the agent acts on is checked, so a malformed request is refused whole.

const OptStrings = v.optional(v.nullable(v.array(v.string())));
const Tag = v.object({ name: v.string(), value: v.string() });

export const HOOK_TYPE =
  /^(ok|warning|critical|unknown|non-zero|[0-9]|[1-9][0-9]|1[0-9][0-9]|2[0-4][0-9]|25[0-5])$/;

export const RequestCheckConfig = v.looseObject({
  metadata: v.looseObject({
    ...ObjectMeta.entries,
    name: v.pipe(v.string(), v.minLength(1, 'check name must be set')),
  }),
  command: v.pipe(v.string('command must be set'), v.minLength(1, 'command must be set')),
  timeout: v.optional(UInt),
  stdin: v.optional(v.boolean()),
  env_vars: OptStrings,
  check_hooks: v.optional(
    v.nullable(
      v.array(
        v.object({
          type: v.pipe(
            v.string(),
            v.regex(HOOK_TYPE, 'hook type is 0-255, ok, warning, critical, unknown or non-zero'),
          ),
          hooks: OptStrings,
        }),
      ),
    ),
  ),
  output_metric_format: v.optional(v.string()),
  output_metric_tags: v.optional(v.nullable(v.array(Tag))),
  output_metric_handlers: OptStrings,
  output_metric_thresholds: MetricThresholds,
  max_output_size: v.optional(UInt),
  discard_output: v.optional(v.boolean()),
  proxy_entity_name: v.optional(v.string()),
  runtime_assets: OptStrings,
  interval: v.optional(UInt),
  handlers: OptStrings,
  ttl: v.optional(v.number()),
});
export type RequestCheckConfig = v.InferOutput<typeof RequestCheckConfig>;

export const RequestHookConfig = v.looseObject({
  metadata: v.looseObject({
    ...ObjectMeta.entries,
    name: v.pipe(v.string(), v.minLength(1, 'hook name must be set')),
  }),
  command: v.pipe(v.string('hook command must be set'), v.minLength(1, 'hook command must be set')),
  timeout: v.optional(UInt),
  stdin: v.optional(v.boolean()),
  runtime_assets: OptStrings,
});
export type RequestHookConfig = v.InferOutput<typeof RequestHookConfig>;

/** Assets travel as resources; the asset manager validates what it uses. */
const RequestAsset = v.looseObject({ metadata: v.looseObject({ name: v.optional(v.string()) }) });

export const CheckRequest = v.object({
  config: RequestCheckConfig,
  assets: v.optional(v.nullable(v.array(RequestAsset))),
  hooks: v.optional(v.nullable(v.array(RequestHookConfig))),
  issued: UInt,
  hook_assets: v.optional(v.nullable(v.record(v.string(), v.unknown()))),
  secrets: v.optional(v.nullable(v.union([v.array(v.unknown()), StringMap]))),
  /** Ours (docs/compatibility.md#secrets): why secrets of the check could not be resolved; never values. */
  secret_errors: v.optional(v.nullable(v.array(v.string()))),
});
export type CheckRequest = v.InferOutput<typeof CheckRequest>;

/** One entry of the allow-list file (docs/compatibility.md#allow-list). */
export const AllowListEntry = v.object({
  exec: v.pipe(v.string('exec must be a string'), v.minLength(1, 'exec must not be empty')),
  args: v.optional(v.nullable(v.array(v.string('args must be strings'))), []),
  sha512: v.optional(
    v.pipe(v.string(), v.regex(/^[0-9a-fA-F]{128}$/, 'sha512 must be 128 hexadecimal characters')),
  ),
  enable_env: v.optional(v.boolean(), false),
});
export const AllowList = v.array(
  AllowListEntry,
  'the allow list is a list of {exec, args, sha512, enable_env}',
);
export type AllowListEntry = v.InferOutput<typeof AllowListEntry>;
