import { readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { BackendConfig } from '../proto/schemas/backend-config.ts';
import { buckets, encodeToken, etcdKeys, SHARD_COUNT, streams, subjects } from '../proto/names.ts';
import type { Logger } from '../lib/log.ts';
import { VERSION } from '../proto/version.ts';
import { checkPortsFree, claimStateDir, startEmbeddedEtcd, startEmbeddedNats, type EmbeddedService } from '../lib/embedded/index.ts';
import { EtcdAdapter } from '../actors/runtime/etcd.ts';
import { NatsAdapter, type KvStore } from '../actors/runtime/nats.ts';
import { Membership } from '../actors/runtime/membership.ts';
import { ShardManager } from '../actors/runtime/shards.ts';
import { ActorHost } from '../actors/runtime/host.ts';
import { ActorClient } from '../actors/runtime/ask.ts';
import { ConfigStore } from '../actors/config/store.ts';
import { entityBehavior, type EntityStats } from '../actors/entity/actor.ts';
import { EntityReads } from '../actors/entity/reads.ts';
import { EntityReadModel } from '../actors/entity/read-model.ts';
import { EntityLimit } from '../actors/entity/limit.ts';
import { scheduleBehavior } from '../actors/schedule/actor.ts';
import { ScheduleReconciler } from '../actors/schedule/reconciler.ts';
import { startAdhocExecutor } from '../actors/schedule/adhoc.ts';
import { WorkflowResolver, pipelineInterest } from '../actors/pipeline/workflows.ts';
import { PipelineWorker } from '../actors/pipeline/worker.ts';
import { PipelineQueue } from '../actors/pipeline/queue.ts';
import { BackendAssets } from '../actors/pipeline/assets.ts';
import { SilencedIndex } from '../actors/config/silenced-index.ts';
import { silencedBy, toDeleteOnResolve } from '../actors/entity/silencing.ts';
import { encodeFrame } from '../proto/frames.ts';
import { Authorizer } from '../gateway/auth/rbac.ts';
import { VerifiedCache } from '../gateway/auth/passwords.ts';
import { TokenService } from '../gateway/auth/tokens.ts';
import { Authenticator } from '../gateway/auth/login.ts';
import { directoryLogin, directoryLookup } from '../gateway/auth/ldap.ts';
import { NodeMetrics } from '../gateway/api/metrics.ts';
import { seedCluster } from '../gateway/auth/seed.ts';
import { AgentGateway } from '../gateway/agents/server.ts';
import { loadAgentServerTls } from '../gateway/agents/tls.ts';
import { buildApi } from '../gateway/api/app.ts';
import { listenApi } from '../gateway/api/server.ts';
import type { HealthReport } from '../gateway/api/routes/system.ts';

export interface BackendNode {
  stop(): Promise<void>;
  /** Resolves with an error message when an embedded service died for good. */
  fatal: Promise<string>;
}

/** The environment handlers inherit: the backend's own, without its configuration (which may hold credentials). */
const handlerEnv = (env: NodeJS.ProcessEnv) => Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('MONITOR_')));

const displayHost = (h: string) => (h === '[::]' || h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.replace(/^\[|\]$/g, ''));

/** Checks that the cluster was made with our shard count (it cannot change without a migration). */
async function ensureClusterConfig(etcd: EtcdAdapter): Promise<void> {
  const value = JSON.stringify({ shards: SHARD_COUNT });
  const res = await etcd.createIfAbsent(etcdKeys.clusterConfig, value);
  if (res.created || !res.existing) return;
  const shards = (JSON.parse(res.existing.value) as { shards?: number }).shards;
  if (shards !== SHARD_COUNT) throw new Error(`the cluster uses ${shards} shards and this backend ${SHARD_COUNT}; it cannot join`);
}

/**
 * Starts one backend node: embedded etcd and NATS when no external ones are given, then the actor
 * host and shard ownership, then the agent and API listeners. Stops in the reverse order.
 */
