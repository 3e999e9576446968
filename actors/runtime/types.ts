import type { Logger } from '../../lib/log.ts';
import type { Applied } from './applied.ts';

/** A durable deadline as kept in an actor's record. */
export interface TimerSpec {
  /** Epoch ms; the timer never fires before it. */
  at: number;
  /** After a takeover the new owner waits at least this long before firing (ms). */
  grace?: number;
}

/** What an actor's record holds in its kind's KV bucket, besides the actor's own state. */
export interface ActorRecord<S> {
  id: string;
  state?: S;
  timers: Record<string, TimerSpec>;
  /** The last messages applied and their replies, so a retried message is applied once, also after failover. */
  seen: Applied[];
  /**
   * The side writes of the turn that wrote this record, when it had more than one write: the record
   * is written first and decides the turn; the writes are then made, and replayed by whoever loads
   * the record next if they were not (docs/architecture.md, "Atomic turns").
   */
  intent?: Intent;
}

export interface Intent {
  writes: IntentWrite[];
}
/** One side write of a turn: the revision it replaces, the messages that made it, the value (none: a removal). */
export interface IntentWrite {
  bucket: string;
  key: string;
  prev: number;
  ids: string[];
  json: string | undefined;
}

/** The view of one turn: the actor's state and the effects it wants, committed together. */
export interface Turn<S> {
  readonly kind: string;
  readonly id: string;
  readonly shard: number;
  readonly now: number;
  readonly log: Logger;
  /**
   * The id of the message being applied (undefined in a timer's turn). It is the same on every retry
   * of the message, so ids made from it (an event's, a job's) are too.
   */
  readonly messageId: string | undefined;
  /**
   * The actor's state. Treat it as immutable: to change it, assign a new value (`t.state = {...}`).
   * The runtime persists the state when the reference changed; a mutation in place is not saved.
   */
  state: S | undefined;
  setTimer(name: string, at: number, graceMs?: number): void;
  clearTimer(name: string): void;
  timer(name: string): TimerSpec | undefined;
  /**
   * Reads a record this actor owns in another bucket (an entity's events). The object is shared with
   * the runtime's cache and later turns: never change it in place (build a new one, as `state`).
   */
  read<T>(bucket: string, key: string): Promise<T | undefined>;
  /** Writes such a record; it is durable before the turn's reply is sent. */
  write(bucket: string, key: string, value: unknown): void;
  /**
   * The same with the record already serialized (the actor reuses parts it serialized before).
   * `value`, when given, is what `json` encodes (the same fields and values, built by the actor): later
   * reads get it instead of parsing `json` again. It must not be changed afterwards.
   */
  writeJson(bucket: string, key: string, json: string, value?: unknown): void;
  remove(bucket: string, key: string): void;
  /**
   * Runs `fn` once the turn is durable (never when it fails or is fenced): for effects outside the
   * stores, such as a pipeline job or a message to an agent. At most once: a crash right after the
   * commit loses it.
   */
  afterCommit(fn: () => void | Promise<void>): void;
  /**
   * Puts a message on a JetStream stream as part of the turn: published (and acknowledged by the
   * stream) before the turn's writes are sent, so whatever the turn stored has its message too. A
   * turn that fails after publishing is retried with the same `msgId`, which the stream drops as a
   * duplicate: at least once, exactly once when nothing fails.
   */
  enqueue(subject: string, data: string, msgId: string): void;
}

/** An actor kind: how its records are keyed and how it reacts to messages and timers. */
export interface ActorBehavior<S> {
  kind: string;
  /** KV bucket of the actor's own record. */
  bucket: string;
  /** Key tokens of an actor's record after the shard token, e.g. [namespace, name]. */
  keyTokens(id: string): string[];
  receive(turn: Turn<S>, type: string, body: unknown): Promise<unknown>;
  fire(turn: Turn<S>, timer: string, at: number): Promise<void>;
}

/**
 * Thrown by a turn's read when the record read was already written by the message being applied: the
 * message is a retry of one applied before, answered with the reply it got then.
 */
export class AlreadyApplied extends Error {
  constructor(readonly reply: unknown) {
    super('message already applied');
    this.name = 'AlreadyApplied';
  }
}

/** Thrown inside a turn when the shard was lost under it: nothing is written, nothing replied. */
export class Fenced extends Error {
  constructor() {
    super('shard no longer owned');
    this.name = 'Fenced';
  }
}

/** An error the actor reports to its caller: `unavailable` is retried by `ask`, the others are final. */
export class ActorError extends Error {
  constructor(
    readonly code: 'not_found' | 'invalid' | 'conflict' | 'internal' | 'unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'ActorError';
  }
}
