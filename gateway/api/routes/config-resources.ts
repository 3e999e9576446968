import { Hono, type Context } from 'hono';
import { ConfigConflictError, type ConfigEntry } from '../../../actors/config/store.ts';
import { configKeys, etcdKeys } from '../../../proto/names.ts';
import { mergePatch } from '../../../proto/merge-patch.ts';
import { sandboxReady } from '../../../lib/sandbox/index.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize, checkPreconditions, readJson, sendOne, unwrap, validate } from '../http.ts';
import { listAcross, listIn, type Listing } from '../list.ts';
import {
  placeInUrl,
  resourceKey,
  resourceWrite,
  type ConfigResource,
  type ResourceWrite,
  type StoreContext,
} from '../resources.ts';
import { configFields } from '../selector-fields.ts';
import { metadataLabels } from '../selectors.ts';

type Body = Record<string, unknown> & { metadata?: Record<string, unknown> };

/** 404 unless the namespace exists: nothing is created in a namespace nobody made. */
export function requireNamespace(svc: ApiServices, ns: string): void {
  if (svc.config.get(etcdKeys.namespace(ns)) === undefined)
    throw new ApiError('not_found', `namespace "${ns}" not found`);
}

/**
 * The standard routes of a configuration resource kept in etcd: list (one namespace and all
 * namespaces), get, create (POST, 409 when it exists), create-or-replace (PUT), merge-patch
 * (PATCH, honouring If-Match), delete. Reads come from this node's watched copy of etcd.
 */
export function configResourceRoutes(svc: ApiServices, def: ConfigResource): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const base = def.namespaced ? `/namespaces/:ns/${def.plural}` : `/${def.plural}`;
  const keyOf = (ns: string | undefined, name: string) => resourceKey(def, ns, name);
  const nsOf = (c: Context<ApiEnv>) => (def.namespaced ? c.req.param('ns') : undefined);

  const listing: Listing<ConfigEntry<Body>> = {
    resource: def.plural,
    fields: configFields(singular(def.plural), def.schema),
    labelsOf: metadataLabels,
    keyOf: (e) => e.key,
    valueOf: (e) => e.value,
    namespaceOf: (e) => String(e.value.metadata?.namespace ?? ''),
  };
  const values = (entries: ConfigEntry<Body>[]) => entries.map((e) => e.value);
  const storeContext = (c: Context<ApiEnv>): StoreContext => ({
    subject: c.get('subject'),
    now: Date.now(),
    silencedExpiry: svc.silencedExpiry,
  });
  /** What is written to etcd: the kind's stored form of a validated body (created_by, expiry), or the body. */
  const storedForm = (c: Context<ApiEnv>, value: Body): Body =>
    def.toStored ? def.toStored(value, storeContext(c)) : value;

  app.get(base, (c) => {
    const ns = nsOf(c);
    return c.json(
      values(listIn(c, svc, listing, ns, () => svc.config.entries<Body>(configKeys.prefix(def.plural, ns)))),
    );
  });
  if (def.namespaced)
    app.get(`/${def.plural}`, (c) =>
      c.json(
        values(listAcross(c, svc, listing, () => svc.config.entries<Body>(configKeys.prefix(def.plural)))),
      ),
    );

  app.get(`${base}/:name`, (c) => {
    const ns = nsOf(c),
      name = c.req.param('name');
    authorize(c, svc, { verb: 'get', resource: def.plural, namespace: ns, name });
    const value = svc.config.get<Body>(keyOf(ns, name));
    if (value === undefined) throw new ApiError('not_found', 'resource not found');
    return sendOne(c, value);
  });

  const prepare = async (c: Context<ApiEnv>, name: string | undefined): Promise<ResourceWrite> => {
    const ns = nsOf(c);
    const body = placeInUrl(unwrap(await readJson(c), def.types) as Body, name, ns);
    const resolvedName = name ?? def.nameOf(body);
    if (!resolvedName)
      throw new ApiError(
        'invalid_argument',
        `invalid ${singular(def.plural)}: ${def.nameMissing ?? 'metadata.name is required'}`,
      );
    authorize(c, svc, {
      verb: c.req.method === 'POST' ? 'create' : 'update',
      resource: def.plural,
      namespace: ns,
      name: resolvedName,
    });
    if (ns !== undefined) requireNamespace(svc, ns);
    await sandboxReady(); // the schemas of resources holding JavaScript compile it (resources.ts)
    const value = validate(def.schema, body, singular(def.plural)) as Body;
    // created_by names the creator: a replace keeps it.
    return resourceWrite(
      def,
      value,
      { ns, name: resolvedName },
      storeContext(c),
      (key) => svc.config.get<Body>(key)?.metadata?.created_by,
    );
  };

  // A replace without a lease moves the key off any earlier one: the deadline follows the body.
  const leaseOf = (stored: Body) => ({ leaseTtlSec: def.leaseTtl?.(stored, Date.now()) });

  app.post(base, async (c) => {
    const { key, stored, leaseTtlSec } = await prepare(c, undefined);
    try {
      await svc.config.create(key, stored, { leaseTtlSec });
    } catch (err) {
      if (err instanceof ConfigConflictError) throw new ApiError('already_exists', 'resource already exists');
      throw err;
    }
    return c.body(null, 201);
  });

  app.put(`${base}/:name`, async (c) => {
    const { key, stored, leaseTtlSec } = await prepare(c, c.req.param('name'));
    await svc.config.put(key, stored, { leaseTtlSec });
    return c.body(null, 201);
  });

  app.patch(`${base}/:name`, async (c) => {
    const ns = nsOf(c),
      name = c.req.param('name');
    authorize(c, svc, { verb: 'update', resource: def.plural, namespace: ns, name });
    const key = keyOf(ns, name);
    const current = svc.config.entry<Body>(key);
    if (!current) throw new ApiError('not_found', 'resource not found');
    checkPreconditions(c, current.value);
    const patched = placeInUrl(
      mergePatch(current.value, unwrap(await readJson(c), def.types)) as Body,
      name,
      ns,
    );
    await sandboxReady();
    const value = validate(def.schema, patched, singular(def.plural)) as Body;
    const stored = storedForm(c, value);
    try {
      await svc.config.replace(key, stored, current.modRevision, leaseOf(stored));
    } catch (err) {
      if (err instanceof ConfigConflictError)
        throw new ApiError('conflict', 'the resource changed while it was being patched; retry');
      throw err;
    }
    return sendOne(c, stored);
  });

  app.delete(`${base}/:name`, async (c) => {
    const ns = nsOf(c),
      name = c.req.param('name');
    authorize(c, svc, { verb: 'delete', resource: def.plural, namespace: ns, name });
    if (!(await svc.config.remove(keyOf(ns, name)))) throw new ApiError('not_found', 'resource not found');
    return c.body(null, 204);
  });

  return app;
}

/** `checks` → `check`, for messages and selector paths. */
function singular(plural: string): string {
  if (plural === 'silenced') return 'silenced';
  if (plural.endsWith('ies')) return plural.slice(0, -3) + 'y';
  return plural.replace(/s$/, '');
}
