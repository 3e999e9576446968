import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import { buckets, etcdKeys, SHARD_COUNT } from '../../../proto/names.ts';
import { VERSION } from '../../../proto/version.ts';
import type { Logger } from '../../../lib/log.ts';
import { withTimeout } from '../../../lib/timeout.ts';
import type { EtcdAdapter, EtcdRecord } from '../../../actors/runtime/etcd.ts';
import type { KvStore } from '../../../actors/runtime/kv-store.ts';
import type { NatsAdapter } from '../../../actors/runtime/nats.ts';
import { EtcdMembers } from '../../../actors/runtime/etcd-members.ts';
import { etcdHealthFields, type EtcdHealthFields } from '../../api/cluster-shapes.ts';
import type { Membership } from '../../../actors/runtime/membership.ts';
import type { ActorHost } from '../../../actors/runtime/host.ts';
import type { ActorClient } from '../../../actors/runtime/ask.ts';
import type { ConfigStore } from '../../../actors/config/store.ts';
import type { EntityStats } from '../../../actors/entity/actor.ts';
import { EntityReads } from '../../../actors/entity/reads.ts';
import type { EntityReadModel } from '../../../actors/entity/read-model.ts';
import type { EntityLimit } from '../../../actors/entity/limit.ts';
import type { PipelineQueue } from '../../../actors/pipeline/queue.ts';
import type { PipelineWorker } from '../../../actors/pipeline/worker.ts';
import type { Authorizer } from '../../auth/rbac.ts';
import { LoginLimits } from '../../auth/login-limits.ts';
import { VerifiedCache } from '../../auth/passwords.ts';
import { TokenService } from '../../auth/tokens.ts';
import { Authenticator } from '../../auth/login.ts';
import { directoryLogin, directoryLookup } from '../../auth/ldap.ts';
import { OidcLogin } from '../../auth/oidc/login.ts';
import type { AgentGateway } from '../../agents/server.ts';
import type { LegacyServices } from '../../legacy/env.ts';
import { NodeMetrics } from '../../api/metrics.ts';
import { buildApi } from '../../api/app.ts';
import { listenApi, type ApiListener } from '../../api/server.ts';
import type { ApiServerTls } from '../../api/tls.ts';
import type { HealthReport, ReadyReport } from '../../api/routes/system.ts';
import { provider, service, type Provider, type Service } from '../service.ts';
import type { QueueAdhoc } from './schedule.ts';
import { datastoreState, pendingMigrations } from '../upgrade/datastore.ts';
import { LATEST } from '../upgrade/migrations.ts';

const DEFAULTS = {
  /** How long `GET /version` waits for etcd's own /version before asking through the client. */
  etcdVersionTimeoutMs: 2000,
  /** `/health` reports etcd and NATS unreachable after this, well within a liveness probe's timeout. */
  healthCallTimeoutMs: 2000,
} as const;

/** Access and refresh tokens of API logins; their signing key is the cluster's, in etcd. */
export function tokensService(cfg: BackendConfig, etcd: () => EtcdAdapter): Provider<TokenService> {
  return provider(
    'tokens',
    async () => {
      const tokens = new TokenService(etcd(), {
        accessTtlSec: cfg['access-token-expiry'],
        refreshTtlSec: cfg['refresh-token-expiry'],
      });
      await tokens.start();
      return tokens;
    },
    (tokens) => tokens.stop(),
  );
}

/**
 * The failed-login counts of the API and the agent handshake, in a bucket all nodes share
 * (docs/compatibility.md#login-limits); an entry outlives the longer window, then expires.
 */
