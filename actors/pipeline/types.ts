import type * as v from 'valibot';
import type { Logger } from '../../lib/log.ts';
import type { Library } from '../../lib/sandbox/index.ts';
import type { EventFilter, Handler, Mutator } from '../../proto/schemas/resources/pipeline.ts';

// The contracts between the parts of the event pipeline: what the workers' filters, mutators and
// handlers take. (The job itself is proto/pipeline-job.ts.)

export type EventFilterSpec = v.InferOutput<typeof EventFilter>;
export type MutatorSpec = v.InferOutput<typeof Mutator>;
export type HandlerSpec = v.InferOutput<typeof Handler>;

/** What filter expressions see besides the event's own fields (docs/compatibility.md#filters). */
export interface EventExtras {
  has_check: boolean;
  has_metrics: boolean;
  is_incident: boolean;
  is_resolution: boolean;
  is_silenced: boolean;
  is_flapping_start: boolean;
  is_flapping_end: boolean;
}

/** A filter of a workflow: a built-in by name, or an EventFilter resource. */
export type FilterRef =
  | { kind: 'builtin'; name: 'is_incident' | 'not_silenced' | 'has_metrics' }
  | { kind: 'resource'; filter: EventFilterSpec };

/** A mutator of a workflow: a built-in by name, or a Mutator resource. */
export type MutatorRef =
  | { kind: 'builtin'; name: 'json' | 'only_check_output' | 'legacy' }
  | { kind: 'resource'; mutator: MutatorSpec };

/** A filter's libraries, and which versions of its assets they come from (part of its sandbox's identity). */
export interface FilterLibraries {
  key: string;
  list: Library[];
}

/** The environment a command (pipe mutator or handler) runs with. */
export interface ExecContext {
  log: Logger;
  /** Variables of the backend's own environment the command inherits (PATH, HOME, ...). */
  baseEnv: Record<string, string | undefined>;
  /** Puts the named assets of `namespace` in place; returns the variables to add/prepend. */
  assets(names: string[], namespace: string): Promise<{ env: Record<string, string> }>;
  /** The JavaScript libraries of a filter's runtime assets (docs/compatibility.md#filter-runtime-assets). */
  filterLibraries?(names: string[], namespace: string): Promise<FilterLibraries>;
  /** Where the `env` secrets provider reads (lib/secrets.ts): the backend's whole environment unless given. */
  secretEnv?: NodeJS.ProcessEnv;
  /** Aborted when the node stops: running commands are killed. */
  signal?: AbortSignal;
}

/** The outcome of one handler run, for logs and metrics. */
export interface HandlerOutcome {
  handler: string;
  ok: boolean;
  /** Milliseconds. */
  duration: number;
  error?: string;
  /** Exit status of a pipe handler. */
  status?: number;
}
