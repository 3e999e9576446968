import { etcdKeys } from '../../proto/names.ts';
import type { InitConfig } from '../../proto/schemas/backend-config.ts';
import { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import { etcdFailure, type StoreAccess } from './store-access.ts';

// The etcd client of the commands that talk to etcd only (`init`, `upgrade`): the external cluster,
// or the embedded etcd of a backend that runs on this host, reached within --timeout (or --wait).

const DEFAULTS = {
  /** One etcd call of a command; short, since the command retries until its --timeout. */
  callTimeoutMs: 3000,
  /** Pause between a command's attempts to reach etcd. */
  retryMs: 500,
} as const;

/** A command that cannot go on: the line for stderr and the exit status. */
export class CommandError extends Error {
  constructor(
    message: string,
    readonly code: number,
  ) {
    super(message);
    this.name = 'CommandError';
  }
}

type EtcdCommandConfig = Pick<InitConfig, 'etcd-listen-client-urls' | 'timeout' | 'wait'>;

/**
 * A client that has answered once. Throws a CommandError (status 1) when etcd is out of reach
 * after --timeout, or at once when it refuses the certificate or password.
 */
export async function connectEtcd(cfg: EtcdCommandConfig, access: StoreAccess['etcd']): Promise<EtcdAdapter> {
  // Without external URLs, the embedded etcd of a backend of this host, on its listen URLs.
  const endpoints = access.endpoints.length
    ? access.endpoints
    : cfg['etcd-listen-client-urls'].map((u) => u.replace(/\/\/(0\.0\.0\.0|\[::\])/, '//127.0.0.1'));
  const etcd = new EtcdAdapter({
    endpoints,
    auth: access.auth,
    tls: access.tls,
    callTimeoutMs: DEFAULTS.callTimeoutMs,
  });
  const deadline = Date.now() + cfg.timeout * 1000;
  let firstError: string | undefined;
  for (;;) {
    try {
      await etcd.get(etcdKeys.clusterConfig);
      return etcd;
    } catch (err) {
      // Later attempts only say that the client gave up retrying; the first one says why.
      const failure = etcdFailure(err, endpoints);
      // A server that refuses our certificate or password will not change its mind: --wait is
      // for an etcd not up yet, and would otherwise wait forever, silently.
      const give = failure.permanent
        ? failure.message
        : !cfg.wait && Date.now() > deadline
          ? `${firstError ?? failure.message} (tried for ${cfg.timeout}s)`
          : undefined;
      if (give !== undefined) {
        await etcd.close();
        throw new CommandError(give, 1);
      }
      firstError ??= failure.message;
      await new Promise((r) => setTimeout(r, DEFAULTS.retryMs));
    }
  }
}
