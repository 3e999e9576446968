import { parseArgv, validateConfig } from '../config-loader.ts';
import { ConfigError, type FlagSpec } from '../../proto/flags.ts';
import { ServiceOptions } from '../../proto/schemas/service.ts';

/**
 * Flags after `service install|uninstall`. Only MONITOR_SYSTEMD_UNIT_DIR comes from the environment:
 * the program's own MONITOR_*CONFIG_FILE must not leak into the unit, which names its file explicitly.
 */
export function loadServiceOptions(
  argv: string[],
  env: NodeJS.ProcessEnv,
  flags: FlagSpec[],
): ServiceOptions {
  const args = parseArgv(argv, flags);
  const stray = args.command ?? args.rest[0];
  if (stray !== undefined) throw new ConfigError(`unexpected argument "${stray}"`);
  const last = (name: string): unknown => args.values.get(name)?.at(-1);
  const raw = Object.fromEntries(
    flags.map((f) => [f.name, last(f.name) ?? (f.env ? env[f.env] : undefined) ?? f.default]),
  );
  return validateConfig(ServiceOptions, raw);
}
