/**
 * The configuration resources kept in etcd, as test/e2e/api-config-resources.test.ts walks them:
 * for each kind a fresh name, a minimal valid body, a merge patch and a field the patch keeps; and
 * the paths and bodies built from them.
 */
import { fresh, type Body } from '../../harness/api.ts';

const SHA = 'a'.repeat(128);
const ref = (name: string, type: string) => ({ name, type, api_version: 'core/v2' });

interface Kind {
  plural: string;
  namespaced: boolean;
  /** A fresh name (silenced names are derived from the body). */
  name(): string;
  /** A minimal valid body (without metadata). */
  body(name: string): Body;
  /** A merge patch and what must hold afterwards. */
  patch: Body;
  /** A field of body() that the patch leaves alone. */
  kept: string;
  type: string;
}

const silencedParts = (name: string) => {
  const [subscription, check] = name.split(':');
  return { subscription: subscription!, check: check! };
};

export const KINDS: Kind[] = [
  {
    plural: 'assets',
    type: 'Asset',
    namespaced: true,
    name: () => fresh('asset'),
    body: () => ({ url: 'https://example.com/asset.tar.gz', sha512: SHA }),
    patch: { filters: ["entity.system.os == 'linux'"] },
    kept: 'url',
  },
  {
    plural: 'checks',
    type: 'CheckConfig',
    namespaced: true,
    name: () => fresh('check'),
    body: () => ({ command: 'true', interval: 60, subscriptions: ['linux'], publish: true }),
    patch: { interval: 30, handlers: ['slack'] },
    kept: 'command',
  },
  {
    plural: 'filters',
    type: 'EventFilter',
    namespaced: true,
    name: () => fresh('filter'),
    body: () => ({ action: 'allow', expressions: ['event.check.status != 0'] }),
    patch: { expressions: ['event.check.status == 2'] },
    kept: 'action',
  },
  {
    plural: 'handlers',
    type: 'Handler',
    namespaced: true,
    name: () => fresh('handler'),
    body: () => ({ type: 'pipe', command: 'cat' }),
    patch: { timeout: 10 },
    kept: 'command',
  },
  {
    plural: 'hooks',
    type: 'HookConfig',
    namespaced: true,
    name: () => fresh('hook'),
    body: () => ({ command: 'ps aux', timeout: 60 }),
    patch: { timeout: 5 },
    kept: 'command',
  },
  {
    plural: 'mutators',
    type: 'Mutator',
    namespaced: true,
    name: () => fresh('mutator'),
    body: () => ({ type: 'pipe', command: 'cat' }),
    patch: { timeout: 7 },
    kept: 'command',
  },
  {
    plural: 'pipelines',
    type: 'Pipeline',
    namespaced: true,
    name: () => fresh('pipeline'),
    body: () => ({ workflows: [{ name: 'w1', handler: ref('h1', 'Handler') }] }),
    patch: {
      workflows: [
        { name: 'w2', handler: ref('h2', 'Handler'), filters: [ref('is_incident', 'EventFilter')] },
      ],
    },
    kept: 'metadata',
  },
  {
    plural: 'roles',
    type: 'Role',
    namespaced: true,
    name: () => fresh('role'),
    body: () => ({ rules: [{ verbs: ['get'], resources: ['checks'] }] }),
    patch: { rules: [{ verbs: ['list'], resources: ['events'] }] },
    kept: 'metadata',
  },
  {
    plural: 'rolebindings',
    type: 'RoleBinding',
    namespaced: true,
    name: () => fresh('rb'),
    body: () => ({
      role_ref: { type: 'Role', name: 'some-role' },
      subjects: [{ type: 'User', name: 'bob' }],
    }),
    patch: { subjects: [{ type: 'Group', name: 'ops' }] },
    kept: 'role_ref',
  },
  {
    plural: 'silenced',
    type: 'Silenced',
    namespaced: true,
    name: () => `${fresh('sub')}:${fresh('chk')}`,
    body: (name) => ({ ...silencedParts(name) }),
    patch: { reason: 'maintenance' },
    kept: 'subscription',
  },
  {
    plural: 'clusterroles',
    type: 'ClusterRole',
    namespaced: false,
    name: () => fresh('crole'),
    body: () => ({ rules: [{ verbs: ['get'], resources: ['checks'] }] }),
    patch: { rules: [{ verbs: ['*'], resources: ['events'] }] },
    kept: 'metadata',
  },
  {
    plural: 'clusterrolebindings',
    type: 'ClusterRoleBinding',
    namespaced: false,
    name: () => fresh('crb'),
    body: () => ({
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'User', name: 'bob' }],
    }),
    patch: { subjects: [{ type: 'Group', name: 'ops' }] },
    kept: 'role_ref',
  },
];

export const collection = (k: Kind, ns = 'default') =>
  k.namespaced ? `/namespaces/${ns}/${k.plural}` : `/${k.plural}`;
export const one = (k: Kind, name: string, ns = 'default') => `${collection(k, ns)}/${name}`;
export const withMeta = (k: Kind, name: string, ns = 'default', extra: Body = {}): Body => ({
  ...k.body(name),
  metadata: { name, ...(k.namespaced ? { namespace: ns } : {}), ...extra },
});
export const named = (list: Body[], name: string, ns?: string) =>
  list.find((x) => x.metadata?.name === name && (ns === undefined || x.metadata?.namespace === ns));
