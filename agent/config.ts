import { mergeSources, parseArgv, validateConfig } from '../lib/config-loader.ts';
import { ConfigError } from '../proto/flags.ts';
import {
  AGENT_CONFIG_FILE,
  AGENT_ENV_PREFIX,
  AgentConfig,
  agentFlags,
} from '../proto/schemas/agent-config.ts';

interface LoadAgentConfigOptions {
  /** Overrides the default file path (tests point it at a file that does not exist). */
  defaultConfigFile?: string;
}

/** Flags after `start` + environment + config file + defaults, validated. Throws ConfigError. */
export function loadAgentConfig(
  argv: string[],
  env: NodeJS.ProcessEnv,
  opts: LoadAgentConfigOptions = {},
): AgentConfig {
  const args = parseArgv(argv, agentFlags);
  const stray = args.command ?? args.rest[0];
  if (stray !== undefined) throw new ConfigError(`unexpected argument "${stray}"`);
  const raw = mergeSources({
    specs: agentFlags,
    args,
    env,
    envPrefix: AGENT_ENV_PREFIX,
    configFileFlag: 'config-file',
    defaultConfigFile: opts.defaultConfigFile ?? AGENT_CONFIG_FILE,
  });
  return validateConfig(AgentConfig, raw);
}
