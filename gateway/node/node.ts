import type { BackendConfig } from '../../proto/schemas/backend-config.ts';
import { buckets, SHARD_COUNT } from '../../proto/names.ts';
import { watchLoopStalls } from '../../lib/loop-stall.ts';
import type { Logger } from '../../lib/log.ts';
import { ActorClient } from '../../actors/runtime/ask.ts';
import type { EntityStats } from '../../actors/entity/actor.ts';
import { EntityReadModel } from '../../actors/entity/read-model.ts';
import { EntityLimit } from '../../actors/entity/limit.ts';
import { SilencedIndex } from '../../actors/config/silenced-index.ts';
import { pipelineInterest } from '../../actors/pipeline/workflows.ts';
import { PipelineQueue } from '../../actors/pipeline/queue.ts';
import { Authorizer } from '../auth/rbac.ts';
import { loadAgentServerTls, type AgentServerTls } from '../agents/tls.ts';
import { loadApiServerTls, type ApiServerTls } from '../api/tls.ts';
import { ServiceRunner, type Service } from './service.ts';
import type { StoreAccess } from './store-access.ts';
import { portsService, sandboxService, stateDirService } from './services/local.ts';
import { embeddedEtcdService, embeddedNatsService, type OnFatal } from './services/embedded.ts';
import {
  bucketsService,
  clusterService,
  configService,
  etcdService,
  natsService,
} from './services/stores.ts';
import { pipelineService, pipelineStreamService } from './services/pipeline.ts';
import { membershipService, shardsService, type NodeUrls } from './services/cluster.ts';
import { actorHostService } from './services/actor-host.ts';
import { adhocService, scheduleService } from './services/schedule.ts';
import { agentsService } from './services/agents.ts';
import { legacyApiService, legacyViewsService, stashListService } from './services/legacy.ts';
import { apiService, loginLimitsService, readModelService, tokensService } from './services/api.ts';
import { Readiness } from './readiness.ts';

const DEFAULTS = {
  /**
   * At a graceful stop the REST port keeps serving this long after `/ready` turned 503, so balancers
   * probing every second see it before new connections are refused (they would redispatch those too).
   */
  readyNoticeMs: 1000,
  /** Then REST requests under way get this long to finish before their connections are cut. */
  requestGraceMs: 5000,
} as const;

interface BackendNode {
  stop(): Promise<void>;
  /** Resolves with an error message when an embedded service died for good. */
  fatal: Promise<string>;
}

/** Made on first use: objects several services share, built from what earlier services started. */
function lazy<T>(make: () => T): () => T {
  let made: { value: T } | undefined;
  return () => (made ??= { value: make() }).value;
}

const displayHost = (h: string) =>
  h === '[::]' || h === '0.0.0.0' || h === '::' ? '127.0.0.1' : h.replace(/^\[|\]$/g, '');

/** TLS of the node's two ports, read at start; undefined: plain. */
interface NodeTls {
  agent?: AgentServerTls;
  api?: ApiServerTls;
}

function nodeUrls(cfg: BackendConfig, tls: NodeTls): NodeUrls {
  return {
    api: `${tls.api ? 'https' : 'http'}://${displayHost(cfg['api-host'])}:${cfg['api-port']}`,
    agent: `${tls.agent ? 'wss' : 'ws'}://${displayHost(cfg['agent-host'])}:${cfg['agent-port']}`,
  };
}

/**
 * The services of one backend node in start order: the state dir, ports and the JavaScript sandbox first, embedded etcd
 * and NATS when no external ones are given, the clients and stores, membership, the actor host and
 * shard ownership, the schedules, the agent listener, what the API needs besides, and the API last.
 */
