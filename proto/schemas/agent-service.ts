import * as v from 'valibot';
import type { FlagSpec } from '../flags.ts';
import { AGENT_ENV_PREFIX } from './agent-config.ts';

// Flags of `monitor-agent service install|uninstall`. They describe the service, not the agent, so
// the agent's config file is only named here, never read.

const SYSTEMD_UNIT_DIR = '/etc/systemd/system';

export const serviceFlags: FlagSpec[] = [
  {
    name: 'config-file',
    short: 'c',
    type: 'string',
    description:
      'config file the service starts the agent with (default: the agent default, /etc/monitor/agent.yml)',
    default: '',
  },
  {
    name: 'log-file',
    type: 'string',
    description: 'file the service appends the agent output to (default: the journal)',
    default: '',
  },
  {
    name: 'unit-dir',
    type: 'string',
    description: 'directory of the systemd unit',
    default: SYSTEMD_UNIT_DIR,
    env: `${AGENT_ENV_PREFIX}SYSTEMD_UNIT_DIR`,
  },
];

const Path = v.pipe(
  v.string(),
  v.check((s) => !/[\n\r\0]/.test(s), 'must not hold line breaks or NUL'),
);

export const ServiceOptions = v.object({
  'config-file': Path,
  'log-file': Path,
  'unit-dir': v.pipe(Path, v.minLength(1, 'must not be empty')),
});
export type ServiceOptions = v.InferOutput<typeof ServiceOptions>;
