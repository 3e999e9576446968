import * as v from 'valibot';

/** core/v2 User as stored in etcd (the hash never leaves the backend). */
export const StoredUser = v.object({
  username: v.string(),
  password_hash: v.string(),
  groups: v.optional(v.array(v.string()), []),
  disabled: v.optional(v.boolean(), false),
});
export type StoredUser = v.InferOutput<typeof StoredUser>;

export const DEFAULT_AGENT_USER = 'agent';
export const DEFAULT_AGENT_PASSWORD = 'P@ssw0rd!';
export const AGENTS_GROUP = 'system:agents';
