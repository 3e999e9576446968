/**
 * The keepalive side of the checker: every few seconds, the keepalive events of the namespace
 * (through HAProxy's REST frontend). A keepalive judgement that finds an agent silent is merged into
 * the keepalive event's history with status 1 or 2, and the history keeps the last 21 results (about
 * 100 s at a 5 s interval), so polling well within that window sees every alert that ever existed,
 * however soon the next keepalive cleared it. Each alert is kept once, by agent and `executed`.
 */
import { listEvents } from './read-back.ts';

interface Alert {
  agent: string;
  status: number;
  /** Backend seconds of the judgement (its `executed`). */
  executed: number;
  /** When the watcher first saw it. */
  seenAt: number;
}

const POLL_MS = 10_000;

export class AlertWatch {
  readonly alerts: Alert[] = [];
  private readonly seen = new Set<string>();
  private timer: NodeJS.Timeout | undefined;
  private polling: Promise<void> | undefined;
  /** Failed polls (a poll during a fault may fail; many in a row would leave a blind spot). */
  failedPolls = 0;
  polls = 0;

  constructor(private readonly apiUrl: string) {}

  start(): void {
    this.timer = setInterval(() => void this.poll(), POLL_MS);
  }

  stop(): void {
    clearInterval(this.timer);
  }

  /** One look at every keepalive event; resolves when done (concurrent calls share one poll). */
  poll(): Promise<void> {
    this.polling ??= (async () => {
      try {
        const events = await listEvents(this.apiUrl, 'event.check.name==keepalive');
        this.polls++;
        for (const [key, e] of events) {
          const agent = key.slice(0, key.indexOf('/'));
          e.statuses.forEach((status, i) => {
            if (status === 0) return;
            const id = `${agent}/${e.executed[i]}`;
            if (this.seen.has(id)) return;
            this.seen.add(id);
            this.alerts.push({ agent, status, executed: e.executed[i]!, seenAt: Date.now() });
          });
        }
      } catch {
        this.failedPolls++;
      } finally {
        this.polling = undefined;
      }
    })();
    return this.polling;
  }

  /**
   * Alerts for agents that stayed alive (not closed for good by the test). However long the cluster
   * was out of reach, an agent that reconnects promptly must not alert: a new owner judges a silence
   * one keepalive interval after taking the shard over (docs/architecture.md, "Durable timers").
   */
  spurious(dead: Set<string>): Alert[] {
    return this.alerts.filter((a) => !dead.has(a.agent));
  }
}
