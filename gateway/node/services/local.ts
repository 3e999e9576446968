import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import type { Logger } from '../../../lib/log.ts';
import { checkPortsFree, claimStateDir } from '../../../lib/embedded/index.ts';
import { sandboxReady } from '../../../lib/sandbox/index.ts';
import { service, type Service } from '../service.ts';

/** The state dir is this node's alone while it runs; released last, after the embedded children. */
export function stateDirService(cfg: BackendConfig, log: Logger): Service {
  let release: (() => void) | undefined;
  return service(
    'state dir',
    async () => {
      release = await claimStateDir(cfg['state-dir'], log);
    },
    async () => release?.(),
  );
}

/** The API, agent and legacy API ports are checked before anything is spawned, so a taken one names its flag at once. */
export function portsService(cfg: BackendConfig): Service {
  return service('ports', () =>
    checkPortsFree([
      { host: cfg['api-host'], port: cfg['api-port'], flag: 'api-port' },
      { host: cfg['agent-host'], port: cfg['agent-port'], flag: 'agent-port' },
      ...(cfg['legacy-api-port'] > 0
        ? [{ host: cfg['legacy-api-host'], port: cfg['legacy-api-port'], flag: 'legacy-api-port' }]
        : []),
    ]),
  );
}

/**
 * The JavaScript sandbox's WebAssembly module (lib/sandbox) is loaded before anything evaluates user
 * JavaScript: event filters, mutators and proxy entity_attributes call it synchronously, and the API
 * checks the syntax of what it stores with it.
 */
export function sandboxService(): Service {
  return service('JavaScript sandbox', () => sandboxReady());
}
