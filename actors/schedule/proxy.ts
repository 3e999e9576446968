import { runInNewContext } from 'node:vm';
import type { Logger } from '../../proto/log.ts';

const EXPRESSION_TIMEOUT_MS = 100;

function deepFreeze<T>(value: T): T {
  if (value && typeof value === 'object' && !Object.isFrozen(value)) {
    Object.freeze(value);
    for (const v of Object.values(value as object)) deepFreeze(v);
  }
  return value;
}

/**
 * Entities matching every `entity_attributes` expression (reference 3.4). Each expression runs in a
 * fresh VM context over a frozen copy of the entity with a 100 ms budget; an expression that throws
 * or runs out of time counts as "no match" for that entity and is logged once per evaluation.
 */
export function matchEntities(expressions: string[], entities: Iterable<{ metadata?: { name?: string } }>, log: Logger): string[] {
  const out: string[] = [];
  const failed = new Set<string>();
  for (const entity of entities) {
    const name = entity.metadata?.name;
    if (!name) continue;
    let all = true;
    for (const expr of expressions) {
      try {
        const copy = deepFreeze(JSON.parse(JSON.stringify(entity)) as object);
        if (runInNewContext(expr, { entity: copy }, { timeout: EXPRESSION_TIMEOUT_MS }) !== true) { all = false; break; }
      } catch (err) {
        if (!failed.has(expr)) { failed.add(expr); log.warn('proxy entity_attributes expression failed', { expression: expr, error: (err as Error).message }); }
        all = false; break;
      }
    }
    if (all) out.push(name);
  }
  return out;
}
