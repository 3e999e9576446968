import { delimiter } from 'node:path';
import { runInGroup } from '../../lib/process-group.ts';
import { maskSecrets, resolveEnvSecrets, type SecretRef } from '../../lib/secrets.ts';
import type { ExecContext } from './types.ts';

// Runs the command of a pipe mutator or pipe handler on the backend
// (docs/compatibility.md#command-execution): through the shell in a process group of its own
// (lib/process-group.ts, shared with the agent's checks), the payload on stdin, stdout kept apart from stderr
// (a mutator's stdout is its payload and must not be polluted by diagnostics; the agent's check runner
// combines the two).

/** Variables whose asset values are directories put in front of the inherited value. */
const PREPENDED_VARS = ['PATH', 'LD_LIBRARY_PATH', 'CPATH'] as const;
/** stderr kept for the logs and error messages. */
const MAX_STDERR_BYTES = 64 * 1024;

/** The fields of a Mutator or Handler resource that say how to run its command. */
interface CommandResource {
  command?: string | undefined;
  timeout?: number | undefined;
  env_vars?: string[] | null | undefined;
  runtime_assets?: string[] | null | undefined;
  secrets?: SecretRef[] | null | undefined;
}

interface ExecOptions {
  /** For logs: `mutator <name>` or `handler <name>`. */
  what: string;
  /** stdout kept in memory. */
  maxStdout: number;
  /** More stdout than `maxStdout` kills the group (a mutator whose output is cut is useless); otherwise the rest is dropped. */
  killOnOverflow?: boolean;
}

interface ExecResult {
  /** Exit status; 2 after a timeout, 3 when the command could not run or was killed by a signal. */
  status: number;
  stdout: Buffer;
  /** At most MAX_STDERR_BYTES of it. */
  stderr: string;
  timedOut: boolean;
  cancelled: boolean;
  /** stdout went past `maxStdout`. */
  overflow: boolean;
  /** Why the command did not run or was killed by a signal. */
  error?: string;
  /** Milliseconds. */
  duration: number;
}

interface CommandResult extends ExecResult {
  /** Hides the command's secret values in text about to be logged (stderr is already masked). */
  mask: (text: string) => string;
}

/** Splits `KEY=value` entries; an entry without a key (or with a NUL) is skipped with a warning naming its position only (values may be secrets). */
function parseEnvVars(
  entries: readonly string[] | null | undefined,
  what: string,
  ctx: ExecContext,
): Record<string, string> {
  const out: Record<string, string> = {};
  (entries ?? []).forEach((e, i) => {
    const eq = typeof e === 'string' ? e.indexOf('=') : -1;
    if (eq <= 0 || e.includes('\0')) {
      ctx.log.warn('ignoring an invalid env_vars entry (expected KEY=value)', { resource: what, index: i });
      return;
    }
    out[e.slice(0, eq)] = e.slice(eq + 1);
  });
  return out;
}

/**
 * The command's environment: the backend's, then the resource's env_vars, the assets' (search paths
 * prepended) and its secrets; with the secrets' values, to mask them in what is logged.
 */
async function pipelineCommandEnv(
  res: CommandResource,
  namespace: string,
  what: string,
  ctx: ExecContext,
): Promise<{ env: Record<string, string>; secretValues: string[] }> {
  const env: Record<string, string> = {};
  for (const [k, val] of Object.entries(ctx.baseEnv)) if (val !== undefined) env[k] = val;
  Object.assign(env, parseEnvVars(res.env_vars, what, ctx));
  const names = res.runtime_assets ?? [];
  if (names.length) {
    const assets = await ctx.assets(names, namespace);
    for (const [k, val] of Object.entries(assets.env)) {
      const prepend = (PREPENDED_VARS as readonly string[]).includes(k) && env[k];
      env[k] = prepend ? `${val}${delimiter}${env[k]}` : val;
    }
  }
  // Secrets last, read now from the backend's environment and kept nowhere (lib/secrets.ts); a missing
  // one stops the command, with a message naming it (never a value).
  if (!res.secrets?.length) return { env, secretValues: [] };
  const secrets = resolveEnvSecrets(res.secrets, ctx.secretEnv ?? process.env);
  if (!secrets.ok) throw new Error(secrets.errors.join('; '));
  Object.assign(env, secrets.values);
  return { env, secretValues: Object.values(secrets.values) };
}

/**
 * Runs `res.command` with `stdin` as its input. Resolves in every case (a failure to start is
 * status 3 with `error`); rejects only when the environment cannot be built (a missing asset or secret).
 */
export async function execCommand(
  res: CommandResource,
  stdin: Buffer | string,
  namespace: string,
  ctx: ExecContext,
  opts: ExecOptions,
): Promise<CommandResult> {
  const { env, secretValues } = await pipelineCommandEnv(res, namespace, opts.what, ctx);
  const r = await run(res.command ?? '', stdin, env, res.timeout ?? 0, ctx.signal, opts);
  const mask = (text: string) => maskSecrets(text, secretValues);
  return { ...r, stderr: mask(r.stderr), mask };
}

async function run(
  command: string,
  stdin: Buffer | string,
  env: Record<string, string>,
  timeoutSeconds: number,
  signal: AbortSignal | undefined,
  opts: ExecOptions,
): Promise<ExecResult> {
  const started = Date.now();
  const out: Buffer[] = [];
  let outBytes = 0;
  const err: Buffer[] = [];
  let errBytes = 0;
  let overflow = false;
  const result = (status: number, extra: Partial<ExecResult> = {}): ExecResult => ({
    status,
    stdout: Buffer.concat(out),
    stderr: Buffer.concat(err).toString('utf8'),
    timedOut: false,
    cancelled: false,
    overflow,
    duration: Date.now() - started,
    ...extra,
  });
  if (signal?.aborted) return result(3, { cancelled: true, error: 'cancelled: the node is stopping' });
  const group = runInGroup({
    command,
    env,
    stdin,
    timeout: timeoutSeconds,
    signal,
    onStdout: (b) => {
      if (overflow) return;
      const room = opts.maxStdout - outBytes;
      if (b.length > room) {
        overflow = true;
        if (room > 0) out.push(b.subarray(0, room));
        outBytes = opts.maxStdout;
        if (opts.killOnOverflow) group.kill(`output larger than ${opts.maxStdout} bytes`);
        return;
      }
      out.push(b);
      outBytes += b.length;
    },
    onStderr: (b) => {
      if (errBytes >= MAX_STDERR_BYTES) return;
      const part = b.subarray(0, MAX_STDERR_BYTES - errBytes);
      err.push(part);
      errBytes += part.length;
    },
  });
  const end = await group.end;
  // A background child may still hold the pipes: our ends are closed so no descriptor leaks.
  for (const s of [group.child?.stdin, group.child?.stdout, group.child?.stderr]) s?.destroy();
  switch (end.kind) {
    case 'timeout':
      return result(2, { timedOut: true, error: `timed out after ${timeoutSeconds} s` });
    case 'cancelled':
      return result(3, { cancelled: true, error: 'cancelled: the node is stopping' });
    case 'killed':
      return result(3, { error: end.reason });
    case 'error':
      return result(3, { error: `cannot run the command: ${end.message}` });
    case 'exit':
      return end.code !== null
        ? result(end.code)
        : result(3, { error: `killed by signal ${end.signal ?? 'unknown'}` });
  }
}

/** The first part of a command's stderr, on one line, for error messages. */
export function stderrExcerpt(stderr: string, max = 300): string {
  const s = stderr.trim().replace(/\s+/g, ' ');
  return s.length > max ? `${s.slice(0, max)}…` : s;
}
