/**
 * The requests of the RBAC matrix: valid bodies of every resource, and for each family the request
 * of each verb, plus the other routes (PATCH, sub-resources, actions) with the verb they are about.
 */
import type { JsonResponse } from '../../harness/index.ts';
import { NS_FAMILIES, PW, type Verb } from './principals.ts';

/** The name of the objects the administrator seeds, in both namespaces, for get and the lists. */
export const SEED = 'rbac-seed';

export interface Req {
  method: string;
  path: string;
  body?: object;
  /** Lists that filter rather than refuse: does the answer show what the principal may see? */
  visible?: (body: any) => boolean;
}

export const brief = (r: JsonResponse) =>
  `${r.status} ${typeof r.body === 'string' ? r.body : JSON.stringify(r.body)}`.slice(0, 240);

/** Valid bodies of the namespaced configuration resources. */
export const BODIES: Record<string, (name: string) => Record<string, unknown>> = {
  assets: (name) => ({ metadata: { name }, url: 'http://127.0.0.1:1/asset.tar.gz', sha512: 'a'.repeat(128) }),
  checks: (name) => ({ metadata: { name }, command: 'true', publish: false, subscriptions: ['rbac'] }),
  entities: (name) => ({ metadata: { name }, entity_class: 'proxy', subscriptions: ['rbac'] }),
  filters: (name) => ({ metadata: { name }, action: 'allow', expressions: ['event.check.status == 0'] }),
  handlers: (name) => ({ metadata: { name }, type: 'pipe', command: 'true' }),
  hooks: (name) => ({ metadata: { name }, command: 'true' }),
  mutators: (name) => ({ metadata: { name }, type: 'pipe', command: 'cat' }),
  pipelines: (name) => ({
    metadata: { name },
    workflows: [{ name: 'w', handler: { name: 'h', type: 'Handler', api_version: 'core/v2' } }],
  }),
  roles: (name) => ({ metadata: { name }, rules: [{ verbs: ['get'], resources: ['assets'] }] }),
  rolebindings: (name) => ({
    metadata: { name },
    role_ref: { type: 'Role', name: SEED },
    subjects: [{ type: 'User', name: 'nobody' }],
  }),
};
export const eventBody = (entity: string, check: string) => ({
  entity: { metadata: { name: entity }, entity_class: 'proxy' },
  check: { metadata: { name: check }, status: 0, output: 'ok', interval: 60 },
});
const ldapBody = (name: string) => ({
  type: 'ldap',
  api_version: 'authentication/v2',
  metadata: { name },
  spec: {
    servers: [
      {
        host: '127.0.0.1',
        port: 1,
        security: 'insecure',
        binding: { user_dn: 'cn=binder,dc=example,dc=org', password: 'secret' },
        group_search: { base_dn: 'dc=example,dc=org' },
        user_search: { base_dn: 'dc=example,dc=org' },
      },
    ],
  },
});

/** The five requests of a namespaced family in `ns`: get/list read the seeded object, the others a principal's own. */
export function nsRequests(family: string, ns: string, tag: string): Record<Verb, Req> {
  const base = `/api/core/v2/namespaces/${ns}/${family}`;
  if (family === 'events') {
    const mine = `${base}/m-${tag}-evt/m-check`;
    return {
      create: { method: 'POST', path: base, body: eventBody(`m-${tag}-evt`, 'm-check') },
      get: { method: 'GET', path: `${base}/${SEED}-ent/${SEED}` },
      list: { method: 'GET', path: base },
      update: { method: 'PUT', path: mine, body: eventBody(`m-${tag}-evt`, 'm-check') },
      delete: { method: 'DELETE', path: mine },
    };
  }
  if (family === 'silenced') {
    const body = { subscription: `m-${tag}`, check: 'x', reason: 'rbac' };
    return {
      create: { method: 'POST', path: base, body },
      get: { method: 'GET', path: `${base}/${SEED}:${SEED}` },
      list: { method: 'GET', path: base },
      update: { method: 'PUT', path: `${base}/m-${tag}:x`, body },
      delete: { method: 'DELETE', path: `${base}/m-${tag}:x` },
    };
  }
  const name = `m-${tag}-${family}`;
  return {
    create: { method: 'POST', path: base, body: BODIES[family]!(name) },
    get: { method: 'GET', path: `${base}/${SEED}` },
    list: { method: 'GET', path: base },
    update: { method: 'PUT', path: `${base}/${name}`, body: BODIES[family]!(name) },
    delete: { method: 'DELETE', path: `${base}/${name}` },
  };
}

/**
 * The requests of a cluster-wide family; `namespaces` get/list are about namespace `ns`, `apikeys`
 * about `key` (the API key the administrator made for the principal).
 */
