import { ConfigError, helpText, mergeSources, parseArgv, validateConfig } from '../proto/config-loader.ts';
import { createLogger } from '../proto/log.ts';
import { BACKEND_CONFIG_FILE, BACKEND_ENV_PREFIX, BackendConfig, backendFlags } from '../proto/schemas/backend-config.ts';
import { VERSION } from '../proto/version.ts';
import { startBackendNode } from './backend-node.ts';

const USAGE = `Usage: monitor-backend <command> [flags]

Commands:
  start     start a backend node (embedded etcd and NATS unless --etcd-client-urls / --nats-url)
  version   print the version
  help      show this help`;

function fail(message: string, code: number): never {
  process.stderr.write(`monitor-backend: ${message}\n`);
  process.exit(code);
}

async function start(argv: string[]): Promise<void> {
  let cfg: BackendConfig;
  try {
    const args = parseArgv(argv, backendFlags);
    if (args.values.has('help') || argv.includes('--help') || argv.includes('-h')) { process.stdout.write(helpText('Usage: monitor-backend start [flags]', backendFlags, BACKEND_ENV_PREFIX) + '\n'); return; }
    cfg = validateConfig(BackendConfig, mergeSources({ specs: backendFlags, args, env: process.env, envPrefix: BACKEND_ENV_PREFIX, configFileFlag: 'config-file', defaultConfigFile: BACKEND_CONFIG_FILE }));
  } catch (err) {
    if (err instanceof ConfigError) fail(err.message, 2);
    throw err;
  }
  const log = createLogger(cfg['log-level'], { component: 'backend' });
  let node;
  try { node = await startBackendNode(cfg, log); }
  catch (err) { fail((err as Error).message, 1); }

  let stoppingSince = 0;
  const shutdown = async (signal: string, code = 0) => {
    // A terminal's Ctrl-C and a wrapper script may both signal us; only a later, deliberate
    // second signal skips the orderly stop.
    if (stoppingSince) { if (Date.now() - stoppingSince > 2000) { log.warn('second signal: exiting now'); process.exit(1); } return; }
    stoppingSince = Date.now();
    log.info('shutting down', { signal });
    const force = setTimeout(() => { log.error('shutdown took too long, exiting'); process.exit(1); }, 30_000);
    force.unref();
    await node.stop();
    process.exit(code);
  };
  process.on('SIGINT', () => void shutdown('SIGINT'));
  process.on('SIGTERM', () => void shutdown('SIGTERM'));
  void node.fatal.then((msg) => { log.error('embedded service failed for good; stopping', { error: msg }); process.stderr.write(`monitor-backend: ${msg}\n`); void shutdown('fatal', 1); });
}

const [command, ...rest] = process.argv.slice(2);
switch (command) {
  case 'start': await start(rest); break;
  case 'version': case '--version': process.stdout.write(`monitor-backend version ${VERSION}\n`); break;
  case 'help': case '--help': case '-h': case undefined: process.stdout.write(USAGE + '\n'); break;
  default: process.stderr.write(`monitor-backend: unknown command "${command}"\n\n${USAGE}\n`); process.exit(2);
}
