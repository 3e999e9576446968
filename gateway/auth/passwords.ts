import { createHash, randomBytes, scrypt as scryptCb, timingSafeEqual } from 'node:crypto';
import { promisify } from 'node:util';
import { parsePasswordHash } from '../../proto/schemas/resources/users.ts';

const scrypt = promisify(scryptCb) as (
  pw: string,
  salt: Buffer,
  len: number,
  opts: { N: number; r: number; p: number; maxmem: number },
) => Promise<Buffer>;

// Passwords are stored as `scrypt$N$r$p$<salt b64>$<hash b64>`: a slow, memory-hard KDF that needs
// no native addon.
const N = 1 << 15,
  R = 8,
  P = 1,
  KEYLEN = 32;
const MAXMEM = 128 * N * R * 2;

export async function hashPassword(password: string): Promise<string> {
  const salt = randomBytes(16);
  const hash = await scrypt(password, salt, KEYLEN, { N, r: R, p: P, maxmem: MAXMEM });
  return ['scrypt', N, R, P, salt.toString('base64'), hash.toString('base64')].join('$');
}

// A hash of a random password at the current cost, made once per process: a password checked against
// it is a failure that takes as long as a known user's (no user enumeration by timing).
let dummyHash: Promise<string> | undefined;
const dummy = () => (dummyHash ??= hashPassword(randomBytes(16).toString('base64')));

/** A failed check that costs what a real one does: for unknown users and unusable stored hashes. */
export async function verifyNothing(password: string): Promise<false> {
  await verifyPassword(password, await dummy());
  return false;
}

/** Whether `password` matches a stored hash; a hash that cannot be checked safely matches nothing. */
export async function verifyPassword(password: string, stored: string): Promise<boolean> {
  // The API refuses such hashes, but one stored before it did, or put in etcd by hand, would
  // otherwise throw at every login, or match every password (an empty hash).
  const h = parsePasswordHash(stored);
  if (!h) return verifyNothing(password);
  const actual = await scrypt(password, h.salt, h.hash.length, {
    N: h.N,
    r: h.r,
    p: h.p,
    maxmem: 128 * h.N * h.r * 2,
  });
  return timingSafeEqual(actual, h.hash);
}

/**
 * Remembers successful verifications so thousands of agents sharing one credential cost one KDF
 * run, not one each. Keyed by a digest of (stored hash, password): a changed password or hash
 * misses the cache. Failures are never cached, so a wrong guess always pays the full price.
 */
export class VerifiedCache {
  private readonly ok = new Map<string, number>();
  constructor(
    private readonly ttlMs = 10 * 60_000,
    private readonly max = 10_000,
  ) {
    // Made now, so the first unknown user's failure does not pay for it (and stand out by taking longer).
    void dummy();
  }

  async verify(password: string, stored: string): Promise<boolean> {
    const key = createHash('sha256').update(stored).update('\u0000').update(password).digest('base64');
    const until = this.ok.get(key);
    if (until !== undefined && until > Date.now()) return true;
    // Agents reconnecting together after a restart ask at once: one KDF run answers them all.
    let pending = this.running.get(key);
    if (!pending) {
      pending = verifyPassword(password, stored).finally(() => this.running.delete(key));
      this.running.set(key, pending);
    }
    const good = await pending;
    if (good) {
      if (this.ok.size >= this.max) this.ok.clear();
      this.ok.set(key, Date.now() + this.ttlMs);
    }
    return good;
  }

  private readonly running = new Map<string, Promise<boolean>>();
}
