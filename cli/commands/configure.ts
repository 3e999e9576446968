import type { Command } from 'commander';
import { OUTPUT_FORMATS, type CliContext } from '../../proto/schemas/cli-config.ts';
import { login } from '../auth/session-api.ts';
import { ApiClient } from '../client/api-client.ts';
import { ApiError } from '../client/errors.ts';
import { parseBaseUrl, type Endpoint } from '../client/http.ts';
import { checkFormat, DEFAULT_NAMESPACE, ENV, parseTimeout } from '../config/settings.ts';
import type { CliDeps } from '../deps.ts';
import { usageError } from '../errors.ts';
import { ask } from './prompts.ts';
import type { CommandGroup } from './registry.ts';

// `monitorctl configure`: writes a context (the current one, or --context NAME) and makes it the
// current context. Interactive by default; `-n` takes everything from flags and the environment.
// A password is used once to log in and never stored: the context keeps the session's tokens.

const DEFAULT_URL = 'http://127.0.0.1:8080';

interface Answers {
  url: string;
  auth: { kind: 'password'; username: string; password: string } | { kind: 'api-key'; key: string };
  namespace: string;
  format: string;
  trustedCaFile?: string;
  insecure: boolean;
  timeoutSec?: number;
}

interface Given {
  url?: string;
  username?: string;
  password?: string;
  apiKey?: string;
  namespace?: string;
  format?: string;
  trustedCaFile?: string;
  insecure?: boolean;
  timeoutSec?: number;
}

/** What the command line and the environment say, before any question. */
function given(deps: CliDeps, cmd: Command): Given {
  const f = deps.flags(cmd);
  const o = cmd.opts<{ username?: string; password?: string }>();
  const env = deps.env;
  const pick = (flag: string | undefined, name: string) => flag || env[name] || undefined;
  const timeout = pick(f.timeout, ENV.timeout);
  const format = pick(f.format, ENV.format);
  if (format) checkFormat(format, f.format ? '--format' : ENV.format);
  const insecureEnv = env[ENV.insecureSkipTlsVerify];
  return {
    url: pick(f.url, ENV.url),
    username: o.username,
    password: o.password,
    apiKey: pick(f.apiKey, ENV.apiKey),
    namespace: pick(f.namespace, ENV.namespace),
    format,
    trustedCaFile: pick(f.trustedCaFile, ENV.trustedCaFile),
    insecure: f.insecureSkipTlsVerify || (insecureEnv ? /^(1|true|yes|on)$/i.test(insecureEnv) : undefined),
    timeoutSec: timeout ? parseTimeout(timeout, f.timeout ? '--timeout' : ENV.timeout) / 1000 : undefined,
  };
}

function nonInteractive(g: Given, old: CliContext | undefined): Answers {
  const url = g.url ?? old?.url;
  if (!url) throw usageError('configure -n: give --url (or MONITOR_URL)');
  let auth: Answers['auth'];
  if (g.apiKey) auth = { kind: 'api-key', key: g.apiKey };
  else if (g.username && g.password !== undefined)
    auth = { kind: 'password', username: g.username, password: g.password };
  else if (g.username) throw usageError('configure -n: --username needs --password');
  else throw usageError('configure -n: give --username and --password, or --api-key');
  return {
    url,
    auth,
    namespace: g.namespace ?? old?.namespace ?? DEFAULT_NAMESPACE,
    format: g.format ?? old?.format ?? 'tabular',
    trustedCaFile: g.trustedCaFile ?? old?.trusted_ca_file,
    insecure: g.insecure ?? old?.insecure_skip_tls_verify ?? false,
    timeoutSec: g.timeoutSec ?? old?.timeout,
  };
}

