import { Sandbox, sandboxReady } from '../../../lib/sandbox/index.ts';
import type { Event } from '../../../proto/schemas/event.ts';
import { toLegacyEvent } from '../../../proto/legacy/events.ts';
import type { ExecContext, MutatorRef, MutatorSpec } from '../types.ts';
import { pipeMutate } from './pipe.ts';

/** The time limit of a javascript mutator without a `timeout`. */
export const DEFAULT_JS_MUTATOR_TIMEOUT_MS = 500;
/** The most a javascript mutator gets, whatever its `timeout`: the evaluation holds this node's event loop. */
const MAX_JS_MUTATOR_TIMEOUT_MS = 5000;
const MAX_PROGRAMS = 64;

/**
 * The payload for the handler of a workflow (docs/compatibility.md#mutators): the JSON event by default or
 * with `json`; the raw check output with `only_check_output`; the legacy (Classic) event with `legacy`, so
 * handlers written for the legacy generation run unchanged; a `javascript` mutator's returned string (null
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
    if (ref.name === 'legacy') return Buffer.from(JSON.stringify(toLegacyEvent(event)));
    return Buffer.from(json());
  }
  const spec = ref.mutator;
  if (spec.type === 'javascript') return javascriptMutate(spec, event);
  return pipeMutate(spec, json(), namespace, ctx);
}

interface Program {
  sandbox: Sandbox;
  id: number;
}
const programs = new Map<string, Program>();

/**
 * A sandbox per mutator and source (lib/sandbox), reused across events (each run parses its own copy
 * of the event). A source that does not compile throws each time it is used.
 */
function program(spec: MutatorSpec): Program {
  const name = spec.metadata.name ?? '(unnamed)';
  const key = JSON.stringify([spec.metadata.namespace, name, spec.eval]);
  let p = programs.get(key);
  if (p) {
    programs.delete(key);
    programs.set(key, p);
    return p;
  }
  const sandbox = new Sandbox();
  let id: number;
  try {
    id = sandbox.define('body', spec.eval ?? '');
  } catch (err) {
    sandbox.dispose();
    throw new Error(`mutator ${name}: ${(err as Error).message}`);
  }
  p = { sandbox, id };
  programs.set(key, p);
  if (programs.size > MAX_PROGRAMS) {
    const oldest = programs.keys().next().value!;
    programs.get(oldest)?.sandbox.dispose();
    programs.delete(oldest);
  }
  return p;
}

async function javascriptMutate(spec: MutatorSpec, event: Event): Promise<Buffer> {
  const name = spec.metadata.name ?? '(unnamed)';
  if (!spec.eval) throw new Error(`mutator ${name}: a javascript mutator needs eval`);
  await sandboxReady();
  const p = program(spec);
  const timeoutMs = Math.min(
    spec.timeout ? spec.timeout * 1000 : DEFAULT_JS_MUTATOR_TIMEOUT_MS,
    MAX_JS_MUTATOR_TIMEOUT_MS,
  );
  // The event is not frozen here: each run gets its own parsed copy, and mutators commonly edit it.
  const r = p.sandbox.run(p.id, event, { mode: 'value', timeoutMs, freeze: false });
  if (!r.ok) throw new Error(`mutator ${name} failed: ${r.error}`);
  return Buffer.from(typeof r.value === 'string' ? r.value : JSON.stringify(event));
}
