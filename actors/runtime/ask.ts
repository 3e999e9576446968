import { nuid } from 'nats';
import { actorHeaders, SHARD_COUNT, subjects } from '../../proto/names.ts';
import { shardOf } from './hash.ts';
import { NoRespondersError, RequestTimeoutError, type NatsAdapter } from './nats.ts';
import { decodeReply } from './reply.ts';
import { ActorError } from './types.ts';

export interface AskOptions {
  /** Same id on every retry, so the actor applies the message once. Generated when absent. */
  msgId?: string;
  /** Timeout of one attempt. */
  attemptTimeoutMs?: number;
  /** Give up after this long; covers a takeover (lease expiry plus acquisition). */
  deadlineMs?: number;
}

/**
 * Sends messages to actors wherever they live: the shard subject reaches the current owner.
 * No responders (a shard moving) and timeouts (an owner that died or froze) are retried with
 * jittered exponential backoff until the deadline.
 */
export class ActorClient {
  /** Attempts that had to be retried, for metrics. */
  retries = 0;

  constructor(private readonly nats: NatsAdapter, private readonly shardCount = SHARD_COUNT) {}

  async ask<T = unknown>(kind: string, id: string, type: string, body: unknown, opts: AskOptions = {}): Promise<T> {
    const subject = subjects.actorShard(shardOf(kind, id, this.shardCount));
    const headers = { [actorHeaders.kind]: kind, [actorHeaders.id]: id, [actorHeaders.type]: type, [actorHeaders.msgId]: opts.msgId ?? nuid.next() };
    const data = Buffer.from(JSON.stringify(body ?? null));
    const attemptTimeout = opts.attemptTimeoutMs ?? 2000;
    const deadline = Date.now() + (opts.deadlineMs ?? 20_000);
    for (let attempt = 0; ; attempt++) {
      try {
        const reply = await this.nats.request(subject, data, { timeoutMs: Math.max(1, Math.min(attemptTimeout, deadline - Date.now())), headers });
        return decodeReply(reply.data) as T;
      } catch (err) {
        const retriable = err instanceof NoRespondersError || err instanceof RequestTimeoutError;
        if (!retriable) throw err;
        const backoff = Math.random() * Math.min(1000, 50 * 2 ** attempt);
        if (Date.now() + backoff >= deadline) throw new ActorError('unavailable', `actor ${kind}/${id} did not answer in time (${(err as Error).message})`);
        this.retries++;
        await new Promise((r) => setTimeout(r, backoff));
      }
    }
  }
}