export function loginLimitsService(
  cfg: BackendConfig,
  nats: () => NatsAdapter,
  log: Logger,
): Provider<LoginLimits> {
  return provider('login limits', async () => {
    const conn = nats();
    const kv = await conn.kv(buckets.loginFailures, {
      replicas: cfg['nats-replicas'],
      ttlMs: Math.max(cfg['login-user-window'], cfg['login-address-window']) * 1000,
    });
    return new LoginLimits(
      {
        userFailures: cfg['login-user-failures'],
        userWindowSec: cfg['login-user-window'],
        addressFailures: cfg['login-address-failures'],
        addressWindowSec: cfg['login-address-window'],
      },
      log.child({ component: 'auth' }),
      { kv, connected: () => conn.connected },
    );
  });
}

/** The in-memory view of entities and events the API lists from; the node serves before it is filled. */
export function readModelService(readModel: () => EntityReadModel): Service & { ready(): boolean } {
  let ready = false;
  return {
    ...service(
      'read model',
      async () => {
        void readModel()
          .start()
          .then(() => {
            ready = true;
          });
      },
      async () => readModel().stop(),
    ),
    ready: () => ready,
  };
}

interface ApiServiceDeps {
  etcd: () => EtcdAdapter;
  etcdUrls: () => string[];
  nats: () => NatsAdapter;
  stores: () => Map<string, KvStore>;
  config: () => ConfigStore;
  membership: () => Membership;
  host: () => ActorHost;
  actors: () => ActorClient;
  authz: () => Authorizer;
  loginLimits: () => LoginLimits;
  tokens: () => TokenService;
  agents: () => AgentGateway;
  pipeline: () => PipelineWorker;
  pipelineQueue: () => PipelineQueue;
  readModel: () => EntityReadModel;
  ready: () => ReadyReport;
  entityLimit: () => EntityLimit;
  entityStats: EntityStats;
  queueAdhoc: () => QueueAdhoc;
  /** The legacy API's services for the views under `/api/legacy`; undefined when it is off. */
  legacy: () => LegacyServices | undefined;
}

function health(
  cfg: BackendConfig,
  d: ApiServiceDeps,
  members: EtcdMembers,
): (opts?: { timeoutMs?: number }) => Promise<HealthReport> {
  return async (opts = {}) => {
    const [etcd, nats, membership, host, pipeline] = [
      d.etcd(),
      d.nats(),
      d.membership(),
      d.host(),
      d.pipeline(),
    ];
    // The one etcd call tells both whether etcd answers and the datastore's version.
    let datastore: HealthReport['datastore'];
    const [etcdOk, natsOk, cluster] = await Promise.all([
      withTimeout(etcd.get(etcdKeys.datastoreVersion), DEFAULTS.healthCallTimeoutMs, 'etcd').then(
        (record) => {
          datastore = datastoreReport(record);
          return { healthy: true };
        },
        (e: Error) => ({ healthy: false, error: e.message }),
      ),
      nats
        .ping(DEFAULTS.healthCallTimeoutMs)
        .then((ok) => (ok ? { healthy: true } : { healthy: false, error: 'no answer from NATS' })),
      etcdCluster(members, opts.timeoutMs ?? DEFAULTS.healthCallTimeoutMs),
    ]);
    return {
      healthy: etcdOk.healthy && natsOk.healthy && membership.guardOk(),
      node: cfg.name,
      etcd: etcdOk,
      nats: natsOk,
      shards: { owned: host.ownedCount, total: SHARD_COUNT },
      members: membership.memberNames(),
      agents: { connected: d.agents().sessionCount },
      runtime: {
        actors: host.actorCount,
        timers: host.timerCount,
        mailbox_depth: host.mailboxDepth(),
        committed_turns: host.committedTurns,
      },
      pipeline: { running: pipeline.stats.running, jobs: pipeline.stats.jobs },
      ...(datastore ? { datastore } : {}),
      ready: d.ready(),
      ...cluster,
    };
  };
}

/** The etcd members and their health as the reference reports them; nulls when etcd cannot list them. */
async function etcdCluster(members: EtcdMembers, timeoutMs: number): Promise<EtcdHealthFields> {
  const list = await members.list().catch(() => undefined);
  if (!list) return etcdHealthFields(undefined, [], []);
  const [health, alarms] = await Promise.all([
    members.health(list.members, timeoutMs),
    members.alarms().catch(() => []),
  ]);
  return etcdHealthFields(list, health, alarms);
}

