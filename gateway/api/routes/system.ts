import { Hono } from 'hono';
import type { NodeMetrics } from '../metrics.ts';

export interface HealthReport {
  healthy: boolean;
  node: string;
  etcd: { healthy: boolean; error?: string };
  nats: { healthy: boolean; error?: string };
  shards: { owned: number; total: number };
  members: string[];
  agents: { connected: number };
  runtime: { actors: number; timers: number; mailbox_depth: number; committed_turns: number };
  pipeline?: { running: number; jobs: number };
}

interface VersionReport {
  monitor_backend: string;
  etcd: { etcdserver?: string; etcdcluster?: string };
  api_groups: Record<string, string>;
}

export interface SystemDeps {
  health: () => Promise<HealthReport>;
  version: () => Promise<VersionReport>;
  /** True once this node serves complete answers: configuration and read models loaded, member of the cluster. */
  ready: () => boolean;
  metrics: NodeMetrics;
}

/** Public routes: `/health` (503 when etcd or NATS is out of reach), `/ready`, `/version`, `/metrics`. */
export function systemRoutes(deps: SystemDeps): Hono {
  const app = new Hono();
  app.get('/health', async (c) => {
    const report = await deps.health();
    return c.json(report, report.healthy ? 200 : 503);
  });
  app.get('/ready', (c) => (deps.ready() ? c.json({ ready: true }) : c.json({ ready: false }, 503)));
  app.get('/version', async (c) => c.json(await deps.version()));
  app.get('/metrics', async (c) =>
    c.body(await deps.metrics.render(), 200, { 'Content-Type': deps.metrics.contentType }),
  );
  return app;
}
