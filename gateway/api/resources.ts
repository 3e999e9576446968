import type * as v from 'valibot';
import { checkSyntax, SandboxUnavailableError } from '../../lib/sandbox/index.ts';
import { assetSchema } from '../../proto/schemas/resources/assets.ts';
import { checkConfigSchema, HookConfig } from '../../proto/schemas/resources/checks.ts';
import type { JsSyntaxCheck } from '../../proto/schemas/resources/javascript.ts';
import {
  eventFilterSchema,
  Handler,
  mutatorSchema,
  Pipeline,
} from '../../proto/schemas/resources/pipeline.ts';
import { Role, RoleBinding } from '../../proto/schemas/resources/rbac.ts';
import { Silenced, silencedName } from '../../proto/schemas/resources/silenced.ts';
import { configKeys } from '../../proto/names.ts';
import type { Subject } from '../auth/rbac.ts';
import type { SilencedExpiry } from './env.ts';
import { ApiError } from './errors.ts';

type Body = Record<string, unknown> & { metadata?: Record<string, unknown> };

export interface StoreContext {
  subject: Subject;
  now: number;
  silencedExpiry?: SilencedExpiry;
}

/** How one configuration resource kept in etcd is named, validated, stored and shown. */
export interface ConfigResource {
  /** Route segment and RBAC resource name. */
  plural: string;
  /** `type` of the wrapped form, then any other name monitorctl accepts for it (`Hook`). */
  types: readonly [string, ...string[]];
  namespaced: boolean;
  schema: v.GenericSchema;
  /** Its name in a body, before validation (silenced entries derive it). */
  nameOf(body: Body): string | undefined;
  /** What a body without a name lacks, when not `metadata.name` (a silenced entry's check or subscription). */
  nameMissing?: string;
  /** What is stored, from a validated body. */
  toStored?(value: Body, ctx: StoreContext): Body;
  /** Seconds until etcd deletes the stored value on its own; undefined or 0: never. */
  leaseTtl?(stored: Body, now: number): number | undefined;
}

const metaName = (b: Body) => (typeof b.metadata?.name === 'string' ? b.metadata.name : undefined);

/**
 * A body's value in an error message. Not String(): the body is not validated yet, and String() of a
 * parsed `{"toString": 1}` throws.
 */
const shown = (x: unknown) => (typeof x === 'string' ? x : JSON.stringify(x));
const stringOr = (x: unknown) => (typeof x === 'string' ? x : undefined);

const plain = (
  plural: string,
  type: string | readonly [string, ...string[]],
  schema: v.GenericSchema,
  namespaced = true,
): ConfigResource => ({
  plural,
  types: typeof type === 'string' ? [type] : type,
  namespaced,
  schema,
  nameOf: metaName,
});

/**
 * Puts the URL's name and namespace into the body's metadata; a body that names another one is a
 * 400, never silently moved.
 */
export function placeInUrl(body: Body, name: string | undefined, ns: string | undefined): Body {
  const meta = { ...(body.metadata ?? {}) };
  if (name !== undefined) {
    if (meta.name !== undefined && meta.name !== name)
      throw new ApiError(
        'invalid_argument',
        `the name in the body ("${shown(meta.name)}") differs from the URL ("${name}")`,
      );
    meta.name = name;
  }
  if (ns !== undefined) {
    if (meta.namespace !== undefined && meta.namespace !== ns)
      throw new ApiError(
        'invalid_argument',
        `the namespace in the body ("${shown(meta.namespace)}") differs from the URL ("${ns}")`,
      );
    meta.namespace = ns;
  }
  return { ...body, metadata: meta };
}

/** The etcd key of a resource of `def`. */
export const resourceKey = (def: ConfigResource, ns: string | undefined, name: string) =>
  def.namespaced ? configKeys.namespaced(def.plural, ns!, name) : configKeys.cluster(def.plural, name);

/** What a create or replace writes: the key, the stored form, and its lease (undefined: none). */
export interface ResourceWrite {
  key: string;
  name: string;
  stored: Body;
  leaseTtlSec: number | undefined;
}

/**
 * The write of a validated body: its stored form (silenced entries: name, begin, expiry), its key, the
 * creator a replace keeps (`createdBy`: the one of the entry at a key, if any), the lease. One path for
 * every API that writes configuration (the REST routes and the legacy API's silenced entries).
 */
