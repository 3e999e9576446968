import type { ExecContext, HandlerSpec } from '../types.ts';
import { execCommand, stderrExcerpt } from '../exec.ts';
import type { KindResult } from './result.ts';

/** A handler's stdout only goes to the debug log; the rest is read and dropped. */
const MAX_HANDLER_OUTPUT = 64 * 1024;
const LOGGED_OUTPUT = 1024;

/** A `pipe` handler: the payload on the command's stdin; `timeout` seconds, 0 or absent for none. */
export async function pipeHandle(
  spec: HandlerSpec,
  payload: Buffer,
  namespace: string,
  ctx: ExecContext,
): Promise<KindResult> {
  const name = spec.metadata.name ?? '(unnamed)';
  if (!spec.command) return { ok: false, error: 'a pipe handler needs a command' };
  const r = await execCommand(spec, payload, namespace, ctx, {
    what: `handler ${name}`,
    maxStdout: MAX_HANDLER_OUTPUT,
  });
  const output = r.mask(r.stdout.subarray(0, LOGGED_OUTPUT).toString('utf8'));
  if (r.status === 0 && !r.timedOut && !r.cancelled) {
    if (output) ctx.log.debug('handler output', { handler: name, output });
    return { ok: true, status: 0 };
  }
  const stderr = stderrExcerpt(r.stderr);
  const why = r.error ?? `exit status ${r.status}`;
  return { ok: false, status: r.status, error: stderr ? `${why}: ${stderr}` : why };
}
