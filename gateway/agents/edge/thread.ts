import { existsSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { Worker } from 'node:worker_threads';
import { Batcher, type EdgeCommand, type EdgeEvent, type EdgeOptions } from './protocol.ts';
import { EdgeSocket } from './socket.ts';

/** An upgrade request waiting for the main thread's answer. */
export type Hello = Extract<EdgeEvent, { t: 'hello' }>;

interface EdgeHandlers {
  hello(h: Hello): void;
  /** An accepted request became an open socket. */
  open(socket: EdgeSocket): void;
  /** An accepted request whose socket went away before it opened. */
  gone(id: number): void;
  log(level: 'info' | 'warn' | 'error', msg: string, fields: Record<string, unknown>): void;
}

const DEFAULTS = {
  /** A failed edge thread is started again after this long. */
  restartMs: 1000,
  /** Close code the sessions of a failed edge thread see: the connection was lost. */
  lostCode: 1006,
} as const;

/**
 * The edge thread's module: beside this one in the source tree; `agent-edge.mjs` beside the compiled
 * program, whose modules sit in `dist/` or `dist/chunks/` (deploy/build/build.ts).
 */
function edgeModule(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [
    join(here, 'worker.ts'),
    join(here, 'agent-edge.mjs'),
    join(here, '..', 'agent-edge.mjs'),
  ])
    if (existsSync(candidate)) return candidate;
  throw new Error(`the agent edge thread's module is missing (looked for agent-edge.mjs near ${here})`);
}

/**
 * The compiled module runs as it is. The source module (a program run by tsx: tests of the edge
 * itself) needs tsx in the thread too, and Node 20 does not pass `--import` hooks on to workers.
 */
function edgeWorker(module: string, opts: EdgeOptions): Worker {
  if (!module.endsWith('.ts')) return new Worker(module, { workerData: opts });
  const url = JSON.stringify(pathToFileURL(module).href);
  return new Worker(`import('tsx/esm/api').then((tsx) => { tsx.register(); return import(${url}); })`, {
    eval: true,
    workerData: opts,
  });
}

/**
 * The main thread's end of the agent edge thread (docs/architecture.md#the-agent-edge-thread):
 * starts it, answers its upgrade requests through `accept` and `refuse`, and turns its reports into
 * the events of `EdgeSocket`s. Should the thread fail, its sockets close as lost connections and a
 * new one takes the port, so agents reconnect as after any network cut.
 */
export class EdgeThread {
  private worker: Worker | undefined;
  private readonly sockets = new Map<number, EdgeSocket>();
  private out: Batcher<EdgeCommand> | undefined;
  private stopping = false;
  private drained: (() => void) | undefined;

  constructor(
    private readonly opts: EdgeOptions,
    private readonly handlers: EdgeHandlers,
  ) {}

  start(): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      const worker = edgeWorker(edgeModule(), this.opts);
      this.worker = worker;
      this.out = new Batcher((batch, transfer) => worker.postMessage(batch, transfer));
      let listening = false;
      worker.on('message', (batch: EdgeEvent[]) => {
        for (const ev of batch) {
          if (ev.t === 'listening') {
            listening = true;
            resolve();
          } else if (ev.t === 'listen-failed') {
            const err = Object.assign(new Error(ev.message), ev.code ? { code: ev.code } : {});
            void worker.terminate();
            reject(err);
          } else this.event(ev);
        }
      });
      worker.on('error', (err) => {
        if (!listening) reject(err);
        else this.handlers.log('error', 'agent edge thread failed', { error: err.message });
      });
      worker.on('exit', (code) => {
        if (this.worker !== worker) return;
        this.worker = undefined;
        this.lostAll();
        if (!listening || this.stopping) return;
        this.handlers.log('error', 'agent edge thread exited; starting it again', { code });
        setTimeout(() => {
          if (this.stopping) return;
          this.start().catch((err: Error) =>
            this.handlers.log('error', 'agent edge thread did not start again', { error: err.message }),
          );
        }, DEFAULTS.restartMs).unref();
      });
    });
  }

  accept(id: number): void {
    this.command({ t: 'accept', id });
  }

  refuse(id: number, status: number, message: string, headers: Record<string, string> = {}): void {
    this.command({ t: 'refuse', id, status, message, headers });
  }

  /** The port closes, agents are told 1001 and given the grace period; resolves when all are gone. */
  drain(): Promise<void> {
    this.stopping = true;
    if (!this.worker) return Promise.resolve();
    return new Promise<void>((resolve) => {
      this.drained = resolve;
      this.command({ t: 'drain' });
      this.out?.flush();
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const worker = this.worker;
    this.worker = undefined;
    this.lostAll();
    await worker?.terminate();
  }

  private command(cmd: EdgeCommand, bytes?: Uint8Array): void {
    this.out?.push(cmd, bytes);
  }

  private event(ev: EdgeEvent): void {
    switch (ev.t) {
      case 'hello':
        return this.handlers.hello(ev);
      case 'open': {
        const socket = new EdgeSocket(ev.id, (cmd, bytes) => this.command(cmd, bytes));
        this.sockets.set(ev.id, socket);
        return this.handlers.open(socket);
      }
      case 'gone':
        return this.handlers.gone(ev.id);
      case 'log':
        return this.handlers.log(ev.level, ev.msg, ev.fields);
      case 'drained':
        this.drained?.();
        return;
      case 'listening':
      case 'listen-failed':
        return;
    }
    const socket = this.sockets.get(ev.id);
    if (!socket) return;
    switch (ev.t) {
      case 'message':
        socket.emit(
          'message',
          Buffer.from(ev.data.buffer, ev.data.byteOffset, ev.data.byteLength),
          ev.binary,
        );
        return;
      case 'pong':
        socket.emit('pong');
        return;
      case 'error':
        socket.emit('error', new Error(ev.message));
        return;
      case 'buffered':
        socket.buffer(ev.bytes);
        return;
      case 'close':
        this.sockets.delete(ev.id);
        socket.closed(ev.code, ev.reason);
        return;
    }
  }

  private lostAll(): void {
    const sockets = [...this.sockets.values()];
    this.sockets.clear();
    for (const s of sockets) s.closed(DEFAULTS.lostCode, '');
    this.drained?.();
  }
}
