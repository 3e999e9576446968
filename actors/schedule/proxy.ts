import { createContext, Script } from 'node:vm';
import type { Logger } from '../../lib/log.ts';

const EXPRESSION_TIMEOUT_MS = 100;

// The entity is parsed and frozen inside the context, so every object the expression can reach
// belongs to the context's realm: `entity.constructor.constructor` is the context's Function, with
// no `process` or `require` behind it. (node:vm is no hard security boundary; this closes the
// well-known escapes through host objects.)
const SETUP = new Script(`(() => {
  const freeze = (o) => { if (o && typeof o === 'object') { Object.freeze(o); for (const k of Object.keys(o)) freeze(o[k]); } return o; };
  globalThis.entity = freeze(JSON.parse(globalThis.__entity_json));
})()`);

/**
 * Entities matching every `entity_attributes` expression (docs/compatibility.md#proxy-requests). Each
 * expression runs in a context with no host objects over a frozen copy of the entity, 100 ms at most; an
 * expression that throws or runs out of time counts as "no match" for that entity, and is logged once per
 * fire.
 */
export function matchEntities(
  expressions: string[],
  entities: Iterable<{ metadata?: { name?: string } }>,
  log: Logger,
): string[] {
  const out: string[] = [];
  const scripts: Script[] = [];
  for (const expr of expressions) {
    try {
      scripts.push(new Script(expr));
    } catch (err) {
      log.warn('proxy entity_attributes expression does not compile', {
        expression: expr,
        error: (err as Error).message,
      });
      return out;
    }
  }
  const failed = new Set<number>();
  for (const entity of entities) {
    const name = entity.metadata?.name;
    if (!name) continue;
    const sandbox = Object.create(null) as Record<string, unknown>;
    sandbox.__entity_json = JSON.stringify(entity);
    const context = createContext(sandbox);
    let all = true;
    try {
      SETUP.runInContext(context, { timeout: EXPRESSION_TIMEOUT_MS });
    } catch {
      continue;
    }
    for (let i = 0; i < scripts.length; i++) {
      try {
        if (scripts[i]!.runInContext(context, { timeout: EXPRESSION_TIMEOUT_MS }) !== true) {
          all = false;
          break;
        }
      } catch (err) {
        if (!failed.has(i)) {
          failed.add(i);
          log.warn('proxy entity_attributes expression failed', {
            expression: expressions[i],
            error: (err as Error).message,
          });
        }
        all = false;
        break;
      }
    }
    if (all) out.push(name);
  }
  return out;
}
