import { BACKEND_CONFIG_FILE } from '../../proto/schemas/backend-config.ts';
import { serviceFlags } from '../../proto/schemas/service.ts';
import { type ServiceProgram } from '../../lib/service/command.ts';

// `monitor-backend service install|uninstall` (lib/service/command.ts): the unit
// monitor-backend.service, as the agent's command writes monitor-agent.service
// (docs/operations.md#backend-service).

export const BACKEND_SERVICE: ServiceProgram = {
  name: 'monitor-backend',
  unitName: 'monitor-backend.service',
  description: 'monitor backend',
  flags: serviceFlags('backend', BACKEND_CONFIG_FILE),
  defaultConfig: BACKEND_CONFIG_FILE,
  settings: [
    // One socket per connected agent and per API client, beyond the usual 1024.
    'LimitNOFILE=65536',
    // Above the default --shutdown-timeout (20 s): systemd's kill must not cut the orderly stop short.
    'TimeoutStopSec=30',
  ],
};
