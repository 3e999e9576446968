import { randomUUID } from 'node:crypto';
import { actorHeaders, SHARD_COUNT, subjects } from '../../proto/names.ts';
import { shardOf } from './hash.ts';
import type { NatsAdapter } from './nats.ts';
import { NoRespondersError, RequestTimeoutError } from './request-mux.ts';
import { decodeReply } from './reply.ts';
import { ActorError, Fenced } from './types.ts';

const DEFAULTS = {
  attemptTimeoutMs: 2000,
  deadlineMs: 20_000,
  /** Retries wait a random time up to this, doubling per attempt up to retryBackoffMaxMs. */
  retryBackoffMs: 50,
  retryBackoffMaxMs: 1000,
} as const;

/** An actor host that can run a message itself when it owns the actor (see ActorHost.deliverLocal). */
interface LocalDelivery {
  deliverLocal(
    kind: string,
    id: string,
    type: string,
    body: unknown,
    msgId: string | undefined,
  ): Promise<unknown> | undefined;
}

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

  /** Asks answered by this node's own host without a trip through NATS. */
  localHits = 0;

  /**
   * `local`: this node's actor host, when there is one. Messages to actors it owns skip the network;
   * everything else (and any retry) goes through the shard subject.
   */
  constructor(
    private readonly nats: NatsAdapter,
    private readonly shardCount = SHARD_COUNT,
    private readonly local?: LocalDelivery,
  ) {}

  async ask<T = unknown>(
    kind: string,
    id: string,
    type: string,
    body: unknown,
    opts: AskOptions = {},
  ): Promise<T> {
    // A UUID, so that an actor can use it as the id of what the message creates (an event).
    const msgId = opts.msgId ?? randomUUID();
    const attemptTimeout = opts.attemptTimeoutMs ?? DEFAULTS.attemptTimeoutMs;
    const deadline = Date.now() + (opts.deadlineMs ?? DEFAULTS.deadlineMs);
    let subject: string | undefined, headers: Record<string, string> | undefined, data: Buffer | undefined;
    for (let attempt = 0; ; attempt++) {
      let here: Promise<unknown> | undefined;
      try {
        here = this.local?.deliverLocal(kind, id, type, body, msgId);
        if (here) {
          const value = await here;
          this.localHits++;
          return value as T;
        }
        subject ??= subjects.actorShard(shardOf(kind, id, this.shardCount));
        headers ??= {
          [actorHeaders.kind]: kind,
          [actorHeaders.id]: id,
          [actorHeaders.type]: type,
          [actorHeaders.msgId]: msgId,
        };
        data ??= Buffer.from(JSON.stringify(body ?? null));
        const reply = await this.nats.request(subject, data, {
          timeoutMs: Math.max(1, Math.min(attemptTimeout, deadline - Date.now())),
          headers,
        });
        return decodeReply(reply.data) as T;
      } catch (err) {
        // `unavailable`: the owner could not make the turn durable (a store down, the actor moving).
        // Sending again with the same id is safe: the message is applied once.
        if (err instanceof ActorError && err.code !== 'unavailable') throw err;
        const retriable =
          err instanceof NoRespondersError ||
          err instanceof RequestTimeoutError ||
          err instanceof Fenced ||
          err instanceof ActorError;
        // A failing local turn reads as the owner's "internal" reply would over the network.
        if (!retriable) throw here ? new ActorError('internal', (err as Error).message) : err;
        const backoff =
          Math.random() * Math.min(DEFAULTS.retryBackoffMaxMs, DEFAULTS.retryBackoffMs * 2 ** attempt);
        if (Date.now() + backoff >= deadline)
          throw new ActorError(
            'unavailable',
            `actor ${kind}/${id} did not answer in time (${(err as Error).message})`,
          );
        this.retries++;
        await new Promise((r) => setTimeout(r, backoff));
      }
    }
  }
}
