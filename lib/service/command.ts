import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError, type FlagSpec } from '../../proto/flags.ts';
import { type ServiceOptions } from '../../proto/schemas/service.ts';
import { loadServiceOptions } from './options.ts';
import { daemonReload, unitText } from './systemd.ts';

// `<program> service install|uninstall` of the agent and the backend: on Linux it manages a systemd
// unit; anywhere else it says what it cannot do (docs/compatibility.md#agent-service).

/** What differs between the programs. */
export interface ServiceProgram {
  /** `monitor-agent`, `monitor-backend`. */
  name: string;
  /** `monitor-agent.service`. */
  unitName: string;
  description: string;
  flags: FlagSpec[];
  /** The file the program reads when the unit names none. */
  defaultConfig: string;
  /** The Windows service's name when the program has one (its install is not supported by this build). */
  windowsName?: string;
  /** Extra [Service] settings of the unit. */
  settings?: string[];
}

export interface ServiceContext {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** How the unit starts the program: node and its launcher script (absolute paths). */
  command: string[];
  out: (line: string) => void;
  err: (line: string) => void;
}

export function serviceUsage(p: ServiceProgram): string {
  const windows = p.windowsName ? ` The Windows service is named ${p.windowsName}.` : '';
  return `Usage: ${p.name} service install [--config-file FILE] [--log-file FILE] [--unit-dir DIR]
       ${p.name} service uninstall [--unit-dir DIR]

On Linux, writes or removes the systemd unit ${p.unitName} (in /etc/systemd/system, or --unit-dir /
MONITOR_SYSTEMD_UNIT_DIR) and runs systemctl daemon-reload.${windows}`;
}

/** Runs the subcommand; returns the exit code (0 done, 1 could not, 2 bad command line). */
export function runService(p: ServiceProgram, argv: string[], ctx: ServiceContext): number {
  const [action, ...rest] = argv;
  if (
    action === undefined ||
    action === 'help' ||
    action === '--help' ||
    action === '-h' ||
    rest.some((a) => a === '--help' || a === '-h')
  ) {
    ctx.out(serviceUsage(p));
    return 0;
  }
  if (action !== 'install' && action !== 'uninstall') {
    ctx.err(`${p.name}: unknown service command "${action}" (install or uninstall)`);
    return 2;
  }
  let opts: ServiceOptions;
  try {
    opts = loadServiceOptions(rest, ctx.env, p.flags);
  } catch (e) {
    if (e instanceof ConfigError) {
      ctx.err(`${p.name}: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (ctx.platform === 'win32' && p.windowsName) {
    ctx.err(
      `${p.name}: the Windows service is named ${p.windowsName}; installing or removing it is not supported by this build`,
    );
    return 1;
  }
  if (ctx.platform !== 'linux') {
    ctx.err(`${p.name}: service ${action} is supported on Linux (systemd) only, not on ${ctx.platform}`);
    return 1;
  }
  const dir = resolve(ctx.cwd, opts['unit-dir']);
  if (!isDir(dir)) {
    ctx.err(`${p.name}: unit directory ${dir} does not exist (--unit-dir)`);
    return 1;
  }
  const unit = join(dir, p.unitName);
  try {
    if (action === 'install') {
      const configFile = opts['config-file'] ? resolve(ctx.cwd, opts['config-file']) : '';
      const logFile = opts['log-file'] ? resolve(ctx.cwd, opts['log-file']) : '';
      const text = unitText({
        program: p.name,
        description: p.description,
        command: ctx.command,
        configFile,
        defaultConfig: p.defaultConfig,
        logFile,
        settings: p.settings,
      });
      writeFileSync(unit, text, { mode: 0o644 });
      ctx.out(`installed ${unit}`);
      if (configFile && !existsSync(configFile))
        ctx.out(`note: ${configFile} does not exist yet; the ${p.name} service will not start until it does`);
    } else {
      if (!existsSync(unit)) {
        ctx.out(`${unit} is not installed; nothing to do`);
        return 0;
      }
      rmSync(unit);
      ctx.out(`removed ${unit}`);
    }
  } catch (e) {
    ctx.err(`${p.name}: cannot ${action === 'install' ? 'write' : 'remove'} ${unit}: ${describe(e)}`);
    return 1;
  }
  const reload = daemonReload();
  if (reload.ok) ctx.out('ran systemctl daemon-reload');
  else ctx.out(`systemctl daemon-reload not run (${reload.reason}); run it when systemd is available`);
  if (action === 'install') ctx.out(`start it with: systemctl enable --now ${p.unitName}`);
  return 0;
}

function isDir(path: string): boolean {
  try {
    return statSync(path).isDirectory();
  } catch {
    return false;
  }
}

function describe(e: unknown): string {
  const code = (e as NodeJS.ErrnoException).code;
  if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') return 'permission denied (run as root)';
  return (e as Error).message;
}

/** The context of a real run: this process's platform, environment and output streams. */
export function processServiceContext(script: string): ServiceContext {
  return {
    platform: process.platform,
    env: process.env,
    cwd: process.cwd(),
    command: [process.execPath, script],
    out: (line) => {
      process.stdout.write(line + '\n');
    },
    err: (line) => {
      process.stderr.write(line + '\n');
    },
  };
}
