import type * as v from 'valibot';
import { helpText, mergeSources, parseArgv, validateConfig } from '../../lib/config-loader.ts';
import { ConfigError, type FlagSpec } from '../../proto/flags.ts';
import { createLogger } from '../../lib/log.ts';
import { confirm } from '../../lib/prompt.ts';
import { installSafetyNet, UNCAUGHT_EXIT_CODE } from '../../lib/safety-net.ts';
import { scrubUrlCredentials } from '../../lib/url-credentials.ts';
import {
  BACKEND_CONFIG_FILE,
  BACKEND_ENV_PREFIX,
  BackendConfig,
  backendFlags,
  InitConfig,
  initFlags,
  UpgradeConfig,
  upgradeFlags,
} from '../../proto/schemas/backend-config.ts';
import { VERSION, versionLine } from '../../proto/version.ts';
import { processServiceContext, runService, serviceUsage } from '../../lib/service/command.ts';
import { BACKEND_SERVICE } from './service-unit.ts';
import type { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import { AlreadyInitializedError, initCluster } from '../auth/seed.ts';
import { loadAgentServerTls } from '../agents/tls.ts';
import { loadApiServerTls } from '../api/tls.ts';
import { CommandError, connectEtcd } from './etcd-command.ts';
import { startBackendNode } from './node.ts';
import { loadStoreAccess, type StoreAccess } from './store-access.ts';
import { checkDatastore, newerDatastore, pendingMigrations, stampNewDatastore } from './upgrade/datastore.ts';
import { LATEST } from './upgrade/migrations.ts';
import { upgradeDatastore } from './upgrade/upgrade.ts';

// The commands of monitor-backend. Exit codes: 0 success, 1 the node or the cluster failed (or an
// upgrade refused or not confirmed), 2 bad command line or configuration, 3 `init` of a cluster
// already initialized.

const DEFAULTS = {
  /** A second signal sooner than this after the first is the same Ctrl-C seen twice, not a deliberate one. */
  secondSignalMs: 2000,
} as const;

const USAGE = `Usage: monitor-backend <command> [flags]

Commands:
  start     start a backend node (embedded etcd and NATS unless --etcd-client-urls / --nats-url)
  init      initialize a cluster: the administrator, default namespace, agent user, roles
  upgrade   upgrade the datastore once every backend runs this version (asks y/n; --skip-confirm)
  service   install or uninstall the systemd unit (monitor-backend service --help)
  version   print the version
  help      show this help`;

function fail(message: string, code: number): never {
  // A client's error may quote a URL as it was given, user info included.
  process.stderr.write(`monitor-backend: ${scrubUrlCredentials(message)}\n`);
  process.exit(code);
}

/** Flags > MONITOR_BACKEND_* > config file > defaults; a bad value exits 2 with one line. Undefined after --help. */
function loadConfig<S extends v.GenericSchema>(
  argv: string[],
  specs: FlagSpec[],
  schema: S,
  usage: string,
): v.InferOutput<S> | undefined {
  try {
    if (argv.includes('--help') || argv.includes('-h')) {
      process.stdout.write(helpText(usage, specs, BACKEND_ENV_PREFIX) + '\n');
      return undefined;
    }
    const args = parseArgv(argv, specs);
    return validateConfig(
      schema,
      mergeSources({
        specs,
        args,
        env: process.env,
        envPrefix: BACKEND_ENV_PREFIX,
        configFileFlag: 'config-file',
        defaultConfigFile: BACKEND_CONFIG_FILE,
      }),
    );
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 2);
    throw err;
  }
}

/** `read()`, with a ConfigError ending the program with status 2. */
function withConfigErrors<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 2);
    throw err;
  }
}

/** etcd for a command, or the end of the program with the status of the failure. */
async function commandEtcd(cfg: InitConfig | UpgradeConfig): Promise<EtcdAdapter> {
  const access = withConfigErrors(() => loadStoreAccess(cfg)).etcd;
  try {
    return await connectEtcd(cfg, access);
  } catch (err) {
    if (err instanceof CommandError) fail(err.message, err.code);
    throw err;
  }
}

async function init(argv: string[]): Promise<void> {
  const cfg = loadConfig(argv, initFlags, InitConfig, 'Usage: monitor-backend init [flags]');
  if (!cfg) return;
  const etcd = await commandEtcd(cfg);
  try {
    // A new datastore gets its version here when init comes before the first start; a newer one
    // is not ours to seed.
    await checkDatastore(etcd, createLogger(cfg['log-level'], { component: 'init' }));
    await initCluster(etcd, {
      username: cfg['cluster-admin-username'],
      password: cfg['cluster-admin-password'],
      apiKey: cfg['cluster-admin-api-key'],
    });
    process.stdout.write(`cluster initialized: administrator "${cfg['cluster-admin-username']}"\n`);
  } catch (err) {
    if (!(err instanceof AlreadyInitializedError)) fail((err as Error).message, 1);
    if (cfg['ignore-already-initialized']) process.stdout.write('the cluster is already initialized\n');
    else fail('the cluster is already initialized (use --ignore-already-initialized to accept that)', 3);
  } finally {
    await etcd.close();
  }
}

/**
 * `monitor-backend upgrade`: the pending datastore migrations, once, after a y/n on a terminal
 * (docs/operations.md#upgrades). Without a terminal the flag is required: a prompt nobody sees
 * would hang a script.
 */
