/**
 * `make cluster-status`: each process (pid file, alive, ports), then the cluster as its parts see
 * it: each backend's `/health` (members, shards it owns, agents) and `/ready`; etcd's members and
 * leader (`/v3/maintenance/status` and `/v3/cluster/member/list` of the JSON gateway); NATS routes,
 * the JetStream meta leader and every stream with its replicas (monitoring `/routez` and `/jsz`);
 * HAProxy's view of each server (the stats page's CSV). Exit 0 when every process is alive.
 */
import { clusterDir, savedConfig, type ClusterConfig } from './config.ts';
import { call } from './http.ts';
import { runningPid } from './processes.ts';
import {
  backendApiUrls,
  backendLegacyUrls,
  etcdUrls,
  legacyUrl,
  natsMonitorUrls,
  processes,
  statsUrl,
} from './topology.ts';

interface HaproxyServer {
  backend: string;
  server: string;
  status: string;
  check: string;
  sessions: string;
}

/** Every server line of HAProxy's stats CSV; undefined when HAProxy does not answer. */
export async function haproxyServers(c: ClusterConfig): Promise<HaproxyServer[] | undefined> {
  const a = await call(`${statsUrl(c)};csv`);
  if (a?.status !== 200) return undefined;
  const [head, ...rows] = a.text.trim().split('\n');
  const cols = (head ?? '').replace(/^# /, '').split(',');
  const at = (row: string[], name: string) => row[cols.indexOf(name)] ?? '';
  return rows
    .map((r) => r.split(','))
    .filter((r) => !['FRONTEND', 'BACKEND'].includes(at(r, 'svname')) && at(r, 'pxname') !== 'fe_stats')
    .map((r) => ({
      backend: at(r, 'pxname'),
      server: at(r, 'svname'),
      status: at(r, 'status'),
      check: at(r, 'check_status').replace(/^\* /, ''), // "* ": a check is under way
      sessions: at(r, 'scur'),
    }));
}

type Json = Record<string, any>; // eslint-disable-line @typescript-eslint/no-explicit-any

async function json(url: string, body?: string): Promise<Json | undefined> {
  const a = await call(url, body === undefined ? {} : { body });
  return a && typeof a.json === 'object' && a.json !== null
    ? { ...(a.json as Json), _status: a.status }
    : undefined;
}

async function backendsView(c: ClusterConfig, out: string[]): Promise<void> {
  out.push("backends (GET /health, /ready; the legacy API's GET /health)");
  const legacy = backendLegacyUrls(c);
  for (const [i, url] of backendApiUrls(c).entries()) {
    const [h, r, l] = await Promise.all([
      json(`${url}/health`),
      json(`${url}/ready`),
      call(`${legacy[i]}/health`),
    ]);
    const name = `backend-${i + 1}`.padEnd(10);
    if (!h) {
      out.push(`  ${name} no answer from ${url}`);
      continue;
    }
    const members = Array.isArray(h.members) ? (h.members as string[]).join(', ') : '?';
    out.push(
      // /health is 200 whenever the process serves (its report says the rest); /ready names what fails.
      `  ${name} ${h._status === 200 ? 'alive' : `alive? (${h._status})`}, ${readiness(r)}` +
        `, shards owned ${h.shards?.owned ?? '?'}/${h.shards?.total ?? '?'}, agents ${h.agents?.connected ?? '?'}` +
        `, members: ${members}, legacy API ${legacyHealth(l)}`,
    );
  }
}

/** The legacy API's /health answers 204 with no body when the node is fine (docs/operations.md#legacy-api). */
function legacyHealth(a: Awaited<ReturnType<typeof call>>): string {
  if (!a) return 'no answer';
  return a.status === 204 ? 'ok' : `${a.status}`;
}

function readiness(r: Json | undefined): string {
  if (!r) return 'ready: no answer';
  if (r._status === 200) return 'ready';
  const reasons = Array.isArray(r.reasons) ? (r.reasons as string[]).join('; ') : '';
  return `not ready (${reasons || r._status})`;
}

async function etcdView(c: ClusterConfig, out: string[]): Promise<void> {
  out.push('etcd (/v3/maintenance/status)');
  const urls = etcdUrls(c);
  let names = new Map<string, string>();
  for (const u of urls) {
    const list = await json(`${u}/v3/cluster/member/list`, '{}');
    if (Array.isArray(list?.members)) {
      names = new Map(list.members.map((m: Json) => [String(m.ID), String(m.name)]));
      break;
    }
  }
  const name = (id: unknown) => names.get(String(id)) ?? String(id);
  for (const [i, u] of urls.entries()) {
    const s = await json(`${u}/v3/maintenance/status`, '{}');
    const label = `etcd-${i + 1}`.padEnd(10);
    if (!s?.header) {
      out.push(`  ${label} no answer from ${u}`);
      continue;
    }
    const leader = s.leader && s.leader !== '0' ? name(s.leader) : 'none';
    out.push(
      `  ${label} ${s.leader === s.header.member_id ? 'leader  ' : 'follower'}  leader: ${leader}, raft term ${s.raftTerm ?? '?'}, ` +
        `members known: ${names.size}, db ${Math.round(Number(s.dbSize ?? 0) / 1024)} KiB`,
    );
  }
}

async function natsView(c: ClusterConfig, out: string[]): Promise<void> {
  out.push('nats (/routez, /jsz)');
  const streams = new Map<string, { replicas: number; leader: string }>();
  // Routes name the server at the other end by its id; /varz of each node gives id and name.
  const varz = await Promise.all(natsMonitorUrls(c).map((u) => json(`${u}/varz`)));
  const serverNames = new Map(
    varz.filter((v) => v).map((v) => [String(v!.server_id), String(v!.server_name)]),
  );
  for (const [i, u] of natsMonitorUrls(c).entries()) {
    const [routez, jsz] = await Promise.all([
      json(`${u}/routez`),
      json(`${u}/jsz?accounts=true&streams=true&config=true`),
    ]);
    const label = `nats-${i + 1}`.padEnd(10);
    if (!routez || !jsz) {
      out.push(`  ${label} no answer from ${u}`);
      continue;
    }
    const routes = Array.isArray(routez.routes)
      ? [...new Set(routez.routes.map((r: Json) => serverNames.get(r.remote_id) ?? r.remote_id))]
          .sort()
          .join(', ')
      : '';
    out.push(
      `  ${label} routes ${routez.num_routes ?? '?'} (${routes}), JetStream meta leader ${jsz.meta_cluster?.leader || 'none'}` +
        `, cluster size ${jsz.meta_cluster?.cluster_size ?? '?'}, streams ${jsz.streams ?? '?'}`,
    );
    for (const acc of jsz.account_details ?? []) {
      for (const s of acc.stream_detail ?? []) {
        const replicas = s.config?.num_replicas ?? 1 + (s.cluster?.replicas?.length ?? 0);
        streams.set(s.name, { replicas, leader: s.cluster?.leader ?? '?' });
      }
    }
  }
  const list = [...streams.entries()].sort(([a], [b]) => a.localeCompare(b));
  out.push(`  streams and KV buckets (${list.length}):`);
  for (const [name, s] of list) out.push(`    ${name.padEnd(32)} replicas ${s.replicas}, leader ${s.leader}`);
}

async function haproxyView(c: ClusterConfig, out: string[]): Promise<void> {
  out.push(`haproxy (${statsUrl(c)};csv; legacy API frontend ${legacyUrl(c)})`);
  const servers = await haproxyServers(c);
  if (!servers) {
    out.push('  no answer');
    return;
  }
  for (const s of servers)
    out.push(
      `  ${`${s.backend}/${s.server}`.padEnd(22)} ${s.status.padEnd(5)} check ${s.check || '-'}, sessions ${s.sessions}`,
    );
}

/** `status`: returns the exit status (0 when every process is alive). */
export async function status(root: string): Promise<number> {
  const dir = clusterDir(process.env, root);
  const c = savedConfig(dir);
  if (!c) {
    process.stdout.write(`no cluster in ${dir} (make cluster starts one)\n`);
    return 1;
  }
  const specs = processes(c);
  const out = [`processes (cluster in ${dir})`, `  ${'NAME'.padEnd(10)} ${'PID'.padEnd(8)} ALIVE  PORTS`];
  let alive = 0;
  for (const s of specs) {
    const pid = runningPid(s);
    if (pid !== undefined) alive++;
    out.push(
      `  ${s.name.padEnd(10)} ${String(pid ?? '-').padEnd(8)} ${pid ? 'yes' : 'no '}    ${s.ports.join(' ')}`,
    );
  }
  out.push(`  ${alive} of ${specs.length} processes alive`, '');
  if (alive > 0) {
    const views = await Promise.all(
      [backendsView, etcdView, natsView, haproxyView].map(async (view) => {
        const lines: string[] = [];
        await view(c, lines);
        return lines;
      }),
    );
    for (const lines of views) out.push(...lines, '');
  }
  process.stdout.write(`${out.join('\n')}\n`);
  return alive === specs.length ? 0 : 1;
}
