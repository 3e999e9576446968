/**
 * The principals of the RBAC matrix (test/e2e/rbac-matrix.test.ts) and what the seeded roles let
 * each of them do, written out from docs/compatibility.md#rbac-and-seeds (not read from the product).
 */
import { adminAuth } from '../../harness/index.ts';

export type Verb = 'get' | 'list' | 'create' | 'update' | 'delete';
/** Execution order: what `create` makes, `update` replaces and `delete` removes. */
export const VERBS: Verb[] = ['create', 'get', 'list', 'update', 'delete'];
const COMMON = [
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
export const NS_FAMILIES = [...COMMON, 'roles', 'rolebindings'];
export const CLUSTER_FAMILIES = [
  'namespaces',
  'users',
  'clusterroles',
  'clusterrolebindings',
  'apikeys',
  'authproviders',
];
export const NAMESPACES = ['default', 'other'];

// The seeded cluster roles as the reference describes them (written out here, not read from the product).
type Rule = { verbs: Verb[] | '*'; resources: string[] | '*' };
const SEEDED: Record<string, Rule[]> = {
  'cluster-admin': [{ verbs: '*', resources: '*' }],
  admin: [
    { verbs: '*', resources: [...COMMON, 'roles', 'rolebindings'] },
    { verbs: ['get', 'list'], resources: ['namespaces'] },
  ],
  edit: [
    { verbs: '*', resources: COMMON },
    { verbs: ['get', 'list'], resources: ['namespaces'] },
  ],
  view: [{ verbs: ['get', 'list'], resources: [...COMMON, 'namespaces'] }],
  none: [],
};
const rulesAllow = (rules: Rule[], verb: Verb, resource: string) =>
  rules.some(
    (r) =>
      (r.verbs === '*' || r.verbs.includes(verb)) && (r.resources === '*' || r.resources.includes(resource)),
  );

export interface Principal {
  /** Short tag used in the names of the objects it creates. */
  tag: string;
  /** Its user; absent for the administrator's API key. */
  user?: string;
  groups?: string[];
  role: keyof typeof SEEDED;
  /** Where its binding applies: everywhere (ClusterRoleBinding) or these namespaces (RoleBindings). */
  scope: 'all' | string[];
  auth: Record<string, string>;
}

export const PRINCIPALS: Principal[] = [
  {
    tag: 'ca',
    user: 'u-cluster-admin',
    groups: ['cluster-admins'],
    role: 'cluster-admin',
    scope: 'all',
    auth: {},
  },
  { tag: 'key', role: 'cluster-admin', scope: 'all', auth: adminAuth },
  { tag: 'adm', user: 'u-admin', role: 'admin', scope: ['default'], auth: {} },
  { tag: 'ed', user: 'u-edit', role: 'edit', scope: ['default'], auth: {} },
  { tag: 'vw', user: 'u-view', role: 'view', scope: ['default'], auth: {} },
  { tag: 'cvw', user: 'u-cluster-view', role: 'view', scope: 'all', auth: {} },
  { tag: 'grp', user: 'u-group-edit', groups: ['team-x'], role: 'edit', scope: ['default'], auth: {} },
  { tag: 'none', user: 'u-none', role: 'none', scope: [], auth: {} },
];
export const who = (p: Principal) => p.user ?? 'admin API key';
export const principal = (tag: string) => PRINCIPALS.find((p) => p.tag === tag)!;

/** What the seeded roles say: `ns` is the namespace the request is about (undefined: cluster-wide). */
export function expected(p: Principal, resource: string, verb: Verb, ns: string | undefined): boolean {
  if (!rulesAllow(SEEDED[p.role]!, verb, resource)) return false;
  if (p.scope === 'all') return true;
  return ns !== undefined && p.scope.includes(ns);
}

/** The password of every user the suite makes. */
export const PW = 'rbac-pass-123';
