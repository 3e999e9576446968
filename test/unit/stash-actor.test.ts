import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { stashBehavior } from '../../actors/stash/actor.ts';
import { EXPIRE_TIMER, type StashState } from '../../actors/stash/messages.ts';
import type { TimerSpec, Turn } from '../../actors/runtime/types.ts';

// The stash actor's decisions on a turn without stores: what a put, a delete and its deadline leave
// in the state and the timers (the runtime commits both; test/e2e/legacy-api-stashes covers the rest).

const behavior = stashBehavior();
const noop = () => {};

/** A turn at `now` over `state` and `timers`, which it changes in place as the runtime would commit them. */
function turn(
  now: number,
  state: StashState | undefined,
  timers: Record<string, TimerSpec>,
): Turn<StashState> {
  const log = { info: noop, warn: noop, error: noop, debug: noop } as unknown as Turn<StashState>['log'];
  return {
    kind: 'stash',
    id: 'silence/web-01/disk',
    shard: 0,
    now,
    log,
    messageId: 'm',
    state,
    setTimer: (name, at) => void (timers[name] = { at }),
    clearTimer: (name) => void delete timers[name],
    timer: (name) => timers[name],
    read: async () => undefined,
    write: noop,
    writeJson: noop,
    remove: noop,
    afterCommit: noop,
    enqueue: noop,
  };
}

test('put with expire: content and deadline at now + expire; without expire the deadline is cleared', async () => {
  const timers: Record<string, TimerSpec> = {};
  const t = turn(1_000_000, undefined, timers);
  assert.equal(await behavior.receive(t, 'put', { content: { a: 1 }, expire: 60 }), { stored: true });
  assert.equal(t.state, { content: { a: 1 }, expires_at: 1_060_000 });
  assert.equal(timers, { [EXPIRE_TIMER]: { at: 1_060_000 } });
  const t2 = turn(1_001_000, t.state, timers);
  assert.equal(await behavior.receive(t2, 'put', { content: { a: 2 } }), { stored: true });
  assert.equal(t2.state, { content: { a: 2 } });
  assert.equal(timers, {});
});

test('put with a zero or negative expire stores the stash without an expiry (and clears one)', async () => {
  for (const expire of [0, -1]) {
    const timers: Record<string, TimerSpec> = { [EXPIRE_TIMER]: { at: 5 } };
    const t = turn(1000, { content: { a: 1 }, expires_at: 5000 }, timers);
    assert.equal(await behavior.receive(t, 'put', { content: { a: 2 }, expire }), { stored: true });
    assert.equal(t.state, { content: { a: 2 } });
    assert.equal(timers, {});
  }
});

test('delete: true for a live stash, false for none or one past its deadline not yet fired', async () => {
  const live = turn(1000, { content: {} }, {});
  assert.equal(await behavior.receive(live, 'delete', null), { deleted: true });
  assert.is(live.state, undefined);
  assert.equal(await behavior.receive(turn(1000, undefined, {}), 'delete', null), { deleted: false });
  const late = turn(6000, { content: {}, expires_at: 5000 }, { [EXPIRE_TIMER]: { at: 5000 } });
  assert.equal(await behavior.receive(late, 'delete', null), { deleted: false });
  assert.is(late.state, undefined);
});

test('the deadline ends the stash; an unknown message is refused', async () => {
  const timers: Record<string, TimerSpec> = {};
  const t = turn(5000, { content: {}, expires_at: 5000 }, timers);
  await behavior.fire(t, EXPIRE_TIMER, 5000);
  assert.is(t.state, undefined);
  const refused = await behavior.receive(turn(0, undefined, {}), 'get', null).then(
    () => undefined,
    (err: Error) => err.message,
  );
  assert.is(refused, 'stash actor has no message "get"');
});

test.run();
