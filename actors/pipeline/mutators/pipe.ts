import type { ExecContext, MutatorSpec } from '../types.ts';
import { execCommand, stderrExcerpt } from '../exec.ts';

/** A mutator's output is the handlers' payload, so it is held in memory whole; more is an error, not a cut payload. */
const MAX_MUTATOR_OUTPUT = 16 * 1024 * 1024;

/**
 * A `pipe` mutator: the event JSON on the command's stdin, its stdout is the payload. A non-zero
 * exit, a timeout or a missing asset throws an Error naming the mutator (the pipeline stops there).
 */
export async function pipeMutate(
  spec: MutatorSpec,
  eventJson: string,
  namespace: string,
  ctx: ExecContext,
): Promise<Buffer> {
  const name = spec.metadata.name ?? '(unnamed)';
  const what = `mutator ${name}`;
  let r;
  try {
    r = await execCommand(spec, eventJson, namespace, ctx, {
      what,
      maxStdout: MAX_MUTATOR_OUTPUT,
      killOnOverflow: true,
    });
  } catch (err) {
    throw new Error(`mutator ${name}: ${(err as Error).message}`);
  }
  if (r.status === 0 && !r.timedOut && !r.cancelled && !r.overflow) {
    ctx.log.debug('mutator ran', {
      mutator: name,
      namespace,
      duration_ms: r.duration,
      bytes: r.stdout.length,
    });
    return r.stdout;
  }
  const why = r.error ?? `exit status ${r.status}`;
  const stderr = stderrExcerpt(r.stderr);
  ctx.log.warn('mutator failed', {
    mutator: name,
    namespace,
    status: r.status,
    error: why,
    stderr,
    duration_ms: r.duration,
  });
  throw new Error(`mutator ${name} failed (status ${r.status}): ${why}${stderr ? `: ${stderr}` : ''}`);
}
