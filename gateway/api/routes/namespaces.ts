import { Hono, type Context } from 'hono';
import { ConfigConflictError } from '../../../actors/config/store.ts';
import { SEP } from '../../../actors/entity/read-model.ts';
import { configKeys, etcdKeys } from '../../../proto/names.ts';
import { Namespace } from '../../../proto/schemas/resources/users.ts';
import { namespaceSeeds } from '../../auth/seed.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize, readJson, sendOne, unwrap, validate } from '../http.ts';
import { page, pagingOf } from '../paginate.ts';
import { NAMESPACE_FIELDS } from '../selector-fields.ts';
import { selectItems } from '../selectors.ts';

const NAMESPACED = [
  'assets',
  'checks',
  'filters',
  'handlers',
  'hooks',
  'mutators',
  'pipelines',
  'roles',
  'rolebindings',
  'silenced',
];
const MAX_NAMED = 10;

/**
 * Namespaces (`{"name": ...}`, cluster-wide). A subject sees the namespaces it may read; a new
 * namespace gets the pipeline's role; a namespace still holding resources is not deleted (409).
 */
export function namespaceRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const may = (s: ApiEnv['Variables']['subject'], verb: 'get' | 'list', name: string) =>
    svc.authz.allowed(s, { verb, resource: 'namespaces' }) ||
    svc.authz.allowed(s, { verb: 'get', resource: 'namespaces', namespace: name, name });

  app.get('/namespaces', (c) => {
    const s = c.get('subject');
    const all = selectItems(
      c,
      NAMESPACE_FIELDS,
      svc.config
        .entries<{ name: string }>(configKeys.prefix('namespaces'))
        .filter((e) => may(s, 'list', e.value.name)),
      (e) => e.value,
    );
    return c.json(page(c, all, (e) => e.key, pagingOf(c)).map((e) => e.value));
  });

  app.get('/namespaces/:name', (c) => {
    const name = c.req.param('name');
    authorize(c, svc, { verb: 'get', resource: 'namespaces', namespace: name, name });
    const ns = svc.config.get(etcdKeys.namespace(name));
    if (ns === undefined) throw new ApiError('not_found', 'resource not found');
    return sendOne(c, ns);
  });

  const body = async (c: Context<ApiEnv>, urlName?: string) => {
    const raw = unwrap(await readJson(c), ['Namespace']);
    const v = validate(Namespace, raw, 'namespace');
    const name = v.name ?? v.metadata?.name ?? urlName;
    if (!name) throw new ApiError('invalid_argument', 'invalid namespace: name is required');
    if (urlName && name !== urlName)
      throw new ApiError(
        'invalid_argument',
        `the name in the body ("${name}") differs from the URL ("${urlName}")`,
      );
    return name;
  };
  const seed = async (name: string) => {
    for (const [k, v] of namespaceSeeds(name)) await svc.config.put(k, v);
  };

  app.post('/namespaces', async (c) => {
    const name = await body(c);
    authorize(c, svc, { verb: 'create', resource: 'namespaces', name });
    try {
      await svc.config.create(etcdKeys.namespace(name), { name });
    } catch (err) {
      if (err instanceof ConfigConflictError) throw new ApiError('already_exists', 'resource already exists');
      throw err;
    }
    await seed(name);
    return c.body(null, 201);
  });

  app.put('/namespaces/:name', async (c) => {
    const name = await body(c, c.req.param('name'));
    authorize(c, svc, { verb: 'update', resource: 'namespaces', name });
    if (await svc.config.put(etcdKeys.namespace(name), { name })) await seed(name);
    return c.body(null, 201);
  });

  app.delete('/namespaces/:name', async (c) => {
    const name = c.req.param('name');
    authorize(c, svc, { verb: 'delete', resource: 'namespaces', name });
    if (svc.config.get(etcdKeys.namespace(name)) === undefined)
      throw new ApiError('not_found', 'resource not found');
    const holders = referencesTo(svc, name);
    if (holders.length)
      throw new ApiError('conflict', `namespace "${name}" is not empty: ${holders.join('; ')}`);
    for (const [k] of namespaceSeeds(name)) await svc.config.remove(k);
    await svc.config.remove(etcdKeys.namespace(name));
    return c.body(null, 204);
  });

  return app;
}

/** What still lives in a namespace, by kind, with names (the pipeline's own role does not count). */
function referencesTo(svc: ApiServices, ns: string): string[] {
  const seeded = new Set(namespaceSeeds(ns).map(([k]) => k));
  const out: string[] = [];
  const describe = (kind: string, names: string[]) => {
    if (!names.length) return;
    const shown = names
      .slice(0, MAX_NAMED)
      .map((n) => `"${n}"`)
      .join(', ');
    out.push(`${names.length} ${kind} (${shown}${names.length > MAX_NAMED ? ', ...' : ''})`);
  };
  for (const kind of NAMESPACED) {
    describe(
      kind,
      svc.config
        .entries<{ metadata?: { name?: string } }>(configKeys.prefix(kind, ns))
        .filter((e) => !seeded.has(e.key))
        .map((e) => e.value.metadata?.name ?? '?'),
    );
  }
  describe(
    'entities',
    [...svc.readModel.entities.range(ns + SEP)].map((i) => i.key.slice(ns.length + 1)),
  );
  describe(
    'events',
    [...svc.readModel.events.range(ns + SEP)].map((i) => i.key.slice(ns.length + 1).replace(SEP, '/')),
  );
  return out;
}
