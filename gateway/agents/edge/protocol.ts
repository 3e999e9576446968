import type { AgentServerTls } from '../tls.ts';

/**
 * What the agent edge thread and the node's main thread say to each other
 * (docs/architecture.md#the-agent-edge-thread). The edge owns the agent port's sockets: TLS, HTTP,
 * WebSocket framing; the main thread decides who may connect and runs the sessions. Sockets are
 * named by a number the edge gives each upgrade request.
 */

/** What the edge needs to listen: given once, as the worker's data. */
export interface EdgeOptions {
  host: string;
  port: number;
  /** The node's name, sent to agents in the `Backend-ID` header. */
  node: string;
  tls?: AgentServerTls;
  /** Sockets left open this long after `drain` asked them to close are cut. */
  closeGraceMs: number;
}

/** A client certificate as the edge judged it: the user it names, or why it was refused. */
export type CertVerdict = { user?: string } | { status: number; message: string };

/** Edge to main: what happened on the port. Sent in batches, one per turn of the edge's loop. */
export type EdgeEvent =
  /** Listening (or why not): the answer to starting the thread. */
  | { t: 'listening' }
  | { t: 'listen-failed'; message: string; code?: string }
  /** An upgrade request on `/`: main answers `accept` or `refuse`. */
  | {
      t: 'hello';
      id: number;
      headers: Record<string, string | string[] | undefined>;
      remote: string | undefined;
      cert?: CertVerdict;
    }
  /** The upgrade completed: the session may begin. */
  | { t: 'open'; id: number }
  /** An accepted request whose socket went away before it opened. */
  | { t: 'gone'; id: number }
  | { t: 'message'; id: number; data: Uint8Array; binary: boolean }
  | { t: 'pong'; id: number }
  | { t: 'error'; id: number; message: string }
  | { t: 'close'; id: number; code: number; reason: string }
  /** The bytes queued on a socket, when they changed by a step or emptied. */
  | { t: 'buffered'; id: number; bytes: number }
  /** A line for the node's log: the edge has no logger of its own. */
  | { t: 'log'; level: 'info' | 'warn'; msg: string; fields: Record<string, unknown> }
  /** `drain` is done: the port is closed and every socket gone. */
  | { t: 'drained' };

/** Main to edge: decisions, and what to do with a socket. Sent in batches too. */
export type EdgeCommand =
  | { t: 'accept'; id: number }
  | { t: 'refuse'; id: number; status: number; message: string; headers: Record<string, string> }
  | { t: 'send'; id: number; data: Uint8Array }
  | { t: 'close'; id: number; code: number; reason: string }
  | { t: 'terminate'; id: number }
  | { t: 'ping'; id: number }
  | { t: 'pause'; id: number }
  | { t: 'resume'; id: number }
  | { t: 'drain' };

/**
 * A copy of exactly these bytes in a buffer of its own, so it can be transferred, not cloned: a
 * Buffer is often a view into a larger pool, and a structured clone would copy the whole pool.
 */
export function ownBytes(data: Uint8Array): Uint8Array {
  return data.byteOffset === 0 && data.byteLength === data.buffer.byteLength && !(data instanceof Buffer)
    ? data
    : new Uint8Array(data);
}

/**
 * Collects messages and posts them as one array at the end of the current turn: one structured
 * clone and one wake-up of the other thread per turn, however many agents spoke in it.
 */
export class Batcher<T> {
  private batch: T[] = [];
  private transfer: ArrayBuffer[] = [];
  private scheduled = false;

  constructor(private readonly post: (batch: T[], transfer: ArrayBuffer[]) => void) {}

  push(item: T, bytes?: Uint8Array): void {
    this.batch.push(item);
    if (bytes) this.transfer.push(bytes.buffer as ArrayBuffer);
    if (this.scheduled) return;
    this.scheduled = true;
    setImmediate(this.flush);
  }

  readonly flush = (): void => {
    this.scheduled = false;
    if (this.batch.length === 0) return;
    const batch = this.batch;
    const transfer = this.transfer;
    this.batch = [];
    this.transfer = [];
    this.post(batch, transfer);
  };
}