function nodeServices(cfg: BackendConfig, log: Logger, tls: NodeTls, access: StoreAccess, onFatal: OnFatal) {
  const embeddedEtcd =
    cfg['etcd-client-urls'].length === 0 ? embeddedEtcdService(cfg, log, onFatal) : undefined;
  const embeddedNats = cfg['nats-url'].length === 0 ? embeddedNatsService(cfg, log, onFatal) : undefined;
  // The external URLs without their user info: the credentials travel apart (store-access.ts).
  const etcdUrls = () => embeddedEtcd?.get().endpoints ?? access.etcd.endpoints;
  const natsUrls = () => embeddedNats?.get().endpoints ?? access.nats.servers;

  const etcd = etcdService(etcdUrls, access.etcd);
  const nats = natsService(cfg, natsUrls, access.nats, log);
  const stores = bucketsService(cfg, nats.get);
  const config = configService(etcd.get, log);
  const membership = membershipService(cfg, nodeUrls(cfg, tls), etcd.get, log);

  const interest = lazy(() => pipelineInterest(config.get()));
  const pipelineQueue = lazy(() => new PipelineQueue(nats.get(), interest()));
  const silenced = lazy(() => new SilencedIndex(config.get()));
  const readModel = lazy(
    () => new EntityReadModel(stores.get().get(buckets.entities)!, stores.get().get(buckets.events)!),
  );
  const entityLimit = lazy(() => new EntityLimit(cfg['entity-limit'], readModel()));
  const authz = lazy(() => new Authorizer(config.get()));
  // One for the agent gateway and the API, so failures at the handshake and on the API count together.
  const loginLimits = loginLimitsService(cfg, nats.get, log);
  const entityStats: EntityStats = { events: 0, keepalives: 0 };

  const host = actorHostService(
    cfg,
    {
      nats: nats.get,
      stores: stores.get,
      membership: membership.get,
      config: config.get,
      silenced,
      readModel,
      interest,
      entityStats,
      actors: () => actors(),
    },
    log,
  );
  const actors = lazy(() => new ActorClient(nats.get(), SHARD_COUNT, host.get()));
  const agents = agentsService(
    cfg,
    tls.agent,
    {
      config: config.get,
      authz,
      loginLimits: loginLimits.get,
      actors,
      nats: nats.get,
      entityLimit,
      pipelineQueue,
    },
    log,
  );
  const tokens = tokensService(cfg, etcd.get);
  const views = readModelService(readModel);
  const shards = shardsService({ etcd: etcd.get, membership: membership.get, host: host.get }, log);
  // The configuration copy is complete once its service started, which is before the API serves.
  const readiness = new Readiness({
    membership: membership.get,
    shards: shards.get,
    nats: nats.get,
    loaded: views.ready,
    leaseTtlSeconds: cfg['cluster-lease-ttl'],
  });
  const pipeline = pipelineService(cfg, { nats: nats.get, config: config.get }, log);
  const adhoc = adhocService(cfg, { nats: nats.get, config: config.get, readModel }, log);
  // The legacy API's services come first: the REST API mounts its views too (`/api/legacy`).
  const stashList = stashListService(cfg, stores.get);
  const legacyViews = legacyViewsService(
    cfg,
    {
      nats: nats.get,
      stores: stores.get,
      config: config.get,
      membership: membership.get,
      actors,
      readModel,
      stashes: stashList.get,
      queueAdhoc: () => adhoc.get().queue,
      entityLimit,
    },
    log,
  );
  const api = apiService(
    cfg,
    {
      etcd: etcd.get,
      etcdUrls,
      nats: nats.get,
      stores: stores.get,
      config: config.get,
      membership: membership.get,
      host: host.get,
      actors,
      authz,
      loginLimits: loginLimits.get,
      tokens: tokens.get,
      agents: agents.get,
      pipeline: pipeline.get,
      pipelineQueue,
      readModel,
      ready: () => readiness.check(),
      entityLimit,
      entityStats,
      queueAdhoc: () => adhoc.get().queue,
      legacy: legacyViews.get,
    },
    log,
    tls.api,
  );

  const legacyApi = legacyApiService(cfg, legacyViews.get);

  const services: Service[] = [
    stateDirService(cfg, log),
    portsService(cfg),
    sandboxService(),
    ...(embeddedEtcd ? [embeddedEtcd] : []),
    ...(embeddedNats ? [embeddedNats] : []),
    etcd,
    clusterService(etcd.get, log),
    nats,
    stores,
    config,
    pipelineStreamService(cfg, nats.get),
    membership,
    host,
    shards,
    scheduleService({ config: config.get, actors }, log),
    loginLimits,
    agents,
    tokens,
    views,
    pipeline,
    adhoc,
    stashList,
    legacyViews,
    api,
    legacyApi,
  ];
  /**
   * The steps of a graceful stop before the services stop in reverse order
   * (docs/architecture.md#stopping-a-node): `/ready` 503 at once; agents told 1001 and the agent port
   * closed; the REST port closed after a notice, its requests under way finished.
   */
  const drain = async () => {
    readiness.drain();
    log.info('draining: not ready, agents sent away, no new connections');
    await Promise.all([
      agents.started() ? agents.get().drain() : undefined,
      new Promise((r) => setTimeout(r, DEFAULTS.readyNoticeMs)),
    ]);
    await Promise.all([
      api.started() ? api.get().close(DEFAULTS.requestGraceMs) : undefined,
      legacyApi.started() ? legacyApi.get()?.close(DEFAULTS.requestGraceMs) : undefined,
    ]);
  };
  return { services, etcdUrls, natsUrls, drain };
}

/** Starts one backend node; its stop stops the services in the reverse order. */
export async function startBackendNode(
  cfg: BackendConfig,
  log: Logger,
  access: StoreAccess,
  tls: NodeTls = { agent: loadAgentServerTls(cfg), api: loadApiServerTls(cfg) },
): Promise<BackendNode> {
  let reportFatal!: OnFatal;
  const fatal = new Promise<string>((r) => {
    reportFatal = r;
  });
  const { services, etcdUrls, natsUrls, drain } = nodeServices(cfg, log, tls, access, (msg) =>
    reportFatal(msg),
  );
  const stopStallWatch = watchLoopStalls(log);
  const runner = new ServiceRunner(log);
  await runner.start(services);
  const urls = nodeUrls(cfg, tls);
  log.info('backend started', {
    node: cfg.name,
    api: urls.api,
    agent: urls.agent,
    etcd: etcdUrls(),
    nats: natsUrls(),
  });
  let stopped: Promise<void> | undefined;
  const stop = async () => {
    await drain().catch((err: unknown) => log.warn('drain failed', { error: err as Error }));
    await runner.stop();
    stopStallWatch();
    log.info('backend stopped', { node: cfg.name });
  };
  return { stop: () => (stopped ??= stop()), fatal };
}
