import { existsSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { ConfigError } from '../../proto/flags.ts';
import { type ServiceOptions } from '../../proto/schemas/agent-service.ts';
import { loadServiceOptions } from './options.ts';
import { daemonReload, UNIT_NAME, unitText } from './systemd.ts';

// `monitor-agent service install|uninstall`. On Linux it manages a systemd unit; the Windows
// service (named MonitorAgent) is out of this build's reach, and it says so.

export const WINDOWS_SERVICE_NAME = 'MonitorAgent';

export interface ServiceContext {
  platform: NodeJS.Platform;
  env: NodeJS.ProcessEnv;
  cwd: string;
  /** How the unit starts this agent: node and the monitor-agent script (absolute paths). */
  command: string[];
  out: (line: string) => void;
  err: (line: string) => void;
}

export const SERVICE_USAGE = `Usage: monitor-agent service install [--config-file FILE] [--log-file FILE] [--unit-dir DIR]
       monitor-agent service uninstall [--unit-dir DIR]

On Linux, writes or removes the systemd unit ${UNIT_NAME} (in /etc/systemd/system, or --unit-dir /
MONITOR_SYSTEMD_UNIT_DIR) and runs systemctl daemon-reload. The Windows service is named ${WINDOWS_SERVICE_NAME}.`;

/** Runs the subcommand; returns the exit code (0 done, 1 could not, 2 bad command line). */
export function runService(argv: string[], ctx: ServiceContext): number {
  const [action, ...rest] = argv;
  if (
    action === undefined ||
    action === 'help' ||
    action === '--help' ||
    action === '-h' ||
    rest.some((a) => a === '--help' || a === '-h')
  ) {
    ctx.out(SERVICE_USAGE);
    return 0;
  }
  if (action !== 'install' && action !== 'uninstall') {
    ctx.err(`monitor-agent: unknown service command "${action}" (install or uninstall)`);
    return 2;
  }
  let opts: ServiceOptions;
  try {
    opts = loadServiceOptions(rest, ctx.env);
  } catch (e) {
    if (e instanceof ConfigError) {
      ctx.err(`monitor-agent: ${e.message}`);
      return 2;
    }
    throw e;
  }
  if (ctx.platform === 'win32') {
    ctx.err(
      `monitor-agent: the Windows service is named ${WINDOWS_SERVICE_NAME}; installing or removing it is not supported by this build`,
    );
    return 1;
  }
  if (ctx.platform !== 'linux') {
    ctx.err(`monitor-agent: service ${action} is supported on Linux (systemd) only, not on ${ctx.platform}`);
    return 1;
  }
  const dir = resolve(ctx.cwd, opts['unit-dir']);
  if (!isDir(dir)) {
    ctx.err(`monitor-agent: unit directory ${dir} does not exist (--unit-dir)`);
    return 1;
  }
  const unit = join(dir, UNIT_NAME);
  try {
    if (action === 'install') {
      const configFile = opts['config-file'] ? resolve(ctx.cwd, opts['config-file']) : '';
      const logFile = opts['log-file'] ? resolve(ctx.cwd, opts['log-file']) : '';
      writeFileSync(unit, unitText({ command: ctx.command, configFile, logFile }), { mode: 0o644 });
      ctx.out(`installed ${unit}`);
      if (configFile && !existsSync(configFile))
        ctx.out(`note: ${configFile} does not exist yet; the agent will not start until it does`);
    } else {
      if (!existsSync(unit)) {
        ctx.out(`${unit} is not installed; nothing to do`);
        return 0;
      }
      rmSync(unit);
      ctx.out(`removed ${unit}`);
    }
  } catch (e) {
    ctx.err(`monitor-agent: cannot ${action === 'install' ? 'write' : 'remove'} ${unit}: ${describe(e)}`);
    return 1;
  }
  const reload = daemonReload();
  if (reload.ok) ctx.out('ran systemctl daemon-reload');
  else ctx.out(`systemctl daemon-reload not run (${reload.reason}); run it when systemd is available`);
  if (action === 'install') ctx.out(`start it with: systemctl enable --now ${UNIT_NAME}`);
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
