import { eventKey, actorRecordKey } from '../../proto/names.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { KvStore } from '../runtime/kv-store.ts';
import { shardOf } from '../runtime/hash.ts';
import type { ActorRecord } from '../runtime/types.ts';
import { ENTITY_KIND, entityActorId, type EntityState } from './messages.ts';

const decode = <T>(data: Uint8Array): T | undefined => {
  try {
    return JSON.parse(Buffer.from(data).toString('utf8')) as T;
  } catch {
    return undefined;
  }
};

/**
 * Reads of entities and events straight from the KV buckets, on any node: the entity actor is the
 * only writer, readers never go through it.
 */
export class EntityReads {
  constructor(
    private readonly entities: KvStore,
    private readonly events: KvStore,
    private readonly shardCount: number,
  ) {}

  async entity(ns: string, name: string): Promise<Entity | undefined> {
    return (await this.state(ns, name))?.entity;
  }

  /** The entity actor's whole state: the entity, and the names of the checks it has events of. */
  async state(ns: string, name: string): Promise<EntityState | undefined> {
    const key = actorRecordKey(shardOf(ENTITY_KIND, entityActorId(ns, name), this.shardCount), [ns, name]);
    const e = await this.entities.get(key);
    if (!e || e.deleted) return undefined;
    return decode<ActorRecord<EntityState>>(e.value)?.state ?? undefined;
  }

  async event(ns: string, entity: string, check: string): Promise<Event | undefined> {
    const e = await this.events.get(eventKey(ns, entity, check));
    return e && !e.deleted ? decode<Event>(e.value) : undefined;
  }
}
