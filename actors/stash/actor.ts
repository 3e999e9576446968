import { buckets } from '../../proto/names.ts';
import { ActorError, type ActorBehavior, type Turn } from '../runtime/types.ts';
import {
  EXPIRE_TIMER,
  STASH_KIND,
  type PutStashMsg,
  type StashMessage,
  type StashProtocol,
  type StashState,
} from './messages.ts';
import { expired } from './reads.ts';

/**
 * Ends the stash: its record keeps only `seen` (so a retried delete is answered as the first). Whether
 * there was a stash: one past its deadline whose timer has not run yet (a takeover) was gone already.
 */
function end(t: Turn<StashState>): boolean {
  const existed = t.state !== undefined && !expired(t.state, t.now);
  t.clearTimer(EXPIRE_TIMER);
  t.state = undefined;
  return existed;
}

/**
 * A write replaces the whole stash, its expiry included: without `expire` an earlier deadline is
 * cleared (as the legacy API's store did). A zero or negative `expire` means no expiry: -1 is what a
 * list shows for none and what dashboards sent for "never" (docs/compatibility.md#stashes).
 */
function put(t: Turn<StashState>, msg: PutStashMsg): { stored: boolean } {
  if (msg.expire === undefined || msg.expire <= 0) {
    t.clearTimer(EXPIRE_TIMER);
    t.state = { content: msg.content };
    return { stored: true };
  }
  const at = t.now + msg.expire * 1000;
  t.setTimer(EXPIRE_TIMER, at);
  t.state = { content: msg.content, expires_at: at };
  return { stored: true };
}

/**
 * The stash actor: one stash of the legacy API. Its expiry is a durable deadline in its record, so a
 * stash ends on time (or late by a takeover, never early) whichever node dies meanwhile: the node
 * taking the shard re-arms it (docs/architecture.md#durable-timers).
 */
export function stashBehavior(): ActorBehavior<StashState> {
  // Typed by the protocol, so a handler and its senders cannot disagree on a body or a reply.
  const handlers: {
    [T in StashMessage]: (t: Turn<StashState>, body: StashProtocol[T]['body']) => StashProtocol[T]['reply'];
  } = {
    put: (t, msg) => put(t, msg),
    delete: (t) => ({ deleted: end(t) }),
  };
  return {
    kind: STASH_KIND,
    bucket: buckets.stashes,
    keyTokens: (id) => [id],
    async receive(t, type, body) {
      if (!Object.hasOwn(handlers, type))
        throw new ActorError('invalid', `stash actor has no message "${type}"`);
      return handlers[type as StashMessage](t, body as never);
    },
    async fire(t, timer) {
      // The host fires only the deadline still in the record (a re-put replaced or cleared older ones).
      if (timer !== EXPIRE_TIMER || !t.state) return;
      t.log.info('stash expired', { path: t.id, expired_at: t.state.expires_at });
      end(t);
    },
  };
}
