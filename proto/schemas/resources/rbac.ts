import * as v from 'valibot';
import { Name } from '../common.ts';
import { Meta, OptStrings, Strings } from './meta.ts';

export const Rule = v.object({
  verbs: v.pipe(Strings, v.minLength(1, 'a rule needs verbs')),
  resources: v.pipe(Strings, v.minLength(1, 'a rule needs resources')),
  resource_names: OptStrings,
});
export type Rule = v.InferOutput<typeof Rule>;

/** core/v2 Role and ClusterRole. */
export const Role = v.object({ metadata: Meta, rules: v.array(Rule) });
export type Role = v.InferOutput<typeof Role>;

const Subject = v.object({
  type: v.picklist(['User', 'Group'], 'subject type is User or Group'),
  name: v.pipe(v.string(), v.minLength(1)),
});

/** core/v2 RoleBinding and ClusterRoleBinding. */
export const RoleBinding = v.object({
  metadata: Meta,
  role_ref: v.object({
    type: v.picklist(['Role', 'ClusterRole'], 'role_ref.type is Role or ClusterRole'),
    name: Name,
  }),
  subjects: v.pipe(v.array(Subject), v.minLength(1, 'a binding needs subjects')),
});
export type RoleBinding = v.InferOutput<typeof RoleBinding>;
