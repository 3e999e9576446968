// STUB by the lead so the backend starts while the mutators helper builds the real module (overwrite freely).
import type { Event } from '../../../proto/schemas/event.ts';
import type { ExecContext, MutatorRef } from '../types.ts';
export async function mutate(_ref: MutatorRef | undefined, event: Event, _namespace: string, _ctx: ExecContext): Promise<Buffer> { return Buffer.from(JSON.stringify(event)); }