async function interactive(deps: CliDeps, g: Given, old: CliContext | undefined): Promise<Answers> {
  const url =
    g.url ??
    (await ask(deps, (p, ctx) =>
      p.input(
        {
          message: 'API URL:',
          default: old?.url ?? DEFAULT_URL,
          validate: (u) => {
            try {
              parseBaseUrl(u);
              return true;
            } catch (err) {
              return (err as Error).message;
            }
          },
        },
        ctx,
      ),
    ));
  let trustedCaFile = g.trustedCaFile ?? old?.trusted_ca_file;
  if (url.startsWith('https:') && g.trustedCaFile === undefined)
    trustedCaFile =
      (await ask(deps, (p, ctx) =>
        p.input(
          { message: 'Trusted CA file (empty: the system authorities):', default: trustedCaFile ?? '' },
          ctx,
        ),
      )) || undefined;
  let auth: Answers['auth'];
  if (g.apiKey) auth = { kind: 'api-key', key: g.apiKey };
  else {
    const method = g.username
      ? 'password'
      : await ask(deps, (p, ctx) =>
          p.select(
            {
              message: 'Authentication:',
              choices: [
                { name: 'user name and password', value: 'password' as const },
                { name: 'API key', value: 'api-key' as const },
              ],
              default: old?.api_key ? 'api-key' : 'password',
            },
            ctx,
          ),
        );
    if (method === 'api-key') {
      const key = await ask(deps, (p, ctx) => p.password({ message: 'API key:', mask: '*' }, ctx));
      auth = { kind: 'api-key', key };
    } else {
      const username =
        g.username ??
        (await ask(deps, (p, ctx) =>
          p.input({ message: 'Username:', default: old?.username ?? 'admin' }, ctx),
        ));
      const password =
        g.password ?? (await ask(deps, (p, ctx) => p.password({ message: 'Password:', mask: '*' }, ctx)));
      auth = { kind: 'password', username, password };
    }
  }
  const namespace =
    g.namespace ??
    (await ask(deps, (p, ctx) =>
      p.input({ message: 'Namespace:', default: old?.namespace ?? DEFAULT_NAMESPACE }, ctx),
    ));
  const format =
    g.format ??
    (await ask(deps, (p, ctx) =>
      p.select(
        {
          message: 'Preferred output format:',
          choices: OUTPUT_FORMATS.map((f) => ({ name: f, value: f as string })),
          default:
            old?.format && (OUTPUT_FORMATS as readonly string[]).includes(old.format)
              ? old.format
              : 'tabular',
        },
        ctx,
      ),
    ));
  return {
    url,
    auth,
    namespace,
    format,
    trustedCaFile,
    insecure: g.insecure ?? old?.insecure_skip_tls_verify ?? false,
    timeoutSec: g.timeoutSec ?? old?.timeout,
  };
}

/** Logs in or checks the API key; the credentials the context keeps. */
async function credentials(ep: Endpoint, a: Answers): Promise<Partial<CliContext>> {
  if (a.auth.kind === 'password') {
    const tokens = await login(ep, a.auth.username, a.auth.password);
    return { username: a.auth.username, ...tokens };
  }
  const key = a.auth.key;
  // Any authenticated call tells a bad key (401) from a good one.
  await new ApiClient(ep, { header: async () => `Key ${key}`, renew: async () => false })
    .get('/api/core/v2/namespaces', { limit: '1' })
    .catch((err: unknown) => {
      throw err instanceof ApiError ? err.about(`API key at ${ep.base.origin}`) : err;
    });
  return { api_key: key };
}

export const configureCommand: CommandGroup = {
  register(program, deps) {
    program
      .command('configure')
      .description('log in to a backend and save it as a context (the current one, or --context NAME)')
      .option('-n, --non-interactive', 'ask nothing: take every value from flags and MONITOR_ variables')
      .option('--username <name>', 'log in as this user (the password is used once, never stored)')
      .option('--password <password>', 'the password of --username')
      .addHelpText(
        'after',
        '\nThe global options --url, --api-key, --namespace, --format, --timeout, --trusted-ca-file and\n' +
          '--insecure-skip-tls-verify give the values to save; --context NAME the context to write.',
      )
      .action(async (o: { nonInteractive?: boolean }, cmd: Command) => {
        const file = deps.store.load();
        const f = deps.flags(cmd);
        const name = f.context || deps.env[ENV.context] || file.current_context || 'default';
        const old = file.contexts[name];
        const g = given(deps, cmd);
        if (!o.nonInteractive && !deps.interactive())
          throw usageError('configure: not a terminal, so nothing can be asked: use -n with flags');
        const a = o.nonInteractive ? nonInteractive(g, old) : await interactive(deps, g, old);
        const ep: Endpoint = {
          base: parseBaseUrl(a.url),
          timeoutMs: (a.timeoutSec ?? 15) * 1000,
          tls: { trustedCaFile: a.trustedCaFile, insecureSkipTlsVerify: a.insecure },
        };
        const creds = await credentials(ep, a);
        const context: CliContext = {
          url: ep.base.href.replace(/\/+$/, ''),
          namespace: a.namespace,
          format: a.format,
          ...(a.timeoutSec !== undefined ? { timeout: a.timeoutSec } : {}),
          ...(a.trustedCaFile ? { trusted_ca_file: a.trustedCaFile } : {}),
          insecure_skip_tls_verify: a.insecure,
          ...creds,
        };
        deps.store.update((cfg) => {
          cfg.contexts[name] = context;
          cfg.current_context = name;
        });
        const who = a.auth.kind === 'password' ? `user "${a.auth.username}"` : 'an API key';
        deps.out.write(
          `Configured context "${name}": ${context.url} as ${who}, namespace "${a.namespace}"\n`,
        );
      });
  },
};
