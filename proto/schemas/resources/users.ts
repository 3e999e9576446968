import * as v from 'valibot';
import { Name } from '../common.ts';
import { Meta, Strings } from './meta.ts';

/** The parameters and bytes of a stored password hash `scrypt$N$r$p$<salt>$<hash>` (base64). */
interface ScryptHash {
  N: number;
  r: number;
  p: number;
  salt: Buffer;
  hash: Buffer;
}

// The cost a stored hash may ask of each login: at most twice our own memory (128·N·r bytes, 64 MiB)
// and four times our own work (N·r·p); gateway/auth/passwords.ts hashes at N 2^15, r 8, p 1.
const MAX_NR = 2 ** 19;
const MAX_NRP = 2 ** 20;
const INT = /^[1-9][0-9]{0,7}$/;
const BASE64 = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;

/**
 * A stored password hash's parts, or undefined for one no login could check safely: parameters
 * scrypt refuses (it would throw), an empty or short hash (which every password would match), or a
 * cost that would make each login take seconds and gigabytes.
 */
export function parsePasswordHash(stored: string): ScryptHash | undefined {
  const parts = stored.split('$');
  if (parts.length !== 6 || parts[0] !== 'scrypt') return undefined;
  const [n, r, p, salt, hash] = parts.slice(1) as [string, string, string, string, string];
  if (!INT.test(n) || !INT.test(r) || !INT.test(p) || !BASE64.test(salt) || !BASE64.test(hash))
    return undefined;
  const h = {
    N: Number(n),
    r: Number(r),
    p: Number(p),
    salt: Buffer.from(salt, 'base64'),
    hash: Buffer.from(hash, 'base64'),
  };
  const powerOfTwo = h.N >= 2 && (h.N & (h.N - 1)) === 0;
  // RFC 7914: N < 2^(128·r/8); it binds only for r = 1 within the bounds above.
  const fits = h.r > 1 || h.N < 2 ** 16;
  if (!powerOfTwo || !fits || h.N * h.r > MAX_NR || h.N * h.r * h.p > MAX_NRP) return undefined;
  if (h.salt.length < 8 || h.salt.length > 64 || h.hash.length < 16 || h.hash.length > 64) return undefined;
  return h;
}

const PasswordHash = v.pipe(
  v.string(),
  v.check(
    (s) => parsePasswordHash(s) !== undefined,
    'password_hash must be scrypt$N$r$p$<salt>$<hash> (base64): N a power of two, N·r at most 524288, N·r·p at most 1048576, a salt of 8 to 64 bytes and a hash of 16 to 64 bytes',
  ),
);

/** core/v2 User as sent to the API: `password` in clear (hashed on write) or a ready `password_hash`. */
export const User = v.object({
  username: v.optional(Name),
  password: v.optional(v.pipe(v.string(), v.minLength(8, 'password must be at least 8 characters'))),
  password_hash: v.optional(PasswordHash),
  groups: v.optional(v.nullable(Strings)),
  disabled: v.optional(v.boolean()),
});

export const PasswordChange = v.object({
  username: v.optional(v.string()),
  password: v.optional(v.string()),
  password_new: v.optional(v.pipe(v.string(), v.minLength(8, 'password must be at least 8 characters'))),
  password_hash: v.optional(PasswordHash),
});

/** core/v2 APIKey: the key is the name. */
export const ApiKey = v.object({
  metadata: v.optional(Meta),
  username: Name,
  created_at: v.optional(v.number()),
});

export const Namespace = v.object({ name: v.optional(Name), metadata: v.optional(Meta) });
