import { AGENT_CONFIG_FILE } from '../proto/schemas/agent-config.ts';
import { serviceFlags } from '../proto/schemas/service.ts';
import { type ServiceProgram, serviceUsage } from '../lib/service/command.ts';

// `monitor-agent service install|uninstall` (lib/service/command.ts): the unit monitor-agent.service.

export const AGENT_SERVICE: ServiceProgram = {
  name: 'monitor-agent',
  unitName: 'monitor-agent.service',
  description: 'monitor agent',
  flags: serviceFlags('agent', AGENT_CONFIG_FILE),
  defaultConfig: AGENT_CONFIG_FILE,
  windowsName: 'MonitorAgent',
};

export const SERVICE_USAGE = serviceUsage(AGENT_SERVICE);
