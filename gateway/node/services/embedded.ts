import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import type { Logger } from '../../../lib/log.ts';
import { startEmbeddedEtcd, startEmbeddedNats, type EmbeddedService } from '../../../lib/embedded/index.ts';
import { provider, type Provider } from '../service.ts';

/** Told when an embedded child keeps dying and is given up: the node cannot go on without it. */
export type OnFatal = (message: string) => void;

function embedded(
  name: string,
  start: () => Promise<EmbeddedService>,
  onFatal: OnFatal,
): Provider<EmbeddedService> {
  return provider(
    name,
    async () => {
      const svc = await start();
      svc.onFatal((err) => onFatal(err.message));
      return svc;
    },
    (svc) => svc.stop(),
  );
}

/** The single-node etcd a backend runs when it is given no --etcd-client-urls. */
export function embeddedEtcdService(
  cfg: BackendConfig,
  log: Logger,
  onFatal: OnFatal,
): Provider<EmbeddedService> {
  return embedded(
    'embedded etcd',
    () =>
      startEmbeddedEtcd({
        stateDir: cfg['state-dir'],
        node: cfg.name,
        listenClientUrls: cfg['etcd-listen-client-urls'],
        listenPeerUrls: cfg['etcd-listen-peer-urls'],
        log: log.child({ component: 'embedded-etcd' }),
      }),
    onFatal,
  );
}

/** The single-node nats-server with JetStream a backend runs when it is given no --nats-url. */
export function embeddedNatsService(
  cfg: BackendConfig,
  log: Logger,
  onFatal: OnFatal,
): Provider<EmbeddedService> {
  return embedded(
    'embedded nats',
    () =>
      startEmbeddedNats({
        stateDir: cfg['state-dir'],
        node: cfg.name,
        listen: cfg['nats-listen'],
        log: log.child({ component: 'embedded-nats' }),
      }),
    onFatal,
  );
}
