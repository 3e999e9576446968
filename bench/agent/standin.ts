/**
 * A stand-in backend for the StatsD measurement: a WebSocket server that acknowledges every event
 * frame and adds up the `.value` points of counters whose name starts with a prefix. The real
 * backend acknowledges metrics-only events without storing them, so they could not be counted
 * there (the idea of test/e2e/agent-statsd.test.ts).
 */
import { WebSocketServer } from 'ws';
import { decodeFrame, encodeFrame, messageBytes } from '../../proto/frames.ts';

export class StandIn {
  private readonly wss: WebSocketServer;
  /** Sum of the `<prefix>*.value` points received. */
  counted = 0;
  events = 0;
  connected = 0;

  private constructor(
    wss: WebSocketServer,
    private readonly prefix: string,
  ) {
    this.wss = wss;
    wss.on('connection', (ws) => {
      this.connected++;
      ws.on('message', (data) => {
        let frame;
        try {
          frame = decodeFrame(messageBytes(data as Buffer));
        } catch {
          return;
        }
        if (frame.type !== 'event') return;
        const event = JSON.parse(frame.payload.toString('utf8'));
        this.events++;
        for (const p of event?.metrics?.points ?? []) {
          if (typeof p?.name === 'string' && p.name.startsWith(this.prefix) && p.name.endsWith('.value'))
            this.counted += Number(p.value) || 0;
        }
        ws.send(encodeFrame('ack', JSON.stringify({ id: event.id, ok: true })));
      });
    });
  }

  static start(port: number, prefix: string): Promise<StandIn> {
    return new Promise((resolve, reject) => {
      const wss = new WebSocketServer({ port, host: '127.0.0.1' });
      wss.once('listening', () => resolve(new StandIn(wss, prefix)));
      wss.once('error', reject);
    });
  }

  get url(): string {
    return `ws://127.0.0.1:${(this.wss.address() as { port: number }).port}`;
  }

  close(): Promise<void> {
    for (const c of this.wss.clients) c.terminate();
    return new Promise((r) => this.wss.close(() => r()));
  }
}