export function resourceWrite(
  def: ConfigResource,
  value: Body,
  at: { ns: string | undefined; name: string },
  ctx: StoreContext,
  createdBy: (key: string) => unknown,
): ResourceWrite {
  const stored = def.toStored ? def.toStored(value, ctx) : value;
  const name = def.nameOf(stored) ?? at.name;
  const key = resourceKey(def, at.ns, name);
  const creator = createdBy(key) ?? ctx.subject.username;
  return {
    key,
    name,
    stored: { ...stored, metadata: { ...stored.metadata, created_by: creator } },
    leaseTtlSec: def.leaseTtl?.(stored, ctx.now),
  };
}

const ETCD_MAX_LEASE_TTL = 9_000_000_000;

export const silencedResource: ConfigResource = {
  plural: 'silenced',
  types: ['Silenced'],
  nameMissing: 'one of check or subscription is required',
  namespaced: true,
  schema: Silenced,
  // Before validation: only the string fields name it (the schema then refuses the others).
  nameOf: (b) =>
    metaName(b) ??
    (b.subscription || b.check
      ? silencedName({ subscription: stringOr(b.subscription), check: stringOr(b.check) })
      : undefined),
  toStored(value, { subject, now, silencedExpiry }) {
    const s = value as Body & {
      subscription?: string;
      check?: string;
      begin?: number;
      expire?: number;
      creator?: string;
      expire_at?: number;
    };
    const name = silencedName(s);
    if (s.metadata?.name !== undefined && s.metadata.name !== name)
      throw new ApiError('invalid_argument', `a silenced entry for ${name} must be named "${name}"`);
    const begin = s.begin ?? Math.floor(now / 1000);
    const expire = silencedExpire(s.expire, silencedExpiry);
    return {
      ...s,
      metadata: { ...s.metadata, name },
      begin,
      expire,
      creator: s.creator ?? subject.username,
      expire_at: expire > 0 ? begin + expire : 0,
    };
  },
  // expire counts from begin, so a future entry lives until begin + expire; at least 1 s.
  leaseTtl(stored, now) {
    const at = typeof stored.expire_at === 'number' ? stored.expire_at : 0;
    // etcd refuses leases past its MaxLeaseTTL; such an entry outlives us all anyway.
    return at > 0 ? Math.min(ETCD_MAX_LEASE_TTL, Math.max(1, Math.ceil(at - now / 1000))) : undefined;
  },
};

/**
 * The expire of a written silenced entry: the default when the body has none; past the cap a 400
 * (refused rather than clamped, so a client never believes in a longer silence than it got). With
 * a cap, "never" is past it too, so a body without expire and no default gets the cap.
 */
export function silencedExpire(expire: number | undefined, limits: SilencedExpiry | undefined): number {
  let e = expire ?? (limits?.defaultSec ? limits.defaultSec : -1);
  const max = limits?.maxSec ?? 0;
  if (max > 0) {
    if (e > max) throw new ApiError('invalid_argument', `expire ${e} is over the maximum of ${max} seconds`);
    if (e <= 0) {
      if (expire !== undefined)
        throw new ApiError('invalid_argument', `a silenced entry must expire within ${max} seconds`);
      e = max;
    }
  }
  return e;
}

/**
 * The syntax check of user JavaScript that the schemas of filters, mutators, checks and assets take
 * (proto/schemas/resources/javascript.ts): QuickJS compiles without running, as the sandbox that will
 * run it would (docs/architecture.md#user-javascript). The routes await sandboxReady() before they
 * validate; a module lost in between is a 503.
 */
const jsSyntax: JsSyntaxCheck = (kind, source) => {
  try {
    return checkSyntax(kind, source, kind === 'script' ? 'entity' : 'event');
  } catch (err) {
    if (err instanceof SandboxUnavailableError) throw new ApiError('unavailable', err.message);
    throw err;
  }
};

/**
 * What the API accepts as a check, JavaScript compiled; also what `monitor-backend upgrade`
 * validates stored checks with (gateway/node/upgrade/checks.ts).
 */
export const checkSchema = checkConfigSchema(jsSyntax);

/** Every configuration resource served by the generic routes. */
export const CONFIG_RESOURCES: ConfigResource[] = [
  plain('assets', 'Asset', assetSchema(jsSyntax)),
  plain('checks', 'CheckConfig', checkSchema),
  plain('filters', 'EventFilter', eventFilterSchema(jsSyntax)),
  plain('handlers', 'Handler', Handler),
  plain('hooks', ['HookConfig', 'Hook'], HookConfig),
  plain('mutators', 'Mutator', mutatorSchema(jsSyntax)),
  plain('pipelines', 'Pipeline', Pipeline),
  plain('roles', 'Role', Role),
  plain('rolebindings', 'RoleBinding', RoleBinding),
  silencedResource,
  plain('clusterroles', 'ClusterRole', Role, false),
  plain('clusterrolebindings', 'ClusterRoleBinding', RoleBinding, false),
];
