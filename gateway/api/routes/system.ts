import { Hono } from 'hono';

export interface HealthReport {
  healthy: boolean;
  node: string;
  etcd: { healthy: boolean; error?: string };
  nats: { healthy: boolean; error?: string };
  shards: { owned: number; total: number };
  members: string[];
  agents: { connected: number };
  runtime: { actors: number; timers: number; mailbox_depth: number; committed_turns: number };
}

export interface VersionReport {
  monitor_backend: string;
  etcd: { etcdserver?: string; etcdcluster?: string };
  api_groups: Record<string, string>;
}

/** `/health` (200 when this node can reach etcd and NATS, else 503) and `/version`. */
export function systemRoutes(deps: { health: () => Promise<HealthReport>; version: () => Promise<VersionReport> }): Hono {
  const app = new Hono();
  app.get('/health', async (c) => {
    const report = await deps.health();
    return c.json(report, report.healthy ? 200 : 503);
  });
  app.get('/version', async (c) => c.json(await deps.version()));
  return app;
}
