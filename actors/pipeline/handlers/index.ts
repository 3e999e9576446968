// STUB by the lead so the backend starts while the handlers helper builds the real module (overwrite freely).
import type { ExecContext, HandlerOutcome, HandlerSpec } from '../types.ts';
export async function runHandler(spec: HandlerSpec, _payload: Buffer, _namespace: string, _ctx: ExecContext): Promise<HandlerOutcome> { return { handler: spec.metadata.name ?? '', ok: false, duration: 0, error: 'handlers are not built yet' }; }
