/**
 * What the RBAC matrix suite sets up as the administrator: the principals' users and their
 * bindings, and one object of every namespaced family in both namespaces (plus a cluster role and a
 * cluster role binding) for the get and list cells.
 */
import type { JsonResponse } from '../../harness/index.ts';
import { NAMESPACES, NS_FAMILIES, PRINCIPALS, PW } from './principals.ts';
import { BODIES, brief, eventBody, SEED } from './requests.ts';

type AsAdmin = (method: string, path: string, body?: object) => Promise<JsonResponse>;

export async function must(
  res: Promise<JsonResponse>,
  what: string,
  ok = [200, 201, 204],
): Promise<JsonResponse> {
  const r = await res;
  if (!ok.includes(r.status)) throw new Error(`${what}: HTTP ${brief(r)}`);
  return r;
}

/**
 * The users of the principals (and u-victim, u-role), RoleBindings in `default` of u-admin, u-edit,
 * u-view and of the group team-x, and the ClusterRoleBinding of u-cluster-view.
 */
export async function seedUsers(asAdmin: AsAdmin): Promise<void> {
  const users = [
    ...PRINCIPALS.filter((p) => p.user).map((p) => ({ username: p.user!, groups: p.groups ?? [] })),
    { username: 'u-victim', groups: [] },
    { username: 'u-role', groups: [] },
  ];
  for (const u of users) {
    await must(asAdmin('POST', '/api/core/v2/users', { ...u, password: PW }), `user ${u.username}`);
  }
  for (const role of ['admin', 'edit', 'view']) {
    await must(
      asAdmin('POST', '/api/core/v2/namespaces/default/rolebindings', {
        metadata: { name: `rb-u-${role}` },
        role_ref: { type: 'ClusterRole', name: role },
        subjects: [{ type: 'User', name: `u-${role}` }],
      }),
      `rolebinding u-${role}`,
    );
  }
  await must(
    asAdmin('POST', '/api/core/v2/namespaces/default/rolebindings', {
      metadata: { name: 'rb-team-x' },
      role_ref: { type: 'ClusterRole', name: 'edit' },
      subjects: [{ type: 'Group', name: 'team-x' }],
    }),
    'rolebinding of group team-x',
  );
  await must(
    asAdmin('POST', '/api/core/v2/clusterrolebindings', {
      metadata: { name: 'crb-u-cluster-view' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'User', name: 'u-cluster-view' }],
    }),
    'clusterrolebinding of u-cluster-view',
  );
}

/**
 * One object of every namespaced family in both namespaces, for get and the lists; a cluster role and
 * its binding.
 */
export async function seedObjects(asAdmin: AsAdmin): Promise<void> {
  for (const ns of NAMESPACES) {
    for (const family of NS_FAMILIES) {
      const base = `/api/core/v2/namespaces/${ns}/${family}`;
      if (family === 'events')
        await must(asAdmin('POST', base, eventBody(`${SEED}-ent`, SEED)), `seed event in ${ns}`);
      else if (family === 'silenced')
        await must(asAdmin('POST', base, { subscription: SEED, check: SEED }), `seed silenced in ${ns}`);
      else await must(asAdmin('POST', base, BODIES[family]!(SEED)), `seed ${family} in ${ns}`);
    }
  }
  await must(
    asAdmin('POST', '/api/core/v2/clusterroles', {
      metadata: { name: SEED },
      rules: [{ verbs: ['get'], resources: ['assets'] }],
    }),
    'seed clusterrole',
  );
  await must(
    asAdmin('POST', '/api/core/v2/clusterrolebindings', {
      metadata: { name: SEED },
      role_ref: { type: 'ClusterRole', name: SEED },
      subjects: [{ type: 'User', name: 'nobody' }],
    }),
    'seed clusterrolebinding',
  );
}
