import { randomUUID } from 'node:crypto';
import { configKeys, etcdKeys } from '../../proto/names.ts';
import type { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import type { Logger } from '../../lib/log.ts';
import type { Role, RoleBinding } from '../../proto/schemas/resources/rbac.ts';
import { hashPassword } from './passwords.ts';
import { AGENTS_GROUP, DEFAULT_AGENT_PASSWORD, DEFAULT_AGENT_USER, type StoredUser } from './users.ts';

// What a cluster starts with: the reference's seeded roles and bindings, the `default` namespace and
// the `agent` user. A backend seeds them on the first start of a cluster so agents can connect at
// once; `monitor-backend init` adds the administrator and marks the cluster initialized.

/** Resources every namespace-level role is about (the reference's common core resources, plus pipelines). */
const COMMON_RESOURCES = [
  'assets',
  'checks',
  'entities',
  'events',
  'filters',
  'handlers',
  'hooks',
  'mutators',
  'silenced',
  'pipelines',
];
const ADMINS_GROUP = 'cluster-admins';
export const USERS_GROUP = 'system:users';

const meta = (name: string, namespace?: string) => ({
  name,
  ...(namespace ? { namespace } : {}),
  created_by: 'system',
});

const CLUSTER_ROLES: Role[] = [
  { metadata: meta('cluster-admin'), rules: [{ verbs: ['*'], resources: ['*'] }] },
  {
    metadata: meta('admin'),
    rules: [
      { verbs: ['*'], resources: [...COMMON_RESOURCES, 'roles', 'rolebindings'] },
      { verbs: ['get', 'list'], resources: ['namespaces'] },
    ],
  },
  {
    metadata: meta('edit'),
    rules: [
      { verbs: ['*'], resources: COMMON_RESOURCES },
      { verbs: ['get', 'list'], resources: ['namespaces'] },
    ],
  },
  {
    metadata: meta('view'),
    rules: [{ verbs: ['get', 'list'], resources: [...COMMON_RESOURCES, 'namespaces'] }],
  },
  { metadata: meta('system:agent'), rules: [{ verbs: ['*'], resources: ['events'] }] },
  { metadata: meta('system:user'), rules: [{ verbs: ['get', 'update'], resources: ['localselfuser'] }] },
];

const crb = (name: string, role: string, group: string): RoleBinding => ({
  metadata: meta(name),
  role_ref: { type: 'ClusterRole', name: role },
  subjects: [{ type: 'Group', name: group }],
});

const CLUSTER_ROLE_BINDINGS: RoleBinding[] = [
  crb('cluster-admin', 'cluster-admin', ADMINS_GROUP),
  crb('system:agent', 'system:agent', AGENTS_GROUP),
  crb('system:user', 'system:user', USERS_GROUP),
];

/** What every namespace gets when it is created: the pipeline's read access to events. */
export function namespaceSeeds(ns: string): Array<[string, unknown]> {
  const role: Role = {
    metadata: meta('system:pipeline', ns),
    rules: [{ verbs: ['get', 'list'], resources: ['events'] }],
  };
  const binding: RoleBinding = {
    metadata: meta('system:pipeline', ns),
    role_ref: { type: 'Role', name: 'system:pipeline' },
    subjects: [{ type: 'User', name: 'system:pipeline' }],
  };
  return [
    [configKeys.namespaced('roles', ns, 'system:pipeline'), role],
    [configKeys.namespaced('rolebindings', ns, 'system:pipeline'), binding],
  ];
}

async function systemSeeds(): Promise<Array<[string, unknown]>> {
  const agent: StoredUser = {
    username: DEFAULT_AGENT_USER,
    password_hash: await hashPassword(DEFAULT_AGENT_PASSWORD),
    groups: [AGENTS_GROUP],
    disabled: false,
  };
  return [
    [etcdKeys.namespace('default'), { name: 'default' }],
    ...namespaceSeeds('default'),
    [etcdKeys.user(DEFAULT_AGENT_USER), agent],
    ...CLUSTER_ROLES.map((r): [string, unknown] => [configKeys.cluster('clusterroles', r.metadata.name!), r]),
    ...CLUSTER_ROLE_BINDINGS.map((b): [string, unknown] => [
      configKeys.cluster('clusterrolebindings', b.metadata.name!),
      b,
    ]),
  ];
}

/** First start of a cluster: the system seeds, once (an operator may delete them later). */
export async function seedCluster(etcd: EtcdAdapter, log: Logger): Promise<void> {
  if (await etcd.get(etcdKeys.seeded)) return;
  const entries = (await systemSeeds()).map(([k, v]): [string, string] => [k, JSON.stringify(v)]);
  if (await etcd.createAllIfAbsent(etcdKeys.seeded, String(Math.floor(Date.now() / 1000)), entries)) {
    log.info('seeded the cluster: namespace "default", user "agent", cluster roles and bindings');
  }
}

export class AlreadyInitializedError extends Error {
  constructor() {
    super('the cluster is already initialized');
    this.name = 'AlreadyInitializedError';
  }
}

interface InitOptions {
  username: string;
  password: string;
  apiKey?: string;
}

/**
 * `monitor-backend init`: the system seeds when missing, the administrator (group cluster-admins)
 * and optionally an API key for it, then the initialized flag. A second run fails with
 * AlreadyInitializedError.
 */
export async function initCluster(etcd: EtcdAdapter, o: InitOptions): Promise<void> {
  if (await etcd.get(etcdKeys.initialized)) throw new AlreadyInitializedError();
  for (const [key, value] of await systemSeeds()) await etcd.createIfAbsent(key, JSON.stringify(value));
  await etcd.createIfAbsent(etcdKeys.seeded, String(Math.floor(Date.now() / 1000)));
  // Never turn an existing user (the seeded `agent`, say) into the administrator.
  if (await etcd.get(etcdKeys.user(o.username)))
    throw new Error(`a user named "${o.username}" already exists; choose another --cluster-admin-username`);
  const admin: StoredUser = {
    username: o.username,
    password_hash: await hashPassword(o.password),
    groups: [ADMINS_GROUP],
    disabled: false,
  };
  const entries: Array<[string, string]> = [[etcdKeys.user(o.username), JSON.stringify(admin)]];
  if (o.apiKey) {
    entries.push([
      configKeys.cluster('apikeys', o.apiKey),
      JSON.stringify({
        metadata: { name: o.apiKey, created_by: o.username },
        username: o.username,
        created_at: Math.floor(Date.now() / 1000),
      }),
    ]);
  }
  if (!(await etcd.createAllIfAbsent(etcdKeys.initialized, String(Math.floor(Date.now() / 1000)), entries)))
    throw new AlreadyInitializedError();
}

export const newApiKey = (): string => randomUUID();
