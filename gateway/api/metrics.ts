import type { MiddlewareHandler } from 'hono';
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from 'prom-client';
import type { PipelineStats } from '../../actors/pipeline/worker.ts';

/** Numbers read at scrape time from the parts of the node that keep them. */
interface NodeGauges {
  agentsConnected(): number;
  mailboxDepth(): number;
  actorsActive(): number;
  shardsOwned(): number;
  turnsCommitted(): number;
  eventsProcessed(): number;
  keepalivesProcessed(): number;
  /** The pipeline worker's counters (absent on a node without one). */
  pipeline?(): PipelineStats;
}

/**
 * The node's Prometheus metrics: HTTP requests (by method, route pattern and status) and their
 * latency, plus the node gauges and counters, and the process defaults (CPU, memory, event loop).
 */
export class NodeMetrics {
  readonly registry = new Registry();
  private readonly requests: Counter<'method' | 'route' | 'status'>;
  private readonly latency: Histogram<'method' | 'route'>;

  constructor(g: NodeGauges) {
    collectDefaultMetrics({ register: this.registry, prefix: 'monitor_backend_' });
    this.requests = new Counter({
      name: 'monitor_http_requests_total',
      help: 'HTTP requests answered',
      labelNames: ['method', 'route', 'status'],
      registers: [this.registry],
    });
    this.latency = new Histogram({
      name: 'monitor_http_request_duration_seconds',
      help: 'Time to answer an HTTP request',
      labelNames: ['method', 'route'],
      buckets: [0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5],
      registers: [this.registry],
    });
    const gauge = (name: string, help: string, read: () => number) =>
      new Gauge({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.set(read());
        },
      });
    gauge('monitor_agents_connected', 'Agent sessions connected to this node', g.agentsConnected);
    gauge(
      'monitor_actor_mailbox_depth',
      "Messages waiting in the mailboxes of this node's actors",
      g.mailboxDepth,
    );
    gauge('monitor_actors_active', 'Actors in memory on this node', g.actorsActive);
    gauge('monitor_shards_owned', 'Shards this node owns', g.shardsOwned);
    // Counters owned elsewhere, exposed with counter semantics.
    const counter = (name: string, help: string, read: () => number) =>
      new Counter({
        name,
        help,
        registers: [this.registry],
        collect() {
          this.reset();
          this.inc(read());
        },
      });
    counter('monitor_actor_turns_total', 'Actor turns committed on this node', g.turnsCommitted);
    counter(
      'monitor_events_processed_total',
      "Check events stored by this node's entity actors",
      g.eventsProcessed,
    );
    counter(
      'monitor_keepalives_processed_total',
      "Keepalives processed by this node's entity actors",
      g.keepalivesProcessed,
    );
    const p = g.pipeline;
    if (p) {
      counter('monitor_pipeline_jobs_total', 'Pipeline jobs this node finished', () => p().jobs);
      counter('monitor_pipeline_handler_runs_total', 'Handlers this node ran', () => p().handlerRuns);
      counter(
        'monitor_pipeline_handler_failures_total',
        'Handler runs that failed (exit status, socket error, timeout)',
        () => p().handlerFailures,
      );
      counter('monitor_pipeline_filtered_total', 'Workflows a filter stopped', () => p().filtered);
      counter('monitor_pipeline_mutator_errors_total', 'Mutators that failed', () => p().mutatorErrors);
      counter(
        'monitor_pipeline_jobs_deferred_total',
        'Jobs put back on the queue because their handler was at its per-node cap',
        () => p().deferred,
      );
      counter(
        'monitor_pipeline_jobs_parked_total',
        'Jobs started too many times without finishing, moved to MONITOR_PIPELINE_DEAD',
        () => p().parked,
      );
      gauge('monitor_pipeline_jobs_running', 'Pipeline jobs running on this node', () => p().running);
    }
  }

  middleware(): MiddlewareHandler {
    return async (c, next) => {
      const start = process.hrtime.bigint();
      await next();
      const route = c.req.routePath || 'unmatched';
      this.requests.inc({ method: c.req.method, route, status: String(c.res.status) });
      this.latency.observe({ method: c.req.method, route }, Number(process.hrtime.bigint() - start) / 1e9);
    };
  }

  render(): Promise<string> {
    return this.registry.metrics();
  }
  get contentType(): string {
    return this.registry.contentType;
  }
}
