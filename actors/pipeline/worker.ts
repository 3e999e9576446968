import { AckPolicy, type Consumer, type JsMsg } from 'nats';
import { streams, subjects } from '../../proto/names.ts';
import type { JobAttempts } from './attempts.ts';
import type { Logger } from '../../lib/log.ts';
import { decodeJob, type PipelineJob } from '../../proto/pipeline-job.ts';
import type { NatsAdapter } from '../runtime/nats.ts';
import { jobNamespace, runJob } from './run.ts';
import type { ExecContext } from './types.ts';
import type { Workflow, WorkflowResolver } from './workflows.ts';

/** Every node pulls from this one durable consumer: each job is taken by one node at a time. */
const PIPELINE_CONSUMER = 'monitor-pipeline';

export const DEFAULTS = {
  /** A job not acknowledged (nor reported as in progress) for this long goes to another node. */
  jobAckWaitMs: 15_000,
  progressEveryMs: 5_000,
  /** A job whose handler is busy goes back to the queue for this long. */
  busyDelayMs: 1_000,
  /** A job whose run threw goes back to the queue for this long. */
  failedDelayMs: 5_000,
  /** A job started this many times without finishing is parked on MONITOR_PIPELINE_DEAD, not run again. */
  maxAttempts: 5,
  /** Starts of redelivered jobs are forgotten this long after the last one (a record the worker missed). */
  attemptsTtlMs: 24 * 3600_000,
  /** What MONITOR_PIPELINE_DEAD keeps at most (the oldest parked jobs go first). */
  dead: { maxMsgs: 10_000, maxBytes: 256 * 1024 * 1024, maxAgeMs: 7 * 24 * 3600_000 },
} as const;

interface PipelineWorkerOptions {
  nats: NatsAdapter;
  resolver: WorkflowResolver;
  exec: ExecContext;
  log: Logger;
  /** Jobs one node runs at the same time; more wait in the queue (bounded memory, no head-of-line blocking). */
  concurrency: number;
  /** Starts of redelivered jobs, so a job that never finishes is parked (attempts.ts). */
  attempts: JobAttempts;
}

/** Runs of one handler at a time on a node: a quarter of the job slots, so a slow handler cannot take them all. */
const handlerCap = (concurrency: number) => Math.max(1, Math.floor(concurrency / 4));

interface Pending {
  m: JsMsg;
  job: PipelineJob;
  eventJson: string | undefined;
  workflows: Workflow[];
  handlers: string[];
}

export interface PipelineStats {
  jobs: number;
  handlerRuns: number;
  handlerFailures: number;
  filtered: number;
  mutatorErrors: number;
  running: number;
  deferred: number;
  /** Jobs started `DEFAULTS.maxAttempts` times without finishing, moved to MONITOR_PIPELINE_DEAD. */
  parked: number;
}

/**
 * Takes jobs off the MONITOR_PIPELINE work queue and runs them, at most `concurrency` at once and
 * at most a quarter of that per handler (a job whose handler is at its cap goes back to the queue). A
 * job is acknowledged only after its handlers finished; while it runs the worker tells JetStream it
 * is still at it, so a slow handler is not mistaken for a dead node, and a node that dies mid-job
 * leaves it to be redelivered to another node after the ack wait. A job started
 * `DEFAULTS.maxAttempts` times without finishing is parked instead (attempts.ts).
 */
export class PipelineWorker {
  readonly stats: PipelineStats = {
    jobs: 0,
    handlerRuns: 0,
    handlerFailures: 0,
    filtered: 0,
    mutatorErrors: 0,
    running: 0,
    deferred: 0,
    parked: 0,
  };
  /** Runs in progress per handler (namespace/name). */
  private readonly busy = new Map<string, number>();
  private stopped = false;
  private readonly abort = new AbortController();
  private readonly idle: Array<() => void> = [];
  /** Jobs pulled and waiting for a slot (or for their handler to be under its cap). */
  private readonly ready: Pending[] = [];
  /**
   * How many jobs the next pull may take besides the free slots: each job put back (its handler at
   * its cap) lowers it, each finished job raises it. Without it, a queue full of one capped
   * handler's jobs would be pulled and put back over and over.
   */
  private budget: number;
  private loop: Promise<void> | undefined;
  private batch: { stop(): void } | undefined;
  private readonly exec: ExecContext;