export function clusterRequests(
  family: string,
  tag: string,
  { ns = 'default', key = '' }: { ns?: string; key?: string } = {},
): Partial<Record<Verb, Req>> {
  const core = '/api/core/v2';
  switch (family) {
    case 'namespaces': {
      const name = `m-${tag}-ns`;
      return {
        create: { method: 'POST', path: `${core}/namespaces`, body: { name } },
        get: { method: 'GET', path: `${core}/namespaces/${ns}` },
        list: {
          method: 'GET',
          path: `${core}/namespaces`,
          visible: (b) => Array.isArray(b) && b.some((n: { name?: string }) => n.name === ns),
        },
        update: { method: 'PUT', path: `${core}/namespaces/${name}`, body: { name } },
        delete: { method: 'DELETE', path: `${core}/namespaces/${name}` },
      };
    }
    case 'users': {
      const name = `m-${tag}-user`;
      return {
        create: { method: 'POST', path: `${core}/users`, body: { username: name, password: PW, groups: [] } },
        get: { method: 'GET', path: `${core}/users/agent` },
        list: { method: 'GET', path: `${core}/users` },
        update: {
          method: 'PUT',
          path: `${core}/users/${name}`,
          body: { username: name, password: PW, groups: [] },
        },
        delete: { method: 'DELETE', path: `${core}/users/${name}` },
      };
    }
    case 'clusterroles': {
      const name = `m-${tag}-cr`;
      const body = { metadata: { name }, rules: [{ verbs: ['get'], resources: ['assets'] }] };
      return {
        create: { method: 'POST', path: `${core}/clusterroles`, body },
        get: { method: 'GET', path: `${core}/clusterroles/view` },
        list: { method: 'GET', path: `${core}/clusterroles` },
        update: { method: 'PUT', path: `${core}/clusterroles/${name}`, body },
        delete: { method: 'DELETE', path: `${core}/clusterroles/${name}` },
      };
    }
    case 'clusterrolebindings': {
      const name = `m-${tag}-crb`;
      const body = {
        metadata: { name },
        role_ref: { type: 'ClusterRole', name: 'view' },
        subjects: [{ type: 'User', name: 'nobody' }],
      };
      return {
        create: { method: 'POST', path: `${core}/clusterrolebindings`, body },
        get: { method: 'GET', path: `${core}/clusterrolebindings/cluster-admin` },
        list: { method: 'GET', path: `${core}/clusterrolebindings` },
        update: { method: 'PUT', path: `${core}/clusterrolebindings/${name}`, body },
        delete: { method: 'DELETE', path: `${core}/clusterrolebindings/${name}` },
      };
    }
    case 'apikeys': {
      return {
        create: { method: 'POST', path: `${core}/apikeys`, body: { username: 'agent' } },
        get: { method: 'GET', path: `${core}/apikeys/${key}` },
        list: { method: 'GET', path: `${core}/apikeys` },
        update: { method: 'PATCH', path: `${core}/apikeys/${key}`, body: { username: 'agent' } },
        delete: { method: 'DELETE', path: `${core}/apikeys/${key}` },
      };
    }
    case 'authproviders': {
      // No create route: providers are created and replaced with PUT (the update verb).
      const base = '/api/enterprise/authentication/v2/authproviders';
      const name = `m-${tag}-ldap`;
      return {
        get: { method: 'GET', path: `${base}/no-such-provider` },
        list: { method: 'GET', path: base },
        update: { method: 'PUT', path: `${base}/${name}`, body: ldapBody(name) },
        delete: { method: 'DELETE', path: `${base}/${name}` },
      };
    }
    default:
      throw new Error(`unknown family ${family}`);
  }
}

/** Every other route, with the resource and verb it is about: PATCH, sub-resources, actions. */
export function extraRequests(tag: string): Array<{ family: string; verb: Verb; ns?: string; req: Req }> {
  const core = '/api/core/v2';
  const d = `${core}/namespaces/default`;
  const label = { metadata: { labels: { patched_by: tag } } };
  const patches = NS_FAMILIES.filter((f) => f !== 'events').map((family) => ({
    family,
    verb: 'update' as Verb,
    ns: 'default',
    req: {
      method: 'PATCH',
      path: `${d}/${family}/${family === 'silenced' ? `${SEED}:${SEED}` : SEED}`,
      body: label,
    },
  }));
  return [
    ...patches,
    {
      family: 'clusterroles',
      verb: 'update',
      req: { method: 'PATCH', path: `${core}/clusterroles/${SEED}`, body: label },
    },
    {
      family: 'clusterrolebindings',
      verb: 'update',
      req: { method: 'PATCH', path: `${core}/clusterrolebindings/${SEED}`, body: label },
    },
    {
      family: 'events',
      verb: 'list',
      ns: 'default',
      req: { method: 'GET', path: `${d}/events/${SEED}-ent` },
    },
    {
      family: 'silenced',
      verb: 'list',
      ns: 'default',
      req: { method: 'GET', path: `${d}/silenced/subscriptions/${SEED}` },
    },
    {
      family: 'silenced',
      verb: 'list',
      ns: 'default',
      req: { method: 'GET', path: `${d}/silenced/checks/${SEED}` },
    },
    {
      family: 'checks',
      verb: 'update',
      ns: 'default',
      req: { method: 'PUT', path: `${d}/checks/${SEED}/hooks/critical`, body: { hooks: [SEED] } },
    },
    {
      family: 'checks',
      verb: 'update',
      ns: 'default',
      req: { method: 'DELETE', path: `${d}/checks/${SEED}/hooks/critical/hook/${SEED}` },
    },
    {
      family: 'checks',
      verb: 'create',
      ns: 'default',
      req: { method: 'POST', path: `${d}/checks/${SEED}/execute`, body: { reason: `rbac ${tag}` } },
    },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'PUT', path: `${core}/users/u-victim/password`, body: { password_new: PW } },
    },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'PUT', path: `${core}/users/u-victim/reset_password`, body: { password_new: PW } },
    },
    { family: 'users', verb: 'update', req: { method: 'PUT', path: `${core}/users/u-victim/reinstate` } },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'PUT', path: `${core}/users/u-victim/groups/g-${tag}` },
    },
    {
      family: 'users',
      verb: 'update',
      req: { method: 'DELETE', path: `${core}/users/u-victim/groups/g-${tag}` },
    },
    { family: 'users', verb: 'update', req: { method: 'DELETE', path: `${core}/users/u-victim/groups` } },
    {
      family: 'authproviders',
      verb: 'delete',
      req: { method: 'DELETE', path: `${d}/authproviders/no-such-provider` },
    },
  ];
}
