import { configKeys } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { ConfigStore } from '../config/store.ts';
import { namedHandlers, pipelineRefs, type PipelineInterest } from '../../proto/pipeline-job.ts';
import type { EventFilterSpec, FilterRef, HandlerSpec, MutatorRef, MutatorSpec } from './types.ts';

// Which workflows an event runs through (docs/compatibility.md#pipeline-workflows): the legacy path made of
// the handlers its check and metrics name (each its own workflow with the handler's filters and mutator),
// then every Pipeline resource the event or its check references. Resolved on the worker from the node's
// configuration cache, so a handler changed meanwhile applies to events still queued.

/** A `set` handler expands into its members, nested at most this deep (docs/compatibility.md#handler-sets). */
const MAX_SET_DEPTH = 3;
const BUILTIN_FILTERS = new Set(['is_incident', 'not_silenced', 'has_metrics']);
const BUILTIN_MUTATORS = new Set(['json', 'only_check_output', 'legacy']);

export interface Workflow {
  name: string;
  /** The pipeline it belongs to (`legacy` for the handlers an event names). */
  pipeline: string;
  filters: FilterRef[];
  mutator?: MutatorRef;
  handler: HandlerSpec & { metadata: { name: string } };
}

export class WorkflowResolver {
  /**
   * `namespace/handler` of the missing handlers already warned about: one warning per name for the
   * life of the process, not one per event; forgotten when the handler shows up, so it warns again
   * if it goes away later (docs/operations.md#logs).
   */
  private readonly missing = new Set<string>();

  constructor(
    private readonly config: ConfigStore,
    private readonly log: Logger,
  ) {}

  /** Every workflow of the event, in order: legacy ones sorted by name, then each pipeline's own. */
  resolve(namespace: string, event: Event): Workflow[] {
    const out: Workflow[] = [];
    const legacy = new Map<string, HandlerSpec & { metadata: { name: string } }>();
    for (const name of namedHandlers(event)) this.expand(namespace, name, 0, legacy, new Set());
    for (const name of [...legacy.keys()].sort()) {
      const handler = legacy.get(name)!;
      const w = this.workflow(
        namespace,
        `legacy-pipeline-workflow-${name}`,
        'legacy',
        handler.filters ?? [],
        handler.mutator,
        handler,
      );
      if (w) out.push(w);
    }
    const seen = new Set<string>();
    for (const ref of pipelineRefs(event)) {
      const name = typeof ref.name === 'string' ? ref.name : '';
      if (!name || seen.has(name)) continue;
      seen.add(name);
      if (ref.type !== undefined && ref.type !== 'Pipeline') {
        this.log.warn('event references a pipeline of an unknown type', {
          namespace,
          pipeline: name,
          type: ref.type,
        });
        continue;
      }
      out.push(...this.pipeline(namespace, name));
    }
    return out;
  }

  private pipeline(namespace: string, name: string): Workflow[] {
    const p = this.config.get<{
      workflows?: Array<{
        name: string;
        filters?: Array<{ name: string; type: string }> | null;
        mutator?: { name: string; type: string } | null;
        handler: { name: string; type: string };
      }>;
    }>(configKeys.namespaced('pipelines', namespace, name));
    if (!p) {
      this.log.warn('event references a pipeline that does not exist', { namespace, pipeline: name });
      return [];
    }
    const out: Workflow[] = [];
    for (const wf of p.workflows ?? []) {
      if (wf.handler.type !== 'Handler') {
        this.log.warn('pipeline workflow handler type is not supported', {
          namespace,
          pipeline: name,
          workflow: wf.name,
          type: wf.handler.type,
        });
        continue;
      }
      const handlers = new Map<string, HandlerSpec & { metadata: { name: string } }>();
      this.expand(namespace, wf.handler.name, 0, handlers, new Set());
      const filters = (wf.filters ?? [])
        .filter((f) => {
          if (f.type === 'EventFilter') return true;
          this.log.warn('pipeline workflow filter type is not supported', {
            namespace,
            pipeline: name,
            workflow: wf.name,
            type: f.type,
          });
          return false;
        })
        .map((f) => f.name);
      for (const h of handlers.values()) {
        const w = this.workflow(namespace, wf.name, name, filters, wf.mutator?.name, h);
        if (w) out.push(w);
      }
    }
    return out;
  }

  /** Adds `name` (or, for a set, its members) to `into`; missing handlers are logged and skipped. */
  private expand(
    namespace: string,
    name: string,
    depth: number,
    into: Map<string, HandlerSpec & { metadata: { name: string } }>,
    path: Set<string>,
  ): void {
    const h = this.config.get<HandlerSpec>(configKeys.namespaced('handlers', namespace, name));
    const key = `${namespace}/${name}`;
    if (!h) {
      if (this.missing.has(key)) return;
      this.missing.add(key);
      this.log.warn('handler does not exist', { namespace, handler: name });
      return;
    }
    this.missing.delete(key);
    if (h.type !== 'set') {
      into.set(name, { ...h, metadata: { ...h.metadata, name } });
      return;
    }
    if (depth >= MAX_SET_DEPTH || path.has(name)) {
      this.log.warn('handler set nested too deep or in a loop: its members are skipped', {
        namespace,
        handler: name,
        depth,
      });
      return;
    }
    path.add(name);
    for (const member of h.handlers ?? []) this.expand(namespace, member, depth + 1, into, path);
    path.delete(name);
  }

  private workflow(
    namespace: string,
    name: string,
    pipeline: string,
    filterNames: string[],
    mutatorName: string | undefined,
    handler: HandlerSpec & { metadata: { name: string } },
  ): Workflow | undefined {
    const filters: FilterRef[] = [];
    for (const f of filterNames) {
      if (BUILTIN_FILTERS.has(f)) {
        filters.push({ kind: 'builtin', name: f as 'is_incident' });
        continue;
      }
      const filter = this.config.get<EventFilterSpec>(configKeys.namespaced('filters', namespace, f));
      // As the reference: a filter that does not exist is ignored (logged), the workflow still runs.
      if (!filter) {
        this.log.warn('filter does not exist: ignored', { namespace, filter: f, workflow: name });
        continue;
      }
      filters.push({ kind: 'resource', filter: { ...filter, metadata: { ...filter.metadata, name: f } } });
    }
    let mutator: MutatorRef | undefined;
    if (mutatorName) {
      if (BUILTIN_MUTATORS.has(mutatorName)) mutator = { kind: 'builtin', name: mutatorName as 'json' };
      else {
        const m = this.config.get<MutatorSpec>(configKeys.namespaced('mutators', namespace, mutatorName));
        // Without its mutator a handler would get a payload it does not expect: the workflow is not run.
        if (!m) {
          this.log.warn('mutator does not exist: workflow not run', {
            namespace,
            mutator: mutatorName,
            workflow: name,
            handler: handler.metadata.name,
          });
          return undefined;
        }
        mutator = { kind: 'resource', mutator: { ...m, metadata: { ...m.metadata, name: mutatorName } } };
      }
    }
    return { name, pipeline, filters, mutator, handler };
  }
}

/**
 * Whether an event has anything to run: a handler it names exists, or it references a pipeline.
 * Decided before queueing, so events nobody handles (most keepalives) cost no job.
 */
export function pipelineInterest(config: ConfigStore): PipelineInterest {
  return (namespace, event) => {
    if (pipelineRefs(event).length > 0) return true;
    for (const h of namedHandlers(event))
      if (config.get(configKeys.namespaced('handlers', namespace, h)) !== undefined) return true;
    return false;
  };
}