  constructor(private readonly opts: PipelineWorkerOptions) {
    this.exec = { ...opts.exec, signal: this.abort.signal };
    this.budget = 2 * opts.concurrency;
  }

  async start(): Promise<void> {
    const consumer = await this.opts.nats.durableConsumer(streams.pipeline, PIPELINE_CONSUMER, {
      ack_policy: AckPolicy.Explicit,
      ack_wait: DEFAULTS.jobAckWaitMs * 1_000_000,
      filter_subject: subjects.pipelineJobs,
      max_deliver: -1,
      max_ack_pending: -1,
    });
    this.loop = this.run(consumer);
  }

  /**
   * Pulls in batches into a small local buffer (up to `concurrency` jobs beyond those running), so a
   * freed slot never waits for a round trip to the server and pulls stay large under load. Jobs in
   * the buffer are reported as in progress like running ones, so their ack clock does not run out.
   */
  private async run(consumer: Consumer): Promise<void> {
    const { log, concurrency } = this.opts;
    const heartbeat = setInterval(() => {
      for (const p of this.ready) p.m.working();
    }, DEFAULTS.progressEveryMs);
    try {
      while (!this.stopped) {
        try {
          const room = Math.min(2 * concurrency - this.stats.running - this.ready.length, this.budget);
          if (room <= 0 && this.stats.running < concurrency && this.shed() > 0) continue;
          // Wait for the buffer to drain by half before pulling again: few large pulls, not many small ones.
          if (room <= 0 || (this.ready.length > 0 && room < concurrency / 2)) {
            await new Promise<void>((r) => this.idle.push(r));
            continue;
          }
          const batch = await consumer.fetch({ max_messages: room, expires: 2000 });
          this.batch = batch;
          for await (const m of batch) {
            if (this.stopped) {
              m.nak();
              continue;
            }
            const pending = this.prepare(m);
            if (!pending) continue;
            this.ready.push(pending);
            this.dispatch();
          }
        } catch (err) {
          if (!this.stopped) {
            log.warn('pipeline consumer failed, retrying', { error: (err as Error).message });
            await new Promise((r) => setTimeout(r, 1000));
          }
        }
      }
    } finally {
      clearInterval(heartbeat);
      for (const p of this.ready.splice(0)) p.m.nak();
    }
  }

  /** Parses a job and works out its workflows; a job that does not parse is dropped for good. */
  private prepare(m: JsMsg): Pending | undefined {
    let decoded: ReturnType<typeof decodeJob>;
    try {
      decoded = decodeJob(m.string());
    } catch (err) {
      this.opts.log.warn('dropping a malformed pipeline job', { error: (err as Error).message });
      m.term();
      return undefined;
    }
    const { job, eventJson } = decoded;
    const ns = jobNamespace(job);
    const workflows = this.opts.resolver.resolve(ns, job.event);
    return {
      m,
      job,
      eventJson,
      workflows,
      handlers: [...new Set(workflows.map((w) => `${ns}/${w.handler.metadata.name}`))],
    };
  }

  private atCap(p: Pending): boolean {
    const cap = handlerCap(this.opts.concurrency);
    return p.handlers.some((h) => (this.busy.get(h) ?? 0) >= cap);
  }

  /** Starts buffered jobs, in order, skipping those whose handler is at its cap. */
  private dispatch(): void {
    for (let i = 0; i < this.ready.length && this.stats.running < this.opts.concurrency;) {
      const p = this.ready[i]!;
      if (this.atCap(p)) {
        i++;
        continue;
      }
      this.ready.splice(i, 1);
      this.start1(p);
    }
  }

  /**
   * The buffer is full of jobs whose handlers are at their cap while slots are free: they go back
   * to the queue (for a second), so the jobs of other handlers behind them in the queue can run.
   */
  private shed(): number {
    const before = this.ready.length;
    const keep: Pending[] = [];
    for (const p of this.ready) {
      if (this.atCap(p)) {
        this.stats.deferred++;
        this.budget = Math.max(1, this.budget - 1);
        p.m.nak(DEFAULTS.busyDelayMs);
      } else keep.push(p);
    }
    this.ready.splice(0, this.ready.length, ...keep);
    return before - keep.length;
  }

