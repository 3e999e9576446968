import type { ConfigStore } from '../../actors/config/store.ts';
import type { ActorClient } from '../../actors/runtime/ask.ts';
import type { EntityReads } from '../../actors/entity/reads.ts';
import type { EntityReadModel } from '../../actors/entity/read-model.ts';
import type { StashReads } from '../../actors/stash/reads.ts';
import type { StashReadModel } from '../../actors/stash/read-model.ts';
import type { EntityLimit } from '../../actors/entity/limit.ts';
import type { Logger } from '../../lib/log.ts';
import type { SilencedExpiry } from '../api/env.ts';

/** The transport as the legacy API reports it (`/info`, `/health`): NATS and the pipeline queue. */
export interface TransportState {
  connected: boolean;
  /** Backends consuming results and keepalives: the live members of the cluster. */
  consumers: number;
  /** Pipeline jobs waiting in the queue (-1 when NATS could not say). */
  messages: number;
}

/** What the legacy API's routes work with; one instance per node (gateway/node/services/legacy.ts). */
export interface LegacyServices {
  /** `--legacy-api-namespace`: the namespace the legacy API is a view of. */
  namespace: string;
  config: ConfigStore;
  actors: ActorClient;
  reads: EntityReads;
  readModel: EntityReadModel;
  /** The REST API's silenced expiry default and cap, which bind silences made here too. */
  silencedExpiry: SilencedExpiry;
  /** Single stash reads, from KV. */
  stashReads: StashReads;
  /** The stash list, a watched copy of the stash bucket. */
  stashes: StashReadModel;
  /** `--entity-limit`: a write that would create an entity past it is refused (402 `{"error"}`). */
  entityLimit?: EntityLimit;
  /** Queues an ad hoc check request, as `POST /api/core/v2/.../checks/:name/execute` does. */
  queueAdhoc(request: Record<string, unknown>): Promise<void>;
  transport(): Promise<TransportState>;
  /** Whether the stores answer: a reason when they do not (answered 500 `{"error": reason}`). */
  unavailable(): string | undefined;
  /** The node's own settings as `/settings` shows them (secrets still in; the route redacts). */
  settings: Record<string, unknown>;
  /** The cluster's members, for `/info`'s `servers`. */
  servers(): Array<Record<string, unknown>>;
  log: Logger;
}

/** Per-request values: the request id echoed in `X-Request-ID`. */
export type LegacyEnv = { Variables: { requestId: string } };
