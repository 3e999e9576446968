import * as v from 'valibot';
import { OutputFormat, type CliConfigFile, type CliContext } from '../../proto/schemas/cli-config.ts';
import { describeIssues } from '../../proto/schemas/common.ts';
import { usageError } from '../errors.ts';

// What a command runs with: each setting from the first source that has it, flag > environment
// variable > the context's stored value > default (docs/cli.md#precedence). Pure: the sources are
// handed in, so the rules are unit-tested without a process.

/** The global options as commander parsed them (all optional). */
export interface GlobalFlags {
  url?: string;
  apiKey?: string;
  namespace?: string;
  timeout?: string;
  context?: string;
  format?: string;
  trustedCaFile?: string;
  insecureSkipTlsVerify?: boolean;
}

type Source = 'flag' | 'env' | 'context' | 'default';

/** How requests authenticate. A token of the context can be refreshed; one from the environment cannot. */
export type Credential =
  | { kind: 'api-key'; key: string; source: Source }
  | { kind: 'token'; token: string; source: Source; refreshable: boolean }
  | { kind: 'none' };

export interface Settings {
  /** The context in use (named by a flag, the environment or the file), if any. */
  contextName: string | undefined;
  context: CliContext | undefined;
  url: string | undefined;
  namespace: string;
  format: string;
  timeoutMs: number;
  trustedCaFile: string | undefined;
  insecureSkipTlsVerify: boolean;
  credential: Credential;
  /** Where each setting came from (`config view` shows it). */
  sources: Record<'url' | 'namespace' | 'format' | 'timeout' | 'tls' | 'context', Source>;
}

const DEFAULT_TIMEOUT_MS = 15_000;
export const DEFAULT_NAMESPACE = 'default';
const DEFAULT_FORMAT = 'tabular';

/** The environment variables monitorctl reads. */
export const ENV = {
  url: 'MONITOR_URL',
  apiKey: 'MONITOR_API_KEY',
  accessToken: 'MONITOR_ACCESS_TOKEN',
  namespace: 'MONITOR_NAMESPACE',
  timeout: 'MONITOR_TIMEOUT',
  context: 'MONITOR_CONTEXT',
  format: 'MONITOR_FORMAT',
  trustedCaFile: 'MONITOR_TRUSTED_CA_FILE',
  insecureSkipTlsVerify: 'MONITOR_INSECURE_SKIP_TLS_VERIFY',
} as const;

const UNITS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 };

/** A timeout in milliseconds from `15`, `1.5`, `500ms`, `30s`, `2m` (a bare number is seconds). */
export function parseTimeout(text: string, where: string): number {
  const m = /^\s*(\d+(?:\.\d+)?)\s*(ms|s|m|h)?\s*$/.exec(text);
  const ms = m ? Number(m[1]) * UNITS[m[2] ?? 's']! : NaN;
  if (!(ms > 0)) throw usageError(`${where}: "${text}" is not a timeout such as 15, 30s or 2m`);
  return ms;
}

function parseBool(text: string, where: string): boolean {
  if (/^(1|true|yes|on)$/i.test(text)) return true;
  if (/^(0|false|no|off|)$/i.test(text)) return false;
  throw usageError(`${where}: "${text}" is not true or false`);
}

export function checkFormat(format: string, where: string): string {
  const r = v.safeParse(OutputFormat, format);
  if (!r.success) throw usageError(`${where}: ${describeIssues(r.issues)}`);
  return format;
}

const nonEmpty = (s: string | undefined) => (s === undefined || s === '' ? undefined : s);

/** The first defined value and its source. */
function pick<T>(...candidates: [T | undefined, Source][]): [T | undefined, Source] {
  for (const c of candidates) if (c[0] !== undefined) return c;
  return [undefined, 'default'];
}

/** The same server: the URL without a trailing slash, case of scheme and host ignored. */
export const sameUrl = (a: string | undefined, b: string | undefined) =>
  a !== undefined && b !== undefined && normalUrl(a) === normalUrl(b);
const normalUrl = (u: string) => {
  try {
    return new URL(u).href.replace(/\/+$/, '');
  } catch {
    return u.replace(/\/+$/, '');
  }
};

interface ResolveOptions {
  /** `configure --context NAME` may name a context that does not exist yet. */
  allowNewContext?: boolean;
}

/**
 * The settings of one command. The context's credentials are used only against the context's own
 * URL: a `--url` or MONITOR_URL naming another server never gets its token or key.
 */
