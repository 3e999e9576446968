import * as v from 'valibot';

/**
 * `Idempotency-Key` of a REST write: the client's name for one logical request, sent again
 * unchanged when it retries. Visible ASCII and spaces, as the IETF draft's opaque string.
 */
export const IDEMPOTENCY_HEADER = 'idempotency-key';

export const IdempotencyKey = v.pipe(
  v.string(),
  v.minLength(1, 'Idempotency-Key is empty'),
  v.maxLength(255, 'Idempotency-Key is at most 255 characters'),
  v.regex(/^[\x20-\x7e]+$/, 'Idempotency-Key holds only visible ASCII characters and spaces'),
);
