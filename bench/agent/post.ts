/**
 * POST /events load on the agent HTTP API: `connections` keep-alive connections in a closed loop,
 * each with its own check name and a counter of its accepted events in the output (see stored.ts).
 * A 202 means the event is durable in the agent's on-disk outbox.
 */
import { RawHttpConn, type HttpConn } from '../lib/http1.ts';

const HEADERS = 'Content-Type: application/json\r\n';

export class EventPoster {
  private readonly free: Array<{ conn: HttpConn; check: string; n: number }> = [];
  /** Events answered 202, in all. */
  accepted = 0;
  statuses = new Map<string, number>();

  constructor(
    apiUrl: string,
    connections: number,
    readonly prefix: string,
  ) {
    const u = new URL(apiUrl);
    for (let c = 0; c < connections; c++)
      this.free.push({ conn: new RawHttpConn(u.hostname, Number(u.port)), check: `${prefix}${c}`, n: 0 });
  }

  /** One POST on a free connection (there is always one: at most `connections` are in flight). */
  send = async (): Promise<void> => {
    const slot = this.free.pop();
    if (!slot) throw new Error('no free connection: more workers than connections');
    try {
      const body = `{"check":{"metadata":{"name":"${slot.check}"},"status":0,"output":"${slot.n + 1}"}}`;
      const res = await slot.conn.request('POST', '/events', HEADERS, body);
      const code = String(res.status);
      this.statuses.set(code, (this.statuses.get(code) ?? 0) + 1);
      if (res.status !== 202)
        throw new Error(`POST /events: ${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
      slot.n++;
      this.accepted++;
    } finally {
      if (slot.conn.closed) {
        const u = new URL(`http://${(slot.conn as RawHttpConn).host}:${(slot.conn as RawHttpConn).port}`);
        slot.conn = new RawHttpConn(u.hostname, Number(u.port));
      }
      this.free.push(slot);
    }
  };

  close(): void {
    for (const s of this.free) s.conn.close();
  }
}
