import type { Logger } from '../../lib/log.ts';
import { applyFilter, type FilterLibs } from './filters.ts';
import { mutate } from './mutators/index.ts';
import { runHandler } from './handlers/index.ts';
import { eventExtras } from './synthesize.ts';
import type { PipelineJob } from '../../proto/pipeline-job.ts';
import type { ExecContext, HandlerOutcome } from './types.ts';
import type { Workflow } from './workflows.ts';

interface JobReport {
  workflows: number;
  /** Workflows a filter stopped. */
  filtered: number;
  handled: HandlerOutcome[];
  /** A mutator failed: the rest of that pipeline did not run. */
  errors: string[];
}

/**
 * Runs one job through its workflows, one after the other (docs/compatibility.md#pipeline-workflows): the
 * first filter that drops the event skips the workflow; a mutator that fails aborts the rest of its pipeline.
 * The payload of a mutator is computed once per job, however many workflows use it.
 */
export const jobNamespace = (job: PipelineJob) =>
  job.event.metadata?.namespace ?? job.event.entity?.metadata.namespace ?? 'default';

export async function runJob(
  job: PipelineJob,
  workflows: Workflow[],
  ctx: ExecContext,
  log: Logger,
  eventJson?: string,
): Promise<JobReport> {
  const namespace = jobNamespace(job);
  const report: JobReport = { workflows: workflows.length, filtered: 0, handled: [], errors: [] };
  if (workflows.length === 0) return report;
  const extras = eventExtras(job.event, job.previous_state);
  const now = new Date();
  const payloads = new Map<string, Promise<Buffer>>();
  const aborted = new Set<string>();
  const libraries = new Map<string, Promise<FilterLibs>>();
  const librariesOf = (names: string[]) => {
    const key = names.join('\0');
    let p = libraries.get(key);
    if (!p) libraries.set(key, (p = loadLibraries(names, namespace, ctx)));
    return p;
  };
  for (const w of workflows) {
    if (aborted.has(w.pipeline)) continue;
    const dropped = await dropReason(w, job, extras, now, log, librariesOf);
    if (dropped) {
      report.filtered++;
      log.debug('event filtered', {
        job: job.id,
        workflow: w.name,
        handler: w.handler.metadata.name,
        reason: dropped,
      });
      continue;
    }
    const key = mutatorKey(w);
    let payload = payloads.get(key);
    if (!payload) {
      payload = mutate(w.mutator, job.event, namespace, ctx, eventJson);
      payloads.set(key, payload);
    }
    let body: Buffer;
    try {
      body = await payload;
    } catch (err) {
      const msg = (err as Error).message;
      report.errors.push(msg);
      aborted.add(w.pipeline);
      log.error('mutator failed: the rest of the pipeline is skipped', {
        job: job.id,
        pipeline: w.pipeline,
        workflow: w.name,
        error: msg,
      });
      continue;
    }
    const outcome = await runHandler(w.handler, body, namespace, ctx);
    report.handled.push(outcome);
  }
  return report;
}

async function dropReason(
  w: Workflow,
  job: PipelineJob,
  extras: ReturnType<typeof eventExtras>,
  now: Date,
  log: Logger,
  librariesOf: (names: string[]) => Promise<FilterLibs>,
): Promise<string | undefined> {
  for (const f of w.filters) {
    const names = f.kind === 'resource' ? (f.filter.runtime_assets ?? []) : [];
    const libs = names.length ? await librariesOf(names) : undefined;
    const d = applyFilter(f, job.event, extras, now, log, libs);
    if (!d.pass) return d.reason ?? (f.kind === 'builtin' ? f.name : f.filter.metadata.name);
  }
  return undefined;
}

const mutatorKey = (w: Workflow) =>
  w.mutator === undefined
    ? 'json'
    : w.mutator.kind === 'builtin'
      ? w.mutator.name
      : `resource:${w.mutator.mutator.metadata.name}`;

/** A filter's runtime assets as JavaScript libraries; a failure is the filter's, not the job's. */
async function loadLibraries(names: string[], namespace: string, ctx: ExecContext): Promise<FilterLibs> {
  const failed = (error: string): FilterLibs => ({ key: `error:${error}`, error });
  if (!ctx.filterLibraries) return failed('runtime assets of filters are not available on this node');
  try {
    return await ctx.filterLibraries(names, namespace);
  } catch (err) {
    return failed(`runtime assets ${names.join(', ')}: ${(err as Error).message}`);
  }
}