/**
 * The datastore's version and the migrations it still needs: a cluster serves between its backends'
 * upgrade and `monitor-backend upgrade`, so this is information, never a reason to be unready
 * (docs/operations.md#upgrades).
 */
function datastoreReport(record: EtcdRecord | undefined): HealthReport['datastore'] {
  try {
    const { version } = datastoreState(record);
    return { version, latest: LATEST, pending: pendingMigrations(version) };
  } catch (err) {
    return { latest: LATEST, error: (err as Error).message };
  }
}

function version(d: ApiServiceDeps) {
  return async () => {
    let etcdVersion: { etcdserver?: string; etcdcluster?: string } = {};
    try {
      etcdVersion = (await (
        await fetch(`${d.etcdUrls()[0]}/version`, {
          signal: AbortSignal.timeout(DEFAULTS.etcdVersionTimeoutMs),
        })
      ).json()) as typeof etcdVersion;
    } catch {
      try {
        etcdVersion = { etcdserver: await d.etcd().version() };
      } catch {
        /* unreachable: report none */
      }
    }
    return { monitor_backend: VERSION, etcd: etcdVersion, api_groups: { 'core/v2': 'v2' } };
  };
}

function metrics(d: ApiServiceDeps): NodeMetrics {
  const [agents, host, pipeline] = [d.agents(), d.host(), d.pipeline()];
  return new NodeMetrics({
    agentsConnected: () => agents.sessionCount,
    mailboxDepth: () => host.mailboxDepth(),
    actorsActive: () => host.actorCount,
    shardsOwned: () => host.ownedCount,
    turnsCommitted: () => host.committedTurns,
    eventsProcessed: () => d.entityStats.events,
    keepalivesProcessed: () => d.entityStats.keepalives,
    pipeline: () => pipeline.stats,
  });
}

/** The REST API (HTTPS with `tls`); it listens last, once everything it reports on and writes through runs. */
export function apiService(
  cfg: BackendConfig,
  d: ApiServiceDeps,
  log: Logger,
  tls: ApiServerTls | undefined,
): Provider<ApiListener> {
  return provider(
    'api',
    async () => {
      const apiLog = log.child({ component: 'api' });
      const members = new EtcdMembers(d.etcd());
      const [config, stores] = [d.config(), d.stores()];
      const queueAdhoc = d.queueAdhoc();
      const listener = await listenApi(
        buildApi({
          config,
          authz: d.authz(),
          loginLimits: d.loginLimits(),
          tokens: d.tokens(),
          actors: d.actors(),
          reads: new EntityReads(stores.get(buckets.entities)!, stores.get(buckets.events)!, SHARD_COUNT),
          readModel: d.readModel(),
          entityLimit: d.entityLimit(),
          metrics: metrics(d),
          health: health(cfg, d, members),
          clusterMembers: () => members.list(),
          version: version(d),
          log: apiLog,
          pipeline: d.pipelineQueue(),
          silencedExpiry: {
            defaultSec: cfg['default-silenced-expiry-time'],
            maxSec: cfg['max-silenced-expiry-time-allowed'],
          },
          auth: new Authenticator(
            config,
            new VerifiedCache(),
            { login: directoryLogin, lookup: directoryLookup },
            apiLog,
          ),
          oidc: new OidcLogin(d.etcd(), config, apiLog.child({ auth: 'oidc' })),
          queueAdhoc,
          ready: d.ready,
          legacy: d.legacy(),
        }),
        cfg['api-host'],
        cfg['api-port'],
        tls,
      );
      return {
        close: async (graceMs?: number) => {
          await listener.close(graceMs);
          members.close();
        },
      };
    },
    (api) => api.close(),
  );
}
