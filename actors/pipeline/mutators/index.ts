import { JsSandbox } from '../../../lib/js-sandbox.ts';
import type { Event } from '../../../proto/schemas/event.ts';
import type { ExecContext, MutatorRef, MutatorSpec } from '../types.ts';
import { pipeMutate } from './pipe.ts';

/** The time limit of a javascript mutator without a `timeout`. */
export const DEFAULT_JS_MUTATOR_TIMEOUT_MS = 500;
const MAX_PROGRAMS = 64;

/**
 * The payload for the handler of a workflow (docs/compatibility.md#mutators): the JSON event by default or
 * with `json`; the raw check output with `only_check_output`; a `javascript` mutator's returned string (null
 * or undefined mean the JSON event); a `pipe` mutator's stdout. Failures throw an Error naming the mutator.
 */
export async function mutate(
  ref: MutatorRef | undefined,
  event: Event,
  namespace: string,
  ctx: ExecContext,
  eventJson?: string,
): Promise<Buffer> {
  // `eventJson`: the event as it came off the queue, which saves serializing it again.
  const json = () => eventJson ?? JSON.stringify(event);
  if (!ref) return Buffer.from(json());
  if (ref.kind === 'builtin') {
    if (ref.name === 'only_check_output') return Buffer.from(event.check?.output ?? '');
    return Buffer.from(json());
  }
  const spec = ref.mutator;
  if (spec.type === 'javascript') return javascriptMutate(spec, event);
  return pipeMutate(spec, json(), namespace, ctx);
}

interface Program {
  sandbox: JsSandbox;
  id: number;
}
const programs = new Map<string, Program>();

/** A context per mutator and source, reused across events (each run parses its own copy of the event). */
function program(spec: MutatorSpec): Program {
  const name = spec.metadata.name ?? '(unnamed)';
  const key = JSON.stringify([spec.metadata.namespace, name, spec.eval]);
  let p = programs.get(key);
  if (p) {
    programs.delete(key);
    programs.set(key, p);
    return p;
  }
  const sandbox = new JsSandbox();
  let id: number;
  try {
    id = sandbox.define('body', spec.eval ?? '');
  } catch (err) {
    throw new Error(`mutator ${name}: ${(err as Error).message}`);
  }
  p = { sandbox, id };
  programs.set(key, p);
  if (programs.size > MAX_PROGRAMS) programs.delete(programs.keys().next().value!);
  return p;
}

function javascriptMutate(spec: MutatorSpec, event: Event): Buffer {
  const name = spec.metadata.name ?? '(unnamed)';
  if (!spec.eval) throw new Error(`mutator ${name}: a javascript mutator needs eval`);
  const p = program(spec);
  const timeoutMs = spec.timeout ? spec.timeout * 1000 : DEFAULT_JS_MUTATOR_TIMEOUT_MS;
  // The event is not frozen here: each run gets its own parsed copy, and mutators commonly edit it.
  const r = p.sandbox.run(p.id, event, { mode: 'value', timeoutMs, freeze: false });
  if (!r.ok) throw new Error(`mutator ${name} failed: ${r.error}`);
  return Buffer.from(typeof r.value === 'string' ? r.value : JSON.stringify(event));
}
