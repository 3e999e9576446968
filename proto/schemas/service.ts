import * as v from 'valibot';
import type { FlagSpec } from '../flags.ts';

// Flags of `monitor-agent service install|uninstall` and `monitor-backend service install|uninstall`.
// They describe the service, not the program, so the program's config file is only named here,
// never read.

const SYSTEMD_UNIT_DIR = '/etc/systemd/system';

/** The flags of one program's service command; `defaultConfig` is the file the program reads without -c. */
export function serviceFlags(program: string, defaultConfig: string): FlagSpec[] {
  return [
    {
      name: 'config-file',
      short: 'c',
      type: 'string',
      description: `config file the service starts the ${program} with (default: the ${program} default, ${defaultConfig})`,
      default: '',
    },
    {
      name: 'log-file',
      type: 'string',
      description: `file the service appends the ${program} output to (default: the journal)`,
      default: '',
    },
    {
      name: 'unit-dir',
      type: 'string',
      description: 'directory of the systemd unit',
      default: SYSTEMD_UNIT_DIR,
      env: 'MONITOR_SYSTEMD_UNIT_DIR',
    },
  ];
}

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
