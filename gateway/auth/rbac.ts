import type { ConfigStore } from '../../actors/config/store.ts';
import { configKeys } from '../../proto/names.ts';
import type { Role, RoleBinding, Rule } from '../../proto/schemas/resources/rbac.ts';

type Verb = 'get' | 'list' | 'create' | 'update' | 'delete';

/** Who is asking: a user name and its groups (from the user record, the token, or the directory). */
export interface Subject {
  username: string;
  groups: string[];
}

export interface Access {
  verb: Verb;
  /** RBAC resource name: `checks`, `namespaces`, `localselfuser`, ... */
  resource: string;
  /** For namespaced resources; for `namespaces` itself the namespace asked about. */
  namespace?: string;
  /** Resource name, for rules with resource_names. */
  name?: string;
}

const includesOrStar = (list: readonly string[] | null | undefined, v: string) =>
  !!list && (list.includes('*') || list.includes(v));

function ruleAllows(rule: Rule, a: Access): boolean {
  if (!includesOrStar(rule.verbs, a.verb)) return false;
  if (!includesOrStar(rule.resources, a.resource)) return false;
  if (rule.resource_names?.length) return a.name !== undefined && rule.resource_names.includes(a.name);
  return true;
}

const bindsSubject = (b: RoleBinding, s: Subject) =>
  b.subjects.some((x) => (x.type === 'User' ? x.name === s.username : s.groups.includes(x.name)));

/**
 * Role-based access control over the roles and bindings in the configuration store: cluster role
 * bindings grant everywhere, role bindings only inside their namespace (a role binding may point at a
 * cluster role, whose rules then apply in that namespace only). Answers are memoized per
 * configuration generation.
 */
export class Authorizer {
  private memo = new Map<string, boolean>();
  private memoGeneration = -1;

  constructor(private readonly config: ConfigStore) {}

  allowed(s: Subject, a: Access): boolean {
    if (this.memoGeneration !== this.config.generation) {
      this.memo.clear();
      this.memoGeneration = this.config.generation;
    }
    const key = `${s.username}\u0000${s.groups.join(',')}\u0000${a.verb}\u0000${a.resource}\u0000${a.namespace ?? ''}\u0000${a.name ?? ''}`;
    let ok = this.memo.get(key);
    if (ok === undefined) {
      ok = this.decide(s, a);
      if (this.memo.size > 50_000) this.memo.clear();
      this.memo.set(key, ok);
    }
    return ok;
  }

  private decide(s: Subject, a: Access): boolean {
    for (const b of this.config.list<RoleBinding>(configKeys.prefix('clusterrolebindings'))) {
      if (!bindsSubject(b, s)) continue;
      const role = this.config.get<Role>(configKeys.cluster('clusterroles', b.role_ref.name));
      if (role?.rules.some((r) => ruleAllows(r, a))) return true;
    }
    if (!a.namespace) return false;
    for (const b of this.config.list<RoleBinding>(configKeys.prefix('rolebindings', a.namespace))) {
      if (!bindsSubject(b, s)) continue;
      const role =
        b.role_ref.type === 'ClusterRole'
          ? this.config.get<Role>(configKeys.cluster('clusterroles', b.role_ref.name))
          : this.config.get<Role>(configKeys.namespaced('roles', a.namespace, b.role_ref.name));
      if (role?.rules.some((r) => ruleAllows(r, a))) return true;
    }
    return false;
  }
}
