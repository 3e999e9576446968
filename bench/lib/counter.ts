/** The bench actor kind: a counter whose every message changes its state (one CAS write per ask). */
import { ActorError, type ActorBehavior } from '../../actors/runtime/types.ts';

export const COUNTER_KIND = 'benchcounter';
export const COUNTER_BUCKET = 'monitor_bench_counters';

interface Counter {
  n: number;
}

export const counterBehavior: ActorBehavior<Counter> = {
  kind: COUNTER_KIND,
  bucket: COUNTER_BUCKET,
  keyTokens: (id) => [id],
  async receive(t, type) {
    if (type !== 'inc') throw new ActorError('invalid', `no message ${type}`);
    const n = (t.state?.n ?? 0) + 1;
    t.state = { n };
    return n;
  },
  async fire() {
    /* no timers */
  },
};