export async function startBackendNode(cfg: BackendConfig, log: Logger, agentTls = loadAgentServerTls(cfg)): Promise<BackendNode> {
  const stops: Array<() => Promise<void>> = [];
  const stopAll = async () => { for (const s of stops.reverse()) await s().catch((e) => log.warn('stop step failed', { error: (e as Error).message })); stops.length = 0; };
  let reportFatal!: (msg: string) => void;
  const fatal = new Promise<string>((r) => { reportFatal = r; });

  try {
    const releaseDir = await claimStateDir(cfg['state-dir'], log);
    stops.push(async () => releaseDir());
    await checkPortsFree([
      { host: cfg['api-host'], port: cfg['api-port'], flag: 'api-port' },
      { host: cfg['agent-host'], port: cfg['agent-port'], flag: 'agent-port' },
    ]);

    const embedded: EmbeddedService[] = [];
    let etcdUrls = cfg['etcd-client-urls'];
    if (etcdUrls.length === 0) {
      const svc = await startEmbeddedEtcd({ stateDir: cfg['state-dir'], node: cfg.name, listenClientUrls: cfg['etcd-listen-client-urls'], listenPeerUrls: cfg['etcd-listen-peer-urls'], log: log.child({ component: 'embedded-etcd' }) });
      embedded.push(svc);
      stops.push(() => svc.stop());
      etcdUrls = svc.endpoints;
    }
    let natsUrls = cfg['nats-url'];
    if (natsUrls.length === 0) {
      const svc = await startEmbeddedNats({ stateDir: cfg['state-dir'], node: cfg.name, listen: cfg['nats-listen'], log: log.child({ component: 'embedded-nats' }) });
      embedded.push(svc);
      stops.push(() => svc.stop());
      natsUrls = svc.endpoints;
    }
    for (const svc of embedded) svc.onFatal((err) => reportFatal(err.message));

    const etcd = new EtcdAdapter({ endpoints: etcdUrls });
    stops.push(() => etcd.close());
    await ensureClusterConfig(etcd);
    await seedCluster(etcd, log);

    const nats = await NatsAdapter.connect({ servers: natsUrls, name: `monitor-backend/${cfg.name}` });
    stops.push(() => nats.close());
    nats.watchStatus((s) => (s === 'disconnected' ? log.warn('NATS connection lost, reconnecting') : log.info('NATS connection restored')));
    const stores = new Map<string, KvStore>();
    for (const b of Object.values(buckets)) stores.set(b, await nats.kv(b, { replicas: cfg['nats-replicas'] }));

    const config = new ConfigStore(etcd, log.child({ component: 'config' }));
    await config.start();
    stops.push(() => config.stop());

    const leaseFile = join(cfg['state-dir'], 'member.lease');
    let previousLeaseId: string | undefined;
    try { previousLeaseId = readFileSync(leaseFile, 'utf8').trim() || undefined; } catch { /* first start */ }
    const apiUrl = `http://${displayHost(cfg['api-host'])}:${cfg['api-port']}`;
    const agentUrl = `${agentTls ? 'wss' : 'ws'}://${displayHost(cfg['agent-host'])}:${cfg['agent-port']}`;
    const membership = new Membership(etcd, {
      node: cfg.name, ttlSeconds: cfg['cluster-lease-ttl'], guardMarginMs: Math.min(1500, cfg['cluster-lease-ttl'] * 150),
      info: { version: VERSION, api_url: apiUrl, agent_url: agentUrl }, previousLeaseId,
      onLease: (id) => { try { writeFileSync(leaseFile, id); } catch { /* best effort */ } },
      log: log.child({ component: 'membership' }),
    });
    await nats.workQueue(streams.pipeline, subjects.pipelinePrefix, { replicas: cfg['nats-replicas'] });
    const interest = pipelineInterest(config);
    const pipelineQueue = new PipelineQueue(nats, interest);
    const silenced = new SilencedIndex(config);
    const readModel = new EntityReadModel(stores.get(buckets.entities)!, stores.get(buckets.events)!);
    const entityLimit = new EntityLimit(cfg['entity-limit'], readModel);
    const entityStats: EntityStats = { events: 0, keepalives: 0 };
    const host = new ActorHost({
      nats, stores, shardCount: SHARD_COUNT, guard: () => membership.guardOk(),
      publishDurable: (subject, data, msgId) => nats.publishDurable(subject, data, msgId),
      behaviors: [entityBehavior({
        node: cfg.name, stats: entityStats, deregistrationHandler: cfg['deregistration-handler'], interest,
        silence: (ns, event, entity, nowSec) => {
          const entries = silenced.forNamespace(ns);
          if (entries.length === 0) return { names: [], onResolve: [] };
          const names = silencedBy(entries, event, entity, nowSec);
          return { names, onResolve: names.length ? toDeleteOnResolve(entries, names) : [] };
        },
        unsilence: async (ns, names) => {
          for (const name of names) {
            await silenced.remove(ns, name).catch((err) => log.warn('expire_on_resolve: silenced entry not removed', { namespace: ns, silenced: name, error: (err as Error).message }));
          }
        },
        pushConfig: (ns, name, entity) => nats.publish(subjects.agent(ns, name), encodeFrame('entity_config', JSON.stringify(entity))),
      }), scheduleBehavior({ config, readModel, publish: (subject, data) => nats.publish(subject, data) })], log: log.child({ component: 'actors' }),
    });
    const shards = new ShardManager(etcd, membership, host, { shardCount: SHARD_COUNT, log: log.child({ component: 'shards' }) });
    await membership.join();
    stops.push(() => membership.leave());
    stops.push(() => host.stop());
    shards.start();
    stops.push(() => shards.stop());

    const actors = new ActorClient(nats, SHARD_COUNT, host);
    const reconciler = new ScheduleReconciler(config, actors, log.child({ component: 'schedule' }));
    reconciler.start();
    stops.push(async () => reconciler.stop());
    const authz = new Authorizer(config);
    const passwords = new VerifiedCache();
    const gateway = new AgentGateway({ tls: agentTls, host: cfg['agent-host'], port: cfg['agent-port'], node: cfg.name, config, authz, actors, nats, entityLimit, pipeline: pipelineQueue, log: log.child({ component: 'agents' }) });
    await gateway.start();
    stops.push(() => gateway.stop());

    const tokens = new TokenService(etcd);
    await tokens.start();
    stops.push(() => tokens.stop());
    const reads = new EntityReads(stores.get(buckets.entities)!, stores.get(buckets.events)!, SHARD_COUNT);
    let readModelReady = false;
    void readModel.start().then(() => { readModelReady = true; });
    stops.push(async () => readModel.stop());
    const pipelineLog = log.child({ component: 'pipeline' });
    const pipeline = new PipelineWorker({
      nats, resolver: new WorkflowResolver(config, pipelineLog), log: pipelineLog, concurrency: cfg['pipeline-workers'],
      exec: {
        log: pipelineLog, baseEnv: { ...handlerEnv(process.env), MONITOR_BACKEND_NODE: cfg.name },
        assets: new BackendAssets({ config, stateDir: cfg['state-dir'], log: pipelineLog.child({ component: 'assets' }), node: cfg.name }).assets,
      },
    });
    await pipeline.start();
    stops.push(() => pipeline.stop());
    const adhoc = await nats.workQueue(streams.adhoc, subjects.adhocPrefix, { replicas: cfg['nats-replicas'] });
    const adhocExecutor = await startAdhocExecutor(nats, config, log.child({ component: 'adhoc' }), readModel);
    stops.push(() => adhocExecutor.stop());
    const health = async (): Promise<HealthReport> => {
      const [etcdOk, natsOk] = await Promise.all([
        etcd.get(etcdKeys.clusterConfig).then(() => ({ healthy: true }), (e: Error) => ({ healthy: false, error: e.message })),
        nats.ping().then((ok) => (ok ? { healthy: true } : { healthy: false, error: 'no answer from NATS' })),
      ]);
      return {
        healthy: etcdOk.healthy && natsOk.healthy && membership.guardOk(),
        node: cfg.name, etcd: etcdOk, nats: natsOk,
        shards: { owned: host.ownedCount, total: SHARD_COUNT }, members: membership.memberNames(),
        agents: { connected: gateway.sessionCount },
        runtime: { actors: host.actorCount, timers: host.timerCount, mailbox_depth: host.mailboxDepth(), committed_turns: host.committedTurns },
        pipeline: { running: pipeline.stats.running, jobs: pipeline.stats.jobs },
      };
    };
    const version = async () => {
      let etcdVersion: { etcdserver?: string; etcdcluster?: string } = {};
      try { etcdVersion = await (await fetch(`${etcdUrls[0]}/version`, { signal: AbortSignal.timeout(2000) })).json() as typeof etcdVersion; }
      catch { try { etcdVersion = { etcdserver: await etcd.version() }; } catch { /* unreachable: report none */ } }
      return { monitor_backend: VERSION, etcd: etcdVersion, api_groups: { 'core/v2': 'v2' } };
    };
    const metrics = new NodeMetrics({
      agentsConnected: () => gateway.sessionCount, mailboxDepth: () => host.mailboxDepth(), actorsActive: () => host.actorCount,
      shardsOwned: () => host.ownedCount, turnsCommitted: () => host.committedTurns,
      eventsProcessed: () => entityStats.events, keepalivesProcessed: () => entityStats.keepalives,
      pipeline: () => pipeline.stats,
    });
    const apiLog = log.child({ component: 'api' });
    const api = await listenApi(buildApi({
      config, authz, tokens, actors, reads, readModel, entityLimit, metrics, health, version, log: apiLog, pipeline: pipelineQueue,
      silencedExpiry: { defaultSec: cfg['default-silenced-expiry-time'], maxSec: cfg['max-silenced-expiry-time-allowed'] },
      auth: new Authenticator(config, passwords, { login: directoryLogin, lookup: directoryLookup }, apiLog),
      queueAdhoc: (req) => adhoc(encodeToken(String(req.namespace)), Buffer.from(JSON.stringify(req))),
      ready: () => readModelReady && membership.guardOk(),
    }), cfg['api-host'], cfg['api-port']);
    stops.push(() => api.close());

    stops.unshift(async () => log.info('backend stopped', { node: cfg.name }));
    log.info('backend started', { node: cfg.name, api: apiUrl, agent: agentUrl, etcd: etcdUrls, nats: natsUrls });
    return { stop: stopAll, fatal };
  } catch (err) {
    await stopAll();
    throw err;
  }
}
