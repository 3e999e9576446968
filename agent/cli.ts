import { Agent } from './agent.ts';
import { withCloudProvider } from './cloud/index.ts';
import { processServiceContext, runService } from '../lib/service/command.ts';
import { AGENT_SERVICE, SERVICE_USAGE } from './service.ts';
import { systemInfo } from '../lib/system.ts';
import { ListenError } from './listen.ts';
import { OutboxOpenError } from './outbox/index.ts';
import { helpText } from '../lib/config-loader.ts';
import { ConfigError } from '../proto/flags.ts';
import { createLogger } from '../lib/log.ts';
import { installSafetyNet, UNCAUGHT_EXIT_CODE } from '../lib/safety-net.ts';
import { AGENT_ENV_PREFIX, agentFlags } from '../proto/schemas/agent-config.ts';
import { loadAgentConfig } from './config.ts';
import { versionLine } from '../proto/version.ts';
import { loadAgentTls } from './tls.ts';
import { AllowListError, loadAllowList } from './checks/allow-list.ts';
import { loadLegacySettings } from './legacy/settings.ts';
import { legacyAgentConfig } from './legacy/agent-config.ts';

// The commands of monitor-agent. Exit codes: 0 success, 2 bad command line or configuration, or a
// local input that cannot bind.

const USAGE = `Usage: monitor-agent <command> [flags]

Commands:
  start     start the agent (monitor-agent start --help lists the flags)
  version   print the version of the agent
  service   install or uninstall the systemd unit (monitor-agent service --help)
  help      show this help`;

const START_USAGE = 'Usage: monitor-agent start [flags]';

const isHelp = (arg: string) => arg === '--help' || arg === '-h';

function fail(message: string, code = 2): never {
  process.stderr.write(`monitor-agent: ${message}\n`);
  process.exit(code);
}

async function start(argv: string[]): Promise<void> {
  if (argv.some(isHelp)) {
    process.stdout.write(helpText(START_USAGE, agentFlags, AGENT_ENV_PREFIX) + '\n');
    return;
  }
  let config;
  let tls;
  let allowList;
  let legacy;
  try {
    config = loadAgentConfig(argv, process.env);
    if (config['legacy-config']) {
      legacy = loadLegacySettings(config['legacy-config'], process.env);
      config = legacyAgentConfig(config, legacy.client);
    }
    tls = loadAgentTls(config);
    allowList = config['allow-list'] ? loadAllowList(config['allow-list']) : undefined;
  } catch (err) {
    if (err instanceof ConfigError || err instanceof AllowListError) fail(err.message);
    throw err;
  }
  const log = createLogger(config['log-level'], { component: 'agent', agent: config.name });
  if (config['discover-processes'])
    log.warn('process discovery is unavailable; --discover-processes is ignored');
  const system = config['detect-cloud-provider'] ? withCloudProvider(systemInfo, log) : systemInfo;
  const agent = new Agent(config, { logger: log, system, tls, allowList, legacy });
  let stopping = false;
  const shutdown = (signal: string, code = 0) => {
    if (stopping) return;
    stopping = true;
    log.info('stopping', { signal });
    agent.stop().then(
      () => process.exit(code),
      (err: unknown) => {
        log.error('stop failed', { error: err as Error });
        process.exit(1);
      },
    );
  };
  process.on('SIGINT', () => shutdown('SIGINT'));
  process.on('SIGTERM', () => shutdown('SIGTERM'));
  // Stopping in order closes the outbox cleanly; events not yet acknowledged wait there for the restart.
  installSafetyNet(log, () => shutdown('uncaughtException', UNCAUGHT_EXIT_CODE));
  // The cache-dir lock comes before anything else: a second agent on it must not touch its outbox.
  try {
    agent.open();
  } catch (err) {
    if (!(err instanceof OutboxOpenError)) throw err;
    log.error(err.message);
    fail(err.message);
  }
  // Local inputs bind first: an agent whose API or socket port is taken would silently lose events.
  try {
    await agent.listen();
  } catch (err) {
    if (!(err instanceof ListenError)) throw err;
    log.error(err.message, { host: err.host, port: err.port });
    await agent.stop().catch(() => {});
    fail(err.message);
  }
  agent.start();
}

/** Runs one monitor-agent command; `launcher` is the script a systemd unit runs (`service install`). */
export async function runAgentCommand(argv: string[], launcher: string): Promise<void> {
  const [command, ...rest] = argv;
  switch (command) {
    case 'start':
      return start(rest);
    case 'service':
      process.exitCode = runService(AGENT_SERVICE, rest, processServiceContext(launcher));
      return;
    case 'version':
      process.stdout.write(versionLine('monitor-agent') + '\n');
      return;
    case undefined:
    case 'help':
    case '--help':
    case '-h':
      if (rest[0] === 'start') return start(['--help']);
      if (rest[0] === 'service') {
        process.stdout.write(SERVICE_USAGE + '\n');
        return;
      }
      process.stdout.write(USAGE + '\n');
      return;
    default:
      process.stderr.write(`monitor-agent: unknown command "${command}"\n\n${USAGE}\n`);
      process.exit(2);
  }
}
