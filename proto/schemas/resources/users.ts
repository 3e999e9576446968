import * as v from 'valibot';
import { Name } from '../common.ts';
import { Meta, Strings } from './meta.ts';

/** core/v2 User as sent to the API: `password` in clear (hashed on write) or a ready `password_hash`. */
export const User = v.object({
  username: v.optional(Name),
  password: v.optional(v.pipe(v.string(), v.minLength(8, 'password must be at least 8 characters'))),
  password_hash: v.optional(v.string()),
  groups: v.optional(v.nullable(Strings)),
  disabled: v.optional(v.boolean()),
});

export const PasswordChange = v.object({
  username: v.optional(v.string()),
  password: v.optional(v.string()),
  password_new: v.optional(v.pipe(v.string(), v.minLength(8, 'password must be at least 8 characters'))),
  password_hash: v.optional(v.string()),
});

/** core/v2 APIKey: the key is the name. */
export const ApiKey = v.object({
  metadata: v.optional(Meta),
  username: Name,
  created_at: v.optional(v.number()),
});

export const Namespace = v.object({ name: v.optional(Name), metadata: v.optional(Meta) });
