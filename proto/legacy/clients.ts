import * as v from 'valibot';
import type { Entity } from '../schemas/entity.ts';
import { VERSION } from '../version.ts';
import { fromLegacySubscription, toLegacySubscriptions } from './subscriptions.ts';
import { isInt, isObject, isStrings } from './json.ts';

// A legacy client IS an entity of the legacy API's namespace (docs/compatibility.md#legacy-api). What
// the entity models (name, subscriptions, redact, last_seen, agent version) comes from the entity;
// the rest of a Classic client definition (address, keepalive, safe_mode, custom attributes such as
// `environment`) lives in the entity's `legacy` object and is shown merged back.

/** A name as Classic restricted client and check names (no newline: `$` is the end of the string). */
export const LEGACY_NAME = /^[\w.-]+$/;

const optional = (x: unknown, ok: (x: unknown) => boolean) => x === undefined || x === null || ok(x);

/** A `socket` or `http_socket` block: a bind address and a port when set. */
const socketOk = (x: unknown) =>
  isObject(x) && optional(x.bind, (b) => typeof b === 'string') && optional(x.port, isInt);

/** The `keepalive` block: handlers and integer thresholds when set. */
const keepaliveOk = (x: unknown) =>
  isObject(x) &&
  optional(x.handler, (h) => typeof h === 'string') &&
  optional(x.handlers, isStrings) &&
  optional(x.thresholds, (t) => isObject(t) && optional(t.warning, isInt) && optional(t.critical, isInt));

/** A `registration` or `deregistration` block: a handler name when set. */
const handlerBlockOk = (x: unknown) => isObject(x) && optional(x.handler, (h) => typeof h === 'string');

/**
 * A client definition as `POST /clients` accepts it (the reference's client rules): a name, a
 * required address, subscriptions of non-empty strings, and the typed optional attributes. The
 * defaults (keepalives false, subscriptions []) are applied by `withClientDefaults` before it.
 */
export const LegacyClientDefinition = v.pipe(
  v.looseObject({}),
  v.check((c) => typeof c.name === 'string' && LEGACY_NAME.test(c.name), 'client name'),
  v.check((c) => typeof c.address === 'string', 'client address'),
  v.check(
    (c) => Array.isArray(c.subscriptions) && c.subscriptions.every((s) => typeof s === 'string' && s !== ''),
    'client subscriptions',
  ),
  v.check((c) => optional(c.keepalives, (k) => typeof k === 'boolean'), 'client keepalives'),
  v.check((c) => optional(c.safe_mode, (k) => typeof k === 'boolean'), 'client safe_mode'),
  v.check((c) => optional(c.socket, socketOk), 'client socket'),
  v.check((c) => optional(c.http_socket, socketOk), 'client http_socket'),
  v.check((c) => optional(c.keepalive, keepaliveOk), 'client keepalive'),
  v.check((c) => optional(c.redact, isStrings), 'client redact'),
  v.check((c) => optional(c.signature, (s) => typeof s === 'string'), 'client signature'),
  v.check((c) => optional(c.registration, handlerBlockOk), 'client registration'),
  v.check((c) => optional(c.deregister, (d) => typeof d === 'boolean'), 'client deregister'),
  v.check((c) => optional(c.deregistration, handlerBlockOk), 'client deregistration'),
);
export type LegacyClientDefinition = v.InferOutput<typeof LegacyClientDefinition>;

/** What the API sets before validating a posted client, as the reference did. */
export function withClientDefaults(body: Record<string, unknown>, nowSec: number): Record<string, unknown> {
  return {
    ...body,
    keepalives: body.keepalives ?? false,
    subscriptions: body.subscriptions ?? [],
    version: VERSION,
    timestamp: nowSec,
  };
}

/** Fields of a definition the entity models itself, or that are worked out when shown. */
const MODELLED = new Set(['name', 'subscriptions', 'redact', 'deregister', 'version', 'timestamp']);

/** What of a definition the entity keeps in `legacy`: every attribute it does not model itself. */
export function definitionExtras(def: Record<string, unknown>): Record<string, unknown> {
  const legacy: Record<string, unknown> = {};
  for (const [k, value] of Object.entries(def)) if (!MODELLED.has(k)) legacy[k] = value;
  return legacy;
}

/**
 * The entity a valid client definition describes. `existing` (the entity already stored under that
 * name) keeps its class, system facts and metadata; anything else is a proxy entity.
 */
export function clientToEntity(def: LegacyClientDefinition, nowSec: number, existing?: Entity): Entity {
  const legacy = definitionExtras(def);
  const subs = (def.subscriptions as string[]).map(fromLegacySubscription);
  const entity: Entity = {
    ...existing,
    metadata: { ...existing?.metadata, name: def.name as string },
    entity_class: existing?.entity_class === 'agent' ? 'agent' : 'proxy',
    subscriptions: [...new Set(subs)],
    // The definition's timestamp, as the reference set it on every write; an agent's comes from its keepalives.
    last_seen: existing?.entity_class === 'agent' ? existing.last_seen : nowSec,
    legacy,
  };
  if (Array.isArray(def.redact)) entity.redact = def.redact as string[];
  if (typeof def.deregister === 'boolean') entity.deregister = def.deregister;
  return entity;
}

/** `10.0.0.5/24` → `10.0.0.5`; anything but a non-loopback IPv4 address → undefined. */
function ipv4(address: string): string | undefined {
  const ip = address.split('/')[0]!;
  if (!/^\d{1,3}(\.\d{1,3}){3}$/.test(ip) || ip.startsWith('127.')) return undefined;
  return ip;
}

/**
 * The address an entity reports: its first non-loopback IPv4 address, else `unknown` (what the legacy
 * client defaulted to, and what a client created by a result got).
 */
function entityAddress(entity: Entity): string {
  for (const i of entity.system?.network?.interfaces ?? [])
    for (const a of i.addresses ?? []) {
      const ip = ipv4(a);
      if (ip) return ip;
    }
  return 'unknown';
}

/**
 * The legacy client view of an entity (not yet redacted, see `legacyRedactFields`): its definition's
 * extra attributes, then name, address, subscriptions (`client:<name>`), timestamp (last seen),
 * version, keepalives (false for a proxy or API client).
 */
export function toLegacyClient(entity: Entity): Record<string, unknown> {
  const def = entity.legacy ?? {};
  const agent = entity.entity_class === 'agent';
  const client: Record<string, unknown> = {
    ...(entity.entity_class === 'proxy' && !entity.legacy ? { type: 'proxy' } : {}),
    ...def,
    name: entity.metadata.name ?? '',
    address: typeof def.address === 'string' ? def.address : entityAddress(entity),
    subscriptions: toLegacySubscriptions(entity.subscriptions),
    timestamp: entity.last_seen ?? 0,
    version: entity.monitor_agent_version ?? VERSION,
    keepalives: typeof def.keepalives === 'boolean' ? def.keepalives : agent,
  };
  if (Array.isArray(entity.redact)) client.redact = entity.redact;
  if (entity.deregister !== undefined) client.deregister = entity.deregister;
  return client;
}
