import { nextCronFire } from '../../lib/cron.ts';
import { parseCron } from '../../proto/cron.ts';
import { nextIntervalFire } from './splay.ts';
import type { StoredCheck } from './messages.ts';

/**
 * The next scheduled instant (epoch ms) strictly after `afterMs`, or undefined when the check is not
 * published or its schedule cannot fire (a cron that never matches or does not parse).
 */
export function nextFire(name: string, check: StoredCheck, afterMs: number): number | undefined {
  if (check.publish === false) return undefined;
  if (check.cron) {
    try {
      return nextCronFire(parseCron(check.cron), afterMs);
    } catch {
      return undefined;
    }
  }
  if (check.interval && check.interval > 0) return nextIntervalFire(name, check.interval, afterMs);
  return undefined;
}