export function resolveSettings(
  flags: GlobalFlags,
  env: NodeJS.ProcessEnv,
  file: CliConfigFile,
  opts: ResolveOptions = {},
): Settings {
  const [contextName, contextSource] = pick<string>(
    [nonEmpty(flags.context), 'flag'],
    [nonEmpty(env[ENV.context]), 'env'],
    [file.current_context, 'context'],
  );
  const context = contextName === undefined ? undefined : file.contexts[contextName];
  if (contextName !== undefined && !context && !opts.allowNewContext && contextSource !== 'context') {
    const known = Object.keys(file.contexts);
    throw usageError(
      `no context "${contextName}" (${contextSource === 'flag' ? '--context' : ENV.context}); ` +
        (known.length ? `known: ${known.join(', ')}` : 'none is configured: run `monitorctl configure`'),
    );
  }
  const [url, urlSource] = pick<string>(
    [nonEmpty(flags.url), 'flag'],
    [nonEmpty(env[ENV.url]), 'env'],
    [context?.url, 'context'],
  );
  const [namespace, nsSource] = pick<string>(
    [nonEmpty(flags.namespace), 'flag'],
    [nonEmpty(env[ENV.namespace]), 'env'],
    [context?.namespace, 'context'],
  );
  const [format, formatSource] = pick<string>(
    [nonEmpty(flags.format), 'flag'],
    [nonEmpty(env[ENV.format]), 'env'],
    [context?.format, 'context'],
  );
  if (formatSource === 'flag') checkFormat(format!, '--format');
  if (formatSource === 'env') checkFormat(format!, ENV.format);
  const [timeoutMs, timeoutSource] = pick<number>(
    [flags.timeout !== undefined ? parseTimeout(flags.timeout, '--timeout') : undefined, 'flag'],
    [nonEmpty(env[ENV.timeout]) ? parseTimeout(env[ENV.timeout]!, ENV.timeout) : undefined, 'env'],
    [context?.timeout !== undefined ? context.timeout * 1000 : undefined, 'context'],
  );

  // The context's own settings count only while talking to its server.
  const own = context && sameUrl(url, context.url) ? context : undefined;
  const envInsecure = nonEmpty(env[ENV.insecureSkipTlsVerify]);
  const [caFile, caSource] = pick<string>(
    [nonEmpty(flags.trustedCaFile), 'flag'],
    [nonEmpty(env[ENV.trustedCaFile]), 'env'],
    [own?.trusted_ca_file || undefined, 'context'],
  );
  const [insecure, insecureSource] = pick<boolean>(
    [flags.insecureSkipTlsVerify ? true : undefined, 'flag'],
    [envInsecure !== undefined ? parseBool(envInsecure, ENV.insecureSkipTlsVerify) : undefined, 'env'],
    [own?.insecure_skip_tls_verify, 'context'],
  );

  return {
    contextName,
    context,
    url,
    namespace: namespace ?? DEFAULT_NAMESPACE,
    format: format ?? DEFAULT_FORMAT,
    timeoutMs: timeoutMs ?? DEFAULT_TIMEOUT_MS,
    trustedCaFile: caFile,
    insecureSkipTlsVerify: insecure ?? false,
    credential: credentialOf(flags, env, own),
    sources: {
      url: urlSource,
      namespace: nsSource,
      format: formatSource,
      timeout: timeoutSource,
      tls: caFile !== undefined ? caSource : insecureSource,
      context: contextSource,
    },
  };
}

/** --api-key, then MONITOR_API_KEY, then MONITOR_ACCESS_TOKEN, then the context's key or tokens. */
function credentialOf(flags: GlobalFlags, env: NodeJS.ProcessEnv, own: CliContext | undefined): Credential {
  const flagKey = nonEmpty(flags.apiKey);
  if (flagKey) return { kind: 'api-key', key: flagKey, source: 'flag' };
  const envKey = nonEmpty(env[ENV.apiKey]);
  if (envKey) return { kind: 'api-key', key: envKey, source: 'env' };
  const envToken = nonEmpty(env[ENV.accessToken]);
  if (envToken) return { kind: 'token', token: envToken, source: 'env', refreshable: false };
  if (own?.api_key) return { kind: 'api-key', key: own.api_key, source: 'context' };
  if (own?.access_token)
    return {
      kind: 'token',
      token: own.access_token,
      source: 'context',
      refreshable: own.refresh_token !== undefined,
    };
  return { kind: 'none' };
}

/** The URL, or the usage error that says how to give one. */
export function requireUrl(s: Settings): string {
  if (s.url) return s.url;
  throw usageError(
    'no API URL: run `monitorctl configure`, or give --url or ' + `${ENV.url}` + ' (docs/cli.md)',
  );
}
