import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { IDEMPOTENCY_HEADER, IdempotencyKey } from '../../proto/schemas/idempotency.ts';
import type { ApiEnv } from './env.ts';
import { validate } from './http.ts';

/**
 * The message id of a REST write that goes through an actor. With an `Idempotency-Key`, it is made
 * from the key together with who sends what where, so a retry of the same request is applied once
 * and answered as the first time, while a request with new content is applied even under a reused
 * key (docs/compatibility.md). Without one, undefined: the actor client makes an id per request,
 * kept across its own retries.
 */
export async function writeMessageId(c: Context<ApiEnv>): Promise<string | undefined> {
  const raw = c.req.header(IDEMPOTENCY_HEADER);
  if (raw === undefined) return undefined;
  const key = validate(IdempotencyKey, raw, 'Idempotency-Key');
  // Hono keeps the body it read, so this is the text the route parsed.
  const body = await c.req.text().catch(() => '');
  const h = createHash('sha256');
  for (const part of [c.get('subject').username, c.req.method, c.req.path, key, body])
    h.update(part).update('\u0000');
  return `idem-${h.digest('base64url').slice(0, 32)}`;
}
