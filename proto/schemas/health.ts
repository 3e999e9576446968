import * as v from 'valibot';

/** The longest `GET /health?timeout=` honoured: a liveness answer must not hang on a lost etcd member. */
const HEALTH_TIMEOUT_MAX_SEC = 30;

/** `GET /health` query: `timeout` in whole seconds for each etcd member's check, as the reference takes it. */
export const HealthQuery = v.object({
  timeout: v.optional(
    v.pipe(
      v.string(),
      v.regex(/^[0-9]{1,4}$/, 'timeout must be a whole number of seconds'),
      v.transform(Number),
      v.minValue(1, 'timeout must be at least 1 second'),
      v.maxValue(HEALTH_TIMEOUT_MAX_SEC, `timeout must be at most ${HEALTH_TIMEOUT_MAX_SEC} seconds`),
    ),
  ),
});
