import { encodeToken, eventKey, actorRecordKey } from '../../proto/names.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { KvStore } from '../runtime/nats.ts';
import { shardOf } from '../runtime/hash.ts';
import type { ActorRecord } from '../runtime/types.ts';
import { ENTITY_KIND, entityActorId, type EntityState } from './messages.ts';

const decode = <T>(data: Uint8Array): T | undefined => {
  try { return JSON.parse(Buffer.from(data).toString('utf8')) as T; } catch { return undefined; }
};

const byName = (a: { metadata?: { name?: string } }, b: { metadata?: { name?: string } }) =>
  (a.metadata?.name ?? '').localeCompare(b.metadata?.name ?? '');

/**
 * Reads of entities and events straight from the KV buckets, on any node: the entity actor is the
 * only writer, readers never go through it.
 */
export class EntityReads {
  constructor(private readonly entities: KvStore, private readonly events: KvStore, private readonly shardCount: number) {}

  async entity(ns: string, name: string): Promise<Entity | undefined> {
    const key = actorRecordKey(shardOf(ENTITY_KIND, entityActorId(ns, name), this.shardCount), [ns, name]);
    const e = await this.entities.get(key);
    if (!e || e.deleted) return undefined;
    return decode<ActorRecord<EntityState>>(e.value)?.state?.entity;
  }

  async listEntities(ns: string): Promise<Entity[]> {
    const entries = await this.entities.list(`*.${encodeToken(ns)}.*`);
    const out: Entity[] = [];
    for (const e of entries) {
      const entity = decode<ActorRecord<EntityState>>(e.value)?.state?.entity;
      if (entity) out.push(entity);
    }
    return out.sort(byName);
  }

  async event(ns: string, entity: string, check: string): Promise<Event | undefined> {
    const e = await this.events.get(eventKey(ns, entity, check));
    return e && !e.deleted ? decode<Event>(e.value) : undefined;
  }

  /** Events of a namespace, or of one entity when `entity` is given; ordered by entity, then check. */
  async listEvents(ns: string, entity?: string): Promise<Event[]> {
    const filter = entity === undefined ? `${encodeToken(ns)}.>` : `${encodeToken(ns)}.${encodeToken(entity)}.*`;
    const out: Event[] = [];
    for (const e of await this.events.list(filter)) {
      const ev = decode<Event>(e.value);
      if (ev) out.push(ev);
    }
    return out.sort((a, b) => byName(a.entity ?? {}, b.entity ?? {}) || byName(a.check ?? {}, b.check ?? {}));
  }
}
