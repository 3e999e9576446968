import { Hono } from 'hono';
import type { NodeMetrics } from '../metrics.ts';
import { HealthQuery } from '../../../proto/schemas/health.ts';
import { uint64Json, type EtcdHealthFields } from '../cluster-shapes.ts';
import { validate } from '../http.ts';

/**
 * Our own fields, and beside them the reference's (`Alarms`, `ClusterHealth`, `Header`: the etcd
 * cluster's members as Sensu's tools read them; docs/compatibility.md#cluster-members-and-member-health).
 */
export interface HealthReport extends EtcdHealthFields {
  healthy: boolean;
  node: string;
  etcd: { healthy: boolean; error?: string };
  nats: { healthy: boolean; error?: string };
  shards: { owned: number; total: number };
  members: string[];
  agents: { connected: number };
  runtime: { actors: number; timers: number; mailbox_depth: number; committed_turns: number };
  pipeline?: { running: number; jobs: number };
  /**
   * The datastore's version, the latest this backend knows, and the titles of the migrations
   * `monitor-backend upgrade` would apply (absent while etcd does not answer; `error` when the
   * version key holds something else).
   */
  datastore?: { version?: number; latest: number; pending?: string[]; error?: string };
  /** What `/ready` answers now. */
  ready: ReadyReport;
}

/** What `GET /ready` answers: ready, or the conditions that fail, each as "<part>: <why>". */
export interface ReadyReport {
  ready: boolean;
  reasons: string[];
}

interface VersionReport {
  monitor_backend: string;
  etcd: { etcdserver?: string; etcdcluster?: string };
  api_groups: Record<string, string>;
}

export interface SystemDeps {
  /** `timeoutMs`: how long each etcd member's check may take (`?timeout=` seconds). */
  health: (opts?: { timeoutMs?: number }) => Promise<HealthReport>;
  version: () => Promise<VersionReport>;
  /** Cheap (probed every second): state the node tracks, no round trip (docs/architecture.md#readiness-and-liveness). */
  ready: () => ReadyReport;
  metrics: NodeMetrics;
}

/**
 * Public routes: `/health` (liveness: 200 whenever the process serves, the report in the body),
 * `/ready` (503 naming what fails; docs/architecture.md#readiness-and-liveness), `/version`, `/metrics`.
 */
export function systemRoutes(deps: SystemDeps): Hono {
  const app = new Hono();
  // A liveness probe that failed while etcd or NATS is away would have every node restarted at once
  // for an outage a restart cannot mend; what is out of reach is in the report.
  app.get('/health', async (c) => {
    const { timeout } = validate(HealthQuery, { timeout: c.req.query('timeout') }, 'health query');
    const report = await deps.health(timeout === undefined ? {} : { timeoutMs: timeout * 1000 });
    return c.body(uint64Json(report), 200, { 'Content-Type': 'application/json' });
  });
  app.get('/ready', (c) => {
    const report = deps.ready();
    return c.json(report, report.ready ? 200 : 503);
  });
  app.get('/version', async (c) => c.json(await deps.version()));
  app.get('/metrics', async (c) =>
    c.body(await deps.metrics.render(), 200, { 'Content-Type': deps.metrics.contentType }),
  );
  return app;
}
