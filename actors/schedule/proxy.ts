import { Sandbox, SandboxUnavailableError } from '../../lib/sandbox/index.ts';
import type { Logger } from '../../lib/log.ts';

const EXPRESSION_TIMEOUT_MS = 100;
const MAX_PROGRAMS = 32;
/** The most one fire spends matching entities. */
const FIRE_BUDGET_MS = 2000;

interface Program {
  sandbox: Sandbox;
  /** Each expression's definition, or why it has none. */
  defs: { id?: number; error?: string }[];
}

// A sandbox per set of expressions (lib/sandbox), reused across fires and entities: the entity goes
// in as data, frozen, so nothing one entity's evaluation does is seen by the next.
const programs = new Map<string, Program>();

function program(expressions: string[]): Program | undefined {
  const key = JSON.stringify(expressions);
  let p = programs.get(key);
  if (p) {
    programs.delete(key);
    programs.set(key, p);
    return p;
  }
  const sandbox = new Sandbox({ input: 'entity' });
  const defs: Program['defs'] = [];
  for (const expr of expressions) {
    try {
      defs.push({ id: sandbox.define('script', expr) });
    } catch (err) {
      if (err instanceof SandboxUnavailableError) {
        sandbox.dispose();
        return undefined;
      }
      defs.push({ error: (err as Error).message });
    }
  }
  p = { sandbox, defs };
  programs.set(key, p);
  if (programs.size > MAX_PROGRAMS) {
    const oldest = programs.keys().next().value!;
    programs.get(oldest)?.sandbox.dispose();
    programs.delete(oldest);
  }
  return p;
}

/**
 * Entities matching every `entity_attributes` expression (docs/compatibility.md#proxy-requests). Each
 * expression is a script over `entity` that must give `true`, run in the sandbox (lib/sandbox) over a
 * frozen copy of the entity, 100 ms at most; an expression that does not compile, throws, runs out of
 * memory, or answers a promise counts as "no match" for that entity, and is logged once per fire. An
 * expression that runs out of time ends the matching of this fire (no entity matches), and so does
 * the fire's whole matching running past FIRE_BUDGET_MS: the event loop is never held for long.
 */
export function matchEntities(
  expressions: string[],
  entities: Iterable<{ metadata?: { name?: string } }>,
  log: Logger,
): string[] {
  if (expressions.length === 0)
    return [...entities].flatMap((e) => (e.metadata?.name ? [e.metadata.name] : []));
  const prog = program(expressions);
  if (!prog) {
    log.warn('proxy entity_attributes not evaluated: the JavaScript sandbox is not loaded yet', {
      expressions,
    });
    return [];
  }
  const failed = new Set<number>();
  const fail = (i: number, error: string) => {
    if (failed.has(i)) return;
    failed.add(i);
    log.warn('proxy entity_attributes expression failed: no match', { expression: expressions[i], error });
  };
  const compileError = prog.defs.findIndex((d) => d.id === undefined);
  if (compileError >= 0) {
    fail(compileError, prog.defs[compileError]!.error!);
    return [];
  }
  const ids = prog.defs.map((d) => d.id!);
  const out: string[] = [];
  const until = Date.now() + FIRE_BUDGET_MS;
  for (const entity of entities) {
    const name = entity.metadata?.name;
    if (!name) continue;
    if (Date.now() > until) {
      log.warn('proxy entity_attributes took too long: no entity matches this fire', {
        expressions,
        budget_ms: FIRE_BUDGET_MS,
      });
      return [];
    }
    const runs = prog.sandbox.runAll(ids, entity, {
      mode: 'true',
      timeoutMs: EXPRESSION_TIMEOUT_MS,
      stopWhen: (r) => !r.ok || r.value !== true,
    });
    const last = runs[runs.length - 1]!;
    if (!last.ok) {
      fail(runs.length - 1, last.error);
      if (last.timedOut) return [];
      continue;
    }
    if (runs.length === ids.length && last.value === true) out.push(name);
  }
  return out;
}
