/**
 * The simulated agents of `bench agents` (bench/agents.ts): a WebSocket each, the agent handshake,
 * a keepalive frame once open and then when told; and the connect of many at once with a bound on
 * the handshakes in flight.
 */
import WebSocket from 'ws';
import { encodeFrame, jsonCodec } from '../../proto/frames.ts';
import { keepaliveEvent } from '../lib/keepalive.ts';
import { Samples } from '../lib/stats.ts';

const AUTH = 'Basic ' + Buffer.from('agent:P@ssw0rd!').toString('base64');

export class SimAgent {
  ws: WebSocket | undefined;
  open = false;
  seq = 0;
  constructor(
    readonly index: number,
    readonly name: string,
  ) {}

  sendKeepalive(): boolean {
    if (!this.open || !this.ws) return false;
    this.ws.send(encodeFrame('keepalive', jsonCodec.encode(keepaliveEvent(this.name, ++this.seq))));
    return true;
  }
}

export interface ConnectFigures {
  seconds: number;
  opened: number;
  failed: Map<string, number>;
  handshake: ReturnType<Samples['summary']>;
}

/** Connects `list` with at most `concurrency` handshakes in flight; each agent sends a keepalive once open. */
export async function connectAll(
  url: string,
  list: SimAgent[],
  concurrency: number,
  onClose: (a: SimAgent) => void,
): Promise<ConnectFigures> {
  const failed = new Map<string, number>();
  const handshake = new Samples();
  let opened = 0;
  const connectOne = (a: SimAgent) =>
    new Promise<void>((resolve) => {
      const t = performance.now();
      const ws = new WebSocket(url, {
        headers: {
          'Monitor-Namespace': 'default',
          'Monitor-AgentName': a.name,
          'Monitor-Subscriptions': 'linux',
          Authorization: AUTH,
        },
        perMessageDeflate: false,
        handshakeTimeout: 60_000,
      });
      a.ws = ws;
      let settled = false;
      const fail = (reason: string) => {
        if (!settled) {
          settled = true;
          failed.set(reason, (failed.get(reason) ?? 0) + 1);
          resolve();
        }
      };
      ws.on('open', () => {
        settled = true;
        a.open = true;
        opened++;
        handshake.add(performance.now() - t);
        a.sendKeepalive();
        resolve();
      });
      ws.on('unexpected-response', (_req, res) => {
        fail(`HTTP ${res.statusCode}`);
        ws.terminate();
      });
      ws.on('error', (err) => fail((err as NodeJS.ErrnoException).code ?? err.message));
      ws.on('close', () => {
        if (a.ws === ws && a.open) {
          a.open = false;
          onClose(a);
        }
        fail('closed before open');
      });
    });
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(concurrency, list.length) }, async () => {
      while (next < list.length) await connectOne(list[next++]!);
    }),
  );
  return { seconds: (performance.now() - t0) / 1000, opened, failed, handshake: handshake.summary() };
}

export const describeFailures = (failed: Map<string, number>) =>
  [...failed].map(([k, v]) => `${k} x${v}`).join(', ');
