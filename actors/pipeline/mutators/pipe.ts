import type { ExecContext, MutatorSpec } from '../types.ts';

/** A `pipe` mutator: the event JSON on the command's stdin, its stdout is the payload. (Being built.) */
export async function pipeMutate(_spec: MutatorSpec, _eventJson: string, _namespace: string, _ctx: ExecContext): Promise<Buffer> {
  throw new Error('pipe mutators are not built yet');
}