async function upgrade(argv: string[]): Promise<void> {
  const cfg = loadConfig(
    argv,
    upgradeFlags,
    UpgradeConfig,
    'Usage: monitor-backend upgrade [--skip-confirm] [flags]',
  );
  if (!cfg) return;
  if (!cfg['skip-confirm'] && !process.stdin.isTTY)
    fail('upgrade asks for confirmation, and stdin is not a terminal: add --skip-confirm', 2);
  const log = createLogger(cfg['log-level'], { component: 'upgrade' });
  const etcd = await commandEtcd(cfg);
  const current = (version: number) =>
    process.stdout.write(`the datastore is already at version ${version}: nothing to upgrade\n`);
  try {
    // An etcd with nothing of ours is a new datastore, at the latest version, as a first start makes it.
    const state = await stampNewDatastore(etcd, log);
    const newer = newerDatastore(state);
    if (newer) fail(newer, 1);
    if (state.version >= LATEST) return void current(state.version);
    if (!cfg['skip-confirm']) {
      const pending = pendingMigrations(state.version).map((t, i) => `  ${state.version + i + 1}. ${t}\n`);
      process.stdout.write(
        `The datastore is at version ${state.version}. Migrations to apply:\n${pending.join('')}` +
          `Every backend of the cluster should run monitor-backend ${VERSION} before.\n`,
      );
      if (!(await confirm(`Upgrade the datastore to version ${LATEST}? [y/n] `)))
        fail('upgrade not confirmed: nothing was changed', 1);
    }
    const outcome = await upgradeDatastore(etcd, log);
    if (!outcome.upgraded) return void current(outcome.version);
    process.stdout.write(`datastore upgraded from version ${outcome.from} to ${outcome.to}\n`);
  } catch (err) {
    fail((err as Error).message, 1);
  } finally {
    await etcd.close();
  }
}

async function start(argv: string[]): Promise<void> {
  const cfg = loadConfig(argv, backendFlags, BackendConfig, 'Usage: monitor-backend start [flags]');
  if (!cfg) return;
  // Read before anything starts, so a bad TLS file or credential is a config error (exit 2) like a bad flag.
  const tls = withConfigErrors(() => ({ agent: loadAgentServerTls(cfg), api: loadApiServerTls(cfg) }));
  const access: StoreAccess = withConfigErrors(() => loadStoreAccess(cfg));
  const log = createLogger(cfg['log-level'], { component: 'backend' });
  let node: Awaited<ReturnType<typeof startBackendNode>> | undefined;
  // Before the node runs there is nothing to stop in order; afterwards its orderly stop hands its
  // shards and jobs over sooner than their leases and ack waits would.
  installSafetyNet(log, () =>
    node ? void shutdown('uncaughtException', UNCAUGHT_EXIT_CODE) : process.exit(UNCAUGHT_EXIT_CODE),
  );
  try {
    node = await startBackendNode(cfg, log, access, tls);
  } catch (err) {
    fail((err as Error).message, 1);
  }

  let stoppingSince = 0;
  const running = node;
  const shutdown = async (signal: string, code = 0) => {
    // A terminal's Ctrl-C and a wrapper script may both signal us; only a later, deliberate
    // second signal skips the orderly stop.
    if (stoppingSince) {
      if (Date.now() - stoppingSince > DEFAULTS.secondSignalMs) {
        log.warn('second signal: exiting now');
        process.exit(1);
      }
      return;
    }
    stoppingSince = Date.now();
    log.info('shutting down', { signal });
    // An orderly stop past --shutdown-timeout is cut short with status 1: the supervisor's own kill
    // would come next, and the lease and ack waits hand over whatever was left.
    const boundSec = cfg['shutdown-timeout'];
    const force = setTimeout(() => {
      log.error('shutdown took too long, exiting', { timeout_seconds: boundSec });
      process.exit(1);
    }, boundSec * 1000);
    force.unref();
    // A stop that fails still ends the process, with the status this stop was for.
    await running.stop().catch((err: unknown) => log.error('stop failed', { error: err as Error }));
    log.info('shutdown complete', { signal, ms: Date.now() - stoppingSince });
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  void running.fatal.then((msg) => {
    log.error('embedded service failed for good; stopping', { error: msg });
    process.stderr.write(`monitor-backend: ${msg}\n`);
    void shutdown('fatal', 1);
  });
}

/**
 * Runs one monitor-backend command; `start` returns once the node runs, and the process lives on.
 * `launcher` is the script a systemd unit runs (`service install`).
 */
export async function runBackendCommand(argv: string[], launcher: string): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'service':
      process.exitCode = runService(BACKEND_SERVICE, rest, processServiceContext(launcher));
      return;
    case 'start':
      return start(rest);
    case 'init':
      return init(rest);
    case 'upgrade':
      return upgrade(rest);
    case 'version':
    case '--version':
      process.stdout.write(versionLine('monitor-backend') + '\n');
      return;
    case 'help':
    case '--help':
    case '-h':
    case undefined:
      if (rest[0] === 'service') {
        process.stdout.write(serviceUsage(BACKEND_SERVICE) + '\n');
        return;
      }
      process.stdout.write(USAGE + '\n');
      return;
    default:
      process.stderr.write(`monitor-backend: unknown command "${command}"\n\n${USAGE}\n`);
      process.exit(2);
  }
}