  private start1(p: Pending): void {
    const { handlers } = p;
    for (const h of handlers) this.busy.set(h, (this.busy.get(h) ?? 0) + 1);
    this.stats.running++;
    const progress = setInterval(() => p.m.working(), DEFAULTS.progressEveryMs);
    this.attempt(p)
      .catch((err: Error) => this.opts.log.error('pipeline job bookkeeping failed', { error: err.message }))
      .finally(() => {
        clearInterval(progress);
        for (const h of handlers) {
          const n = (this.busy.get(h) ?? 1) - 1;
          if (n > 0) this.busy.set(h, n);
          else this.busy.delete(h);
        }
        this.stats.running--;
        this.budget = Math.min(2 * this.opts.concurrency, this.budget + 1);
        this.dispatch();
        this.idle.shift()?.();
      });
  }

  /** Runs one job, or parks it when it already started too many times without finishing. */
  private async attempt(p: Pending): Promise<void> {
    const { m, job, eventJson, workflows } = p;
    const started = Date.now();
    const attempt = await this.opts.attempts.begin(m);
    if (attempt.park) return this.park(p, attempt.attempts, attempt.revision);
    let report: Awaited<ReturnType<typeof runJob>>;
    try {
      report = await runJob(job, workflows, this.exec, this.opts.log, eventJson);
    } catch (err) {
      // A bug, not a handler failure (those are reported, not thrown): let another attempt have it.
      this.opts.log.error('pipeline job failed', { job: job.id, error: (err as Error).message });
      m.nak(DEFAULTS.failedDelayMs);
      return;
    }
    if (this.abort.signal.aborted) {
      // Cut short by stop(): its handlers were killed, not failed. Back to the queue at once for
      // another node (at least once); the start stays counted, as for a crash.
      m.nak();
      return;
    }
    this.stats.jobs++;
    this.stats.filtered += report.filtered;
    this.stats.mutatorErrors += report.errors.length;
    for (const h of report.handled) {
      this.stats.handlerRuns++;
      if (!h.ok) this.stats.handlerFailures++;
    }
    // A plain ack: if it were lost the job would run again (at least once), and a confirmed ack
    // costs a request per job.
    m.ack();
    this.opts.attempts.end(m, attempt.revision);
    this.opts.log.debug('pipeline job done', {
      job: job.id,
      source: job.source,
      workflows: report.workflows,
      handled: report.handled.length,
      ms: Date.now() - started,
      redelivered: m.info.redeliveryCount > 1 ? m.info.redeliveryCount : undefined,
    });
  }

  /**
   * Moves a job to MONITOR_PIPELINE_DEAD as it was queued, then takes it off the work queue; if the
   * dead-letter stream does not take it, the job stays queued and is parked at its next delivery.
   */
  private async park(p: Pending, attempts: number, revision: number | undefined): Promise<void> {
    const { m, job } = p;
    try {
      await this.opts.nats.publishDurable(subjects.pipelineDead, m.data, `parked-${m.seq}`);
    } catch (err) {
      this.opts.log.warn('pipeline job not parked, retrying later', {
        job: job.id,
        error: (err as Error).message,
      });
      m.nak(DEFAULTS.failedDelayMs);
      return;
    }
    m.ack();
    this.opts.attempts.end(m, revision);
    this.stats.parked++;
    // Names only: the event's payload (output, metrics, entity) stays in the parked job.
    this.opts.log.warn('pipeline job parked: it never finished', {
      job: job.id,
      source: job.source,
      entity: job.event.entity?.metadata.name,
      check: job.event.check?.metadata.name,
      attempts,
      deliveries: m.info.redeliveryCount,
      stream: streams.pipelineDead,
    });
  }

  /**
   * Stops taking jobs. Running ones get a short grace to finish; then their handlers are killed and
   * the jobs are handed back (nak), so another node runs them at once instead of after the ack wait.
   */
  async stop(graceMs = 2000): Promise<void> {
    this.stopped = true;
    this.batch?.stop();
    for (const r of this.idle.splice(0)) r();
    const deadline = Date.now() + graceMs;
    while (this.stats.running > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 50));
    this.abort.abort();
    await this.loop?.catch(() => {});
  }
}
