import { SEP, type EntityReadModel } from './read-model.ts';

/** What the API and the agent gateway answer (with 402) when a new entity would pass the limit. */
export const ENTITY_LIMIT_MESSAGE = 'a valid license with a sufficient entity limit is required';

/**
 * The cluster-wide entity limit (`--entity-limit`). Entities already stored keep working; only a new
 * one is refused. Counted from this node's read model, so two nodes admitting at the same moment may
 * pass the limit by a few: a soft limit, like a licence count, not a quota the store enforces.
 */
export class EntityLimit {
  constructor(
    readonly limit: number,
    private readonly model: Pick<EntityReadModel, 'entities'>,
  ) {}

  /** True when `ns/name` does not exist yet and the cluster is full. */
  refuses(ns: string, name: string): boolean {
    if (this.limit <= 0) return false;
    const entities = this.model.entities;
    return !entities.has(ns + SEP + name) && entities.size >= this.limit;
  }
}
