/**
 * The history of a chaos run, Jepsen style: every operation the clients invoked, with its outcome
 * once known, each stamped with the fault phase it started in.
 *
 * - `ok`: the cluster acknowledged it (agent `ack` ok:true, REST 201). It must then be stored,
 *   exactly once, whatever happens after.
 * - `fail`: refused for good (agent `ack` ok:false with a final code, REST 4xx other than 408/429).
 *   It may not be stored.
 * - `info`: the outcome is unknown (still unacknowledged when the run ended, or the REST client gave
 *   up). It may be stored at most once.
 *
 * Besides operations the history keeps what the faults are judged by: agents' closes and reopens,
 * the check requests each agent received, configuration writes, and the phase boundaries.
 */
import fs from 'node:fs';

type Outcome = 'ok' | 'fail' | 'info';

export interface EventOp {
  /** The client: an agent name, or a REST writer. */
  process: string;
  source: 'agent' | 'rest';
  entity: string;
  check: string;
  /** Unique per entity: the event's `check.executed`, so each application shows in the check's history. */
  token: number;
  phase: string;
  invokedAt: number;
  attempts: number;
  outcome?: Outcome;
  completedAt?: number;
  /** The backend that acknowledged it (agent sessions know theirs from the `Backend-ID` header). */
  node?: string;
  error?: string;
}

export interface Reconnect {
  agent: string;
  /** The backend the closed session was on, and the close code. */
  node?: string;
  code: number;
  closedAt: number;
  /** Undefined while the agent is still away (or was closed for good). */
  openedAt?: number;
}

interface ConnectFailure {
  agent: string;
  startedAt: number;
  at: number;
  reason: string;
  node?: string;
}

interface Tick {
  agent: string;
  check: string;
  issued: number;
  at: number;
  node?: string;
}

interface Phase {
  name: string;
  start: number;
  end?: number;
}

export class History {
  readonly ops: EventOp[] = [];
  readonly reconnects: Reconnect[] = [];
  readonly ticks: Tick[] = [];
  /**
   * Failed connection attempts of agents: when each began and ended, the reason (HTTP status, socket
   * error, timeout) and the backend that answered, if one did.
   */
  readonly connectFailures: ConnectFailure[] = [];
  /** Configuration writes: when each attempt ended and whether etcd took it. */
  readonly configWrites: Array<{ at: number; ok: boolean; ms: number }> = [];
  readonly phases: Phase[] = [];
  private current: Phase;

  constructor() {
    this.current = { name: 'warm-up', start: Date.now() };
    this.phases.push(this.current);
  }

  get phase(): string {
    return this.current.name;
  }

  setPhase(name: string): Phase {
    const now = Date.now();
    this.current.end = now;
    this.current = { name, start: now };
    this.phases.push(this.current);
    console.log(`[chaos] ${new Date(now).toISOString()} phase: ${name}`);
    return this.current;
  }

  invoke(op: Omit<EventOp, 'phase' | 'invokedAt' | 'attempts'>): EventOp {
    const full: EventOp = { ...op, phase: this.current.name, invokedAt: Date.now(), attempts: 0 };
    this.ops.push(full);
    return full;
  }

  complete(op: EventOp, outcome: Outcome, detail: { node?: string; error?: string } = {}): void {
    if (op.outcome === 'ok' || op.outcome === 'fail') return; // the first definite answer stands
    op.outcome = outcome;
    op.completedAt = Date.now();
    if (detail.node) op.node = detail.node;
    if (detail.error) op.error = detail.error;
  }

  /** Ops acknowledged so far. */
  acked(): EventOp[] {
    return this.ops.filter((o) => o.outcome === 'ok');
  }

  /** Writes the whole history as JSON lines (one record per line, with its kind) for a post-mortem. */
  dump(file: string): void {
    const lines: string[] = [];
    for (const p of this.phases) lines.push(JSON.stringify({ kind: 'phase', ...p }));
    for (const o of this.ops) lines.push(JSON.stringify({ kind: 'event', ...o }));
    for (const r of this.reconnects) lines.push(JSON.stringify({ kind: 'reconnect', ...r }));
    for (const t of this.ticks) lines.push(JSON.stringify({ kind: 'tick', ...t }));
    for (const f of this.connectFailures) lines.push(JSON.stringify({ kind: 'connect-failure', ...f }));
    for (const c of this.configWrites) lines.push(JSON.stringify({ kind: 'config', ...c }));
    fs.writeFileSync(file, lines.join('\n') + '\n');
  }
}
