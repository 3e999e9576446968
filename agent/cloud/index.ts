import type { Logger } from '../../lib/log.ts';
import type { SystemInfo } from '../../lib/system.ts';
import { detectCloudProvider, type CloudProbeOptions, type CloudProvider } from './detect.ts';

export { detectCloudProvider, type CloudProvider } from './detect.ts';

/**
 * Starts detection in the background and returns host facts that carry its answer: "" until it is
 * known, so neither start-up nor the first keepalive waits for the probes. Detection runs once; a
 * host does not change clouds while the agent runs.
 */
export function withCloudProvider(
  system: () => SystemInfo,
  log: Logger,
  probe: CloudProbeOptions = {},
): () => SystemInfo {
  let provider: CloudProvider = '';
  detectCloudProvider(probe).then(
    (p) => {
      provider = p;
      log.info('cloud provider detected', { cloud_provider: p || 'none' });
    },
    (err: unknown) => log.warn('cloud provider detection failed', { error: err as Error }),
  );
  return () => ({ ...system(), cloud_provider: provider });
}
