import type { ExecContext, HandlerOutcome, HandlerSpec } from '../types.ts';
import { pipeHandle } from './pipe.ts';
import { tcpHandle } from './tcp.ts';
import { udpHandle } from './udp.ts';
import type { KindResult } from './result.ts';

/**
 * Runs one handler with an already mutated payload (docs/compatibility.md#handlers). Never throws: every
 * failure comes back as ok=false with an error. The payload is never logged (it is the event).
 */
export async function runHandler(
  spec: HandlerSpec,
  payload: Buffer,
  namespace: string,
  ctx: ExecContext,
): Promise<HandlerOutcome> {
  const handler = spec.metadata.name ?? '';
  const started = Date.now();
  let r: KindResult;
  try {
    r = await runKind(spec, payload, namespace, ctx);
  } catch (err) {
    r = { ok: false, error: (err as Error)?.message ?? String(err) };
  }
  const outcome: HandlerOutcome = { handler, ok: r.ok, duration: Date.now() - started };
  if (r.error !== undefined) outcome.error = r.error;
  if (r.status !== undefined) outcome.status = r.status;
  const fields = {
    handler,
    type: spec.type,
    namespace,
    duration_ms: outcome.duration,
    bytes: payload.length,
    ...(r.status !== undefined ? { status: r.status } : {}),
  };
  if (r.ok) ctx.log.debug('handler ran', fields);
  else ctx.log.warn('handler failed', { ...fields, error: r.error });
  return outcome;
}

function runKind(
  spec: HandlerSpec,
  payload: Buffer,
  namespace: string,
  ctx: ExecContext,
): Promise<KindResult> {
  switch (spec.type) {
    case 'pipe':
      return pipeHandle(spec, payload, namespace, ctx);
    case 'tcp':
      return tcpHandle(spec, payload, ctx);
    case 'udp':
      return udpHandle(spec, payload, ctx);
    case 'set':
      return Promise.resolve({ ok: false, error: 'set handlers are expanded, not run' });
    default:
      return Promise.resolve({ ok: false, error: `unknown handler type ${JSON.stringify(spec.type)}` });
  }
}
