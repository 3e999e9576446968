import { createHash, timingSafeEqual } from 'node:crypto';
import { ActorError, type Turn } from '../runtime/types.ts';
import type { EntityState } from './messages.ts';

// A legacy client's signature (docs/compatibility.md#legacy-client): the entity actor keeps the first
// non-empty one a keepalive carried (in its own state, never in the entity or a log) and from then on
// drops keepalives and results that carry another or none. A client without one adopts one later;
// only deleting the client forgets it. The state keeps a SHA-256 digest, not the signature: whoever
// reads the actor bucket cannot sign as the client.

/** What the state keeps of a signature. */
const digest = (signature: string): string =>
  'sha256:' + createHash('sha256').update(signature).digest('hex');

/** Whether `given` is the signature whose digest is `stored`, compared in constant time. */
function matches(stored: string, given: string | undefined): boolean {
  if (!given) return false;
  const a = Buffer.from(digest(given));
  const b = Buffer.from(stored);
  return a.length === b.length && timingSafeEqual(a, b);
}

const where = (t: Turn<EntityState>) => {
  const i = t.id.indexOf('/');
  return { namespace: t.id.slice(0, i), entity: t.id.slice(i + 1) };
};

/**
 * Whether a keepalive may be applied: false (logged) when it does not carry the stored signature;
 * else the digest to keep from now on (the stored one, or the first one given's).
 */
export function acceptSignature(
  t: Turn<EntityState>,
  given: string | undefined,
): { ok: false } | { ok: true; signature: string | undefined } {
  const stored = t.state?.signature;
  if (stored && !matches(stored, given)) {
    t.log.warn('invalid client signature', { ...where(t), refused: 'keepalive', signed: !!given });
    return { ok: false };
  }
  return { ok: true, signature: stored || (given ? digest(given) : undefined) };
}

/**
 * Refuses (ActorError `invalid`: the agent is acknowledged and does not resend it) a result that does
 * not carry the stored signature.
 */
export function refuseBadSignature(t: Turn<EntityState>, given: string | undefined): void {
  const stored = t.state?.signature;
  if (!stored || matches(stored, given)) return;
  t.log.warn('invalid check result signature', { ...where(t), refused: 'event', signed: !!given });
  throw new ActorError('invalid', 'invalid check result signature');
}
