import { EventEmitter } from 'node:events';
import { ownBytes, type EdgeCommand } from './protocol.ts';

/** What a session needs of an agent's WebSocket: the part of ws's API it uses. */
export interface AgentSocket {
  readonly OPEN: number;
  readonly readyState: number;
  /** Bytes written to the socket and not yet sent. */
  readonly bufferedAmount: number;
  send(data: Uint8Array): void;
  close(code: number, reason: string): void;
  terminate(): void;
  ping(): void;
  pause(): void;
  resume(): void;
  on(event: 'message', listener: (data: Buffer, isBinary: boolean) => void): this;
  on(event: 'pong', listener: () => void): this;
  on(event: 'error', listener: (err: Error) => void): this;
  on(event: 'close', listener: (code: number, reason: string) => void): this;
}

const CONNECTING = 0;
const OPEN = 1;
const CLOSING = 2;
const CLOSED = 3;

/**
 * An agent's WebSocket held by the edge thread, as the main thread sees it: commands go to the edge,
 * what the edge reports comes back as the events ws would emit (docs/architecture.md#the-agent-edge-thread).
 */
export class EdgeSocket extends EventEmitter implements AgentSocket {
  readonly OPEN = OPEN;
  private state: number = OPEN;
  private buffered = 0;

  constructor(
    readonly id: number,
    private readonly command: (cmd: EdgeCommand, bytes?: Uint8Array) => void,
  ) {
    super();
  }

  get readyState(): number {
    return this.state;
  }

  get bufferedAmount(): number {
    return this.buffered;
  }

  send(data: Uint8Array): void {
    if (this.state !== OPEN) return;
    const bytes = ownBytes(data);
    this.command({ t: 'send', id: this.id, data: bytes }, bytes);
  }

  close(code: number, reason: string): void {
    if (this.state !== OPEN && this.state !== CONNECTING) return;
    this.state = CLOSING;
    this.command({ t: 'close', id: this.id, code, reason });
  }

  terminate(): void {
    if (this.state === CLOSED) return;
    this.state = CLOSING;
    this.command({ t: 'terminate', id: this.id });
  }

  ping(): void {
    if (this.state === OPEN) this.command({ t: 'ping', id: this.id });
  }

  pause(): void {
    this.command({ t: 'pause', id: this.id });
  }

  resume(): void {
    this.command({ t: 'resume', id: this.id });
  }

  /** The edge's report of how much is queued on the socket. */
  buffer(bytes: number): void {
    this.buffered = bytes;
  }

  /** The socket closed, on the edge's word or because the edge itself went away. */
  closed(code: number, reason: string): void {
    if (this.state === CLOSED) return;
    this.state = CLOSED;
    this.emit('close', code, reason);
  }
}
