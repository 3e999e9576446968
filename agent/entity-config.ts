import * as v from 'valibot';
import { describeIssues } from '../proto/schemas/common.ts';
import { Entity } from '../proto/schemas/entity.ts';
import { ENTITY_NOT_FOUND } from '../proto/frames.ts';

// The backend's stored entity wins over the agent's flags for the fields an operator manages
// through the API (docs/compatibility.md#api-managed-entities): the agent keeps a copy and puts it in every
// keepalive and event, so an API change survives the next keepalive instead of being overwritten by it.

export type ManagedFields = Pick<
  Entity,
  'subscriptions' | 'redact' | 'deregister' | 'deregistration' | 'keepalive_handlers'
> & {
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
};

type EntityConfigResult =
  { kind: 'none' } | { kind: 'invalid'; message: string } | { kind: 'managed'; fields: ManagedFields };

/** Reads an `entity_config` payload; "not found" means the backend stores nothing yet. */
export function readEntityConfig(value: unknown): EntityConfigResult {
  const r = v.safeParse(Entity, value);
  if (!r.success) return { kind: 'invalid', message: describeIssues(r.issues) };
  const e = r.output;
  if (e.metadata.name === ENTITY_NOT_FOUND.metadata.name) return { kind: 'none' };
  const fields: ManagedFields = {};
  if (e.metadata.labels) fields.labels = { ...e.metadata.labels };
  if (e.metadata.annotations) fields.annotations = { ...e.metadata.annotations };
  if (e.subscriptions) fields.subscriptions = [...e.subscriptions];
  if (e.redact) fields.redact = [...e.redact];
  if (e.deregister !== undefined) fields.deregister = e.deregister;
  if (e.deregistration) fields.deregistration = { ...e.deregistration };
  if (e.keepalive_handlers) fields.keepalive_handlers = [...e.keepalive_handlers];
  return { kind: 'managed', fields };
}

/** The agent's own entity with the backend-managed fields laid over it. */
export function withManaged(entity: Entity, m: ManagedFields | undefined): Entity {
  if (!m) return entity;
  const { labels, annotations, subscriptions, ...rest } = m;
  const own = entity.subscriptions?.filter((s) => s.startsWith('entity:')) ?? [];
  return {
    ...entity,
    ...rest,
    metadata: { ...entity.metadata, ...(labels ? { labels } : {}), ...(annotations ? { annotations } : {}) },
    ...(subscriptions ? { subscriptions: [...new Set([...subscriptions, ...own])] } : {}),
  };
}
