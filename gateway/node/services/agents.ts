import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import type { Logger } from '../../../lib/log.ts';
import type { NatsAdapter } from '../../../actors/runtime/nats.ts';
import type { ActorClient } from '../../../actors/runtime/ask.ts';
import type { ConfigStore } from '../../../actors/config/store.ts';
import type { EntityLimit } from '../../../actors/entity/limit.ts';
import type { PipelineQueue } from '../../../actors/pipeline/queue.ts';
import type { Authorizer } from '../../auth/rbac.ts';
import type { LoginLimits } from '../../auth/login-limits.ts';
import { AgentGateway } from '../../agents/server.ts';
import type { AgentServerTls } from '../../agents/tls.ts';
import { provider, type Provider } from '../service.ts';

interface AgentsDeps {
  config: () => ConfigStore;
  authz: () => Authorizer;
  loginLimits: () => LoginLimits;
  actors: () => ActorClient;
  nats: () => NatsAdapter;
  entityLimit: () => EntityLimit;
  pipelineQueue: () => PipelineQueue;
}

/** The agent port: WebSocket sessions of the agents connected to this node. */
export function agentsService(
  cfg: BackendConfig,
  agentTls: AgentServerTls | undefined,
  deps: AgentsDeps,
  log: Logger,
): Provider<AgentGateway> {
  return provider(
    'agents',
    async () => {
      const gateway = new AgentGateway({
        tls: agentTls,
        host: cfg['agent-host'],
        port: cfg['agent-port'],
        node: cfg.name,
        config: deps.config(),
        authz: deps.authz(),
        limits: deps.loginLimits(),
        actors: deps.actors(),
        nats: deps.nats(),
        entityLimit: deps.entityLimit(),
        pipeline: deps.pipelineQueue(),
        log: log.child({ component: 'agents' }),
      });
      await gateway.start();
      return gateway;
    },
    (gateway) => gateway.stop(),
  );
}
