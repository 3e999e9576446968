import type { ConfigStore } from '../../actors/config/store.ts';
import type { ActorClient } from '../../actors/runtime/ask.ts';
import type { EntityReads } from '../../actors/entity/reads.ts';
import type { EntityReadModel } from '../../actors/entity/read-model.ts';
import type { EntityLimit } from '../../actors/entity/limit.ts';
import type { Logger } from '../../lib/log.ts';
import type { Authorizer, Subject } from '../auth/rbac.ts';
import type { AccessClaims, TokenService } from '../auth/tokens.ts';
import type { Authenticator } from '../auth/login.ts';
import type { LoginLimits } from '../auth/login-limits.ts';
import type { OidcLogin } from '../auth/oidc/login.ts';
import type { EtcdMemberList } from '../../actors/runtime/etcd-members.ts';

export interface SilencedExpiry {
  defaultSec: number;
  maxSec: number;
}

/** What the API's routes work with; one instance per node. */
import type { PipelineQueue } from '../../actors/pipeline/queue.ts';

export interface ApiServices {
  config: ConfigStore;
  authz: Authorizer;
  tokens: TokenService;
  auth: Authenticator;
  /** Failed logins per user name and address (shared with the agent handshake). */
  loginLimits: LoginLimits;
  /** OIDC logins through the providers of kind `oidc` (docs/compatibility.md#oidc). */
  oidc: OidcLogin;
  actors: ActorClient;
  reads: EntityReads;
  readModel: EntityReadModel;
  /** `--entity-limit`: new entities past it are refused with 402. */
  entityLimit?: EntityLimit;
  /** `--default-silenced-expiry-time` / `--max-silenced-expiry-time-allowed` in seconds (0: off). */
  silencedExpiry?: SilencedExpiry;
  /** Where metrics-only events go (handled, never stored). */
  pipeline?: PipelineQueue;
  /** Queues an ad hoc check request for the scheduler (delivered by a later release). */
  queueAdhoc(request: Record<string, unknown>): Promise<void>;
  /** The etcd cluster's member list (`GET /cluster/members`). */
  clusterMembers(): Promise<EtcdMemberList>;
  log: Logger;
}

/** Per-request values: the authenticated subject, and its token when it came with one. */
export type ApiEnv = { Variables: { subject: Subject; claims?: AccessClaims } };
