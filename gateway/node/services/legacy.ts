import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import { buckets, SHARD_COUNT, streams } from '../../../proto/names.ts';
import { VERSION } from '../../../proto/version.ts';
import { isSecret, type Logger } from '../../../lib/log.ts';
import { withTimeout } from '../../../lib/timeout.ts';
import { scrubUrlCredentials } from '../../../lib/url-credentials.ts';
import type { KvStore } from '../../../actors/runtime/kv-store.ts';
import type { NatsAdapter } from '../../../actors/runtime/nats.ts';
import type { Membership } from '../../../actors/runtime/membership.ts';
import type { ActorClient } from '../../../actors/runtime/ask.ts';
import type { ConfigStore } from '../../../actors/config/store.ts';
import { EntityReads } from '../../../actors/entity/reads.ts';
import type { EntityReadModel } from '../../../actors/entity/read-model.ts';
import { StashReads } from '../../../actors/stash/reads.ts';
import { StashReadModel } from '../../../actors/stash/read-model.ts';
import type { EntityLimit } from '../../../actors/entity/limit.ts';
import { buildLegacyApi } from '../../legacy/app.ts';
import type { LegacyServices, TransportState } from '../../legacy/env.ts';
import { listenApi, type ApiListener } from '../../api/server.ts';
import { provider, type Provider } from '../service.ts';
import type { QueueAdhoc } from './schedule.ts';

const DEFAULTS = {
  /** `/info` and `/health` report the queue depth unknown (-1) past this. */
  transportCallTimeoutMs: 2000,
} as const;

interface LegacyServiceDeps {
  nats: () => NatsAdapter;
  stores: () => Map<string, KvStore>;
  config: () => ConfigStore;
  membership: () => Membership;
  actors: () => ActorClient;
  readModel: () => EntityReadModel;
  stashes: () => StashReadModel | undefined;
  queueAdhoc: () => QueueAdhoc;
  entityLimit: () => EntityLimit;
}

/** The node's flags as `/settings` shows them, under the legacy API's own key for itself. */
function nodeSettings(cfg: BackendConfig): Record<string, unknown> {
  return {
    api: {
      bind: cfg['legacy-api-host'],
      port: cfg['legacy-api-port'],
      user: cfg['legacy-api-user'],
      password: cfg['legacy-api-password'],
    },
    backend: backendSettings(cfg),
  };
}

/**
 * The node's flags, without its store credentials: passwords and credential files are left out and
 * URLs lose their user info, so not even `redacted=false` shows them (only the legacy API's own).
 */
function backendSettings(cfg: BackendConfig): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(cfg)) {
    if (isSecret(k)) continue;
    if (typeof value === 'string') out[k] = scrubUrlCredentials(value);
    else if (Array.isArray(value))
      out[k] = value.map((x) => (typeof x === 'string' ? scrubUrlCredentials(x) : x));
    else out[k] = value;
  }
  return out;
}

/** The services the legacy routes use, from the node's own. */
function legacyServices(cfg: BackendConfig, d: LegacyServiceDeps, log: Logger): LegacyServices {
  const [nats, stores, membership] = [d.nats(), d.stores(), d.membership()];
  const transport = async (): Promise<TransportState> => {
    const messages = await withTimeout(
      nats.streamDepth(streams.pipeline),
      DEFAULTS.transportCallTimeoutMs,
      'pipeline stream',
    ).catch(() => -1);
    return { connected: nats.connected, consumers: membership.memberNames().length, messages };
  };
  return {
    namespace: cfg['legacy-api-namespace'],
    config: d.config(),
    actors: d.actors(),
    reads: new EntityReads(stores.get(buckets.entities)!, stores.get(buckets.events)!, SHARD_COUNT),
    readModel: d.readModel(),
    silencedExpiry: {
      defaultSec: cfg['default-silenced-expiry-time'],
      maxSec: cfg['max-silenced-expiry-time-allowed'],
    },
    stashReads: new StashReads(stores.get(buckets.stashes)!, SHARD_COUNT),
    stashes: d.stashes()!,
    entityLimit: d.entityLimit(),
    queueAdhoc: (request) => d.queueAdhoc()(request),
    transport,
    unavailable: () => (nats.connected ? undefined : 'not connected to transport'),
    settings: nodeSettings(cfg),
    servers: () =>
      membership.memberInfo().map(({ name, info }) => ({
        id: name,
        hostname: name,
        version: typeof info.version === 'string' ? info.version : VERSION,
        api: info.api,
        started: info.started_at,
      })),
    log,
  };
}

/**
 * The stash list of the legacy API (none when it is off), loaded before the API listens: stashes are
 * few, and a list must not come back empty while the first pass runs.
 */
export function stashListService(
  cfg: BackendConfig,
  stores: () => Map<string, KvStore>,
): Provider<StashReadModel | undefined> {
  return provider(
    'stash list',
    async () => {
      if (cfg['legacy-api-port'] === 0) return undefined;
      const list = new StashReadModel(stores().get(buckets.stashes)!);
      await list.start();
      return list;
    },
    async (list) => list?.stop(),
  );
}

/**
 * The services of the legacy routes (none when the legacy API is off), made once and shared by the
 * legacy port and the REST API's legacy views (`/api/legacy`, gateway/api/routes/legacy.ts).
 */
export function legacyViewsService(
  cfg: BackendConfig,
  d: LegacyServiceDeps,
  log: Logger,
): Provider<LegacyServices | undefined> {
  return provider('legacy views', async () =>
    cfg['legacy-api-port'] === 0 ? undefined : legacyServices(cfg, d, log.child({ component: 'legacy-api' })),
  );
}

/** The legacy API on `--legacy-api-port` (0: none); it listens after the REST API's dependencies run. */
export function legacyApiService(
  cfg: BackendConfig,
  views: () => LegacyServices | undefined,
): Provider<ApiListener | undefined> {
  return provider(
    'legacy api',
    async () => {
      const svc = views();
      if (!svc) return undefined;
      return listenApi(
        buildLegacyApi(svc, {
          user: cfg['legacy-api-user'],
          password: cfg['legacy-api-password'],
          cors: cfg['legacy-api-cors'],
        }),
        cfg['legacy-api-host'],
        cfg['legacy-api-port'],
      );
    },
    async (api) => api?.close(),
  );
}
