import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { CheckExecutor } from '../../agent/checks/index.ts';
import { StandaloneChecks } from '../../agent/legacy/standalone.ts';
import { createLogger } from '../../lib/log.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { LocalCheck } from '../../agent/legacy/checks/definition.ts';

// The executor's legacy mode with real commands (sh), without a backend: the events it submits.

const CLIENT = {
  name: 'web-01',
  address: '10.0.0.1',
  team: 'ops',
  disk: { warning: 80 },
  subscriptions: ['web'],
};

function executor(checks: Record<string, LocalCheck>, safeMode = false) {
  const events: Event[] = [];
  const logs: Array<Record<string, unknown>> = [];
  const ex = new CheckExecutor({
    log: createLogger('debug', {}, (line) => logs.push(JSON.parse(line) as Record<string, unknown>)),
    entity: () => ({ metadata: { name: 'web-01', namespace: 'default' }, entity_class: 'agent' }) as never,
    submit: async (e) => {
      events.push(e);
    },
    baseEnv: () => ({ PATH: process.env.PATH ?? '/usr/bin:/bin' }),
    disableAssets: true,
    legacy: { client: () => CLIENT, checks, safeMode },
  });
  return { ex, events, logs };
}

const req = (name: string, command: string, extra: Record<string, unknown> = {}, issued = 1700000000) => ({
  config: { metadata: { name, namespace: 'default' }, command, interval: 60, ...extra },
  issued,
});

async function one(checks: Record<string, LocalCheck>, request: unknown, safeMode = false) {
  const { ex, events } = executor(checks, safeMode);
  ex.handle(request);
  await ex.idle();
  assert.is(events.length, 1, 'one event');
  return events[0]!.check as Record<string, unknown>;
}

test('tokens come from the client definition; the event keeps the command as written', async () => {
  const c = await one({}, req('t', 'echo :::name::: :::team::: :::disk.warning::: :::missing|dflt:::'));
  assert.is(c.output, 'web-01 ops 80 dflt\n');
  assert.is(c.status, 0);
  assert.is(c.command, 'echo :::name::: :::team::: :::disk.warning::: :::missing|dflt:::');
});

test('unmatched tokens: not run, status 3, handle false, the unmatched list in the output', async () => {
  const c = await one({}, req('t', 'echo ran; :::nonexistent::: :::noexistent.hash::: :::team.x:::'));
  assert.is(c.output, 'Unmatched client token(s): nonexistent, noexistent.hash, team.x');
  assert.is(c.status, 3);
  assert.is(c.handle, false);
});

test('safe mode: an undefined check is refused (not run); a defined one runs its local definition', async () => {
  const refused = await one({}, req('t', 'echo ran'), true);
  assert.is(refused.output, 'Check is not locally defined (safe mode)');
  assert.is(refused.status, 3);
  assert.is(refused.handle, false);
  const ran = await one({ t: { command: 'echo local', team: 'db' } }, req('t', 'echo remote'), true);
  assert.is(ran.output, 'local\n');
  assert.is(ran.team, 'db');
  assert.is(ran.interval, 60, 'the request fields the definition does not set stay');
});

test('stdin: {client, check} in the legacy shape', async () => {
  const c = await one({ s: { command: 'cat', stdin: true, subscribers: ['web'] } }, req('s', 'ignored'));
  const got = JSON.parse(c.output as string) as { client: unknown; check: Record<string, unknown> };
  assert.equal(got.client, CLIENT);
  assert.is(got.check.name, 's');
  assert.is(got.check.issued, 1700000000);
  assert.is(got.check.command, 'cat');
  assert.equal(got.check.subscribers, ['web']);
  assert.is(got.check.metadata, undefined);
});

test('timeout: "Execution timed out", status 2', async () => {
  const c = await one({}, req('slow', 'sleep 5', { timeout: 1 }));
  assert.is(c.status, 2);
  assert.ok((c.output as string).startsWith('Execution timed out'), String(c.output));
});

test('hooks: by "<status>", else severity name, else non-zero; the result inside check.hooks.<key>', async () => {
  const hooks = {
    '2': { command: 'echo two :::name:::' },
    critical: { command: 'echo crit' },
    warning: { command: 'echo warn; exit 4' },
    'non-zero': { command: 'echo nz :::nope:::' },
  };
  const two = await one({ h: { command: 'exit 2', hooks } }, req('h', 'x'));
  const h2 = (two.hooks as Record<string, Record<string, unknown>>)['2']!;
  assert.is(h2.output, 'two web-01\n');
  assert.is(h2.status, 0);
  assert.is(h2.command, 'echo two :::name:::', 'the hook as written');
  assert.type(h2.executed, 'number');
  assert.type(h2.duration, 'number');
  assert.equal((two.hooks as Record<string, unknown>).critical, { command: 'echo crit' }, 'not run');
  const warn = await one({ h: { command: 'exit 1', hooks } }, req('h', 'x'));
  assert.is((warn.hooks as Record<string, Record<string, unknown>>).warning!.status, 4);
  const nz = await one({ h: { command: 'exit 3', hooks } }, req('h', 'x'));
  const hn = (nz.hooks as Record<string, Record<string, unknown>>)['non-zero']!;
  assert.is(hn.output, 'Unmatched client token(s): nope');
  assert.is(hn.status, 3);
  const ok = await one({ h: { command: 'true', hooks } }, req('h', 'x'));
  assert.equal(ok.hooks, hooks, 'no hook for 0 here: the hooks as defined');
});

test('in progress: a second request while the first runs is dropped with the legacy warning', async () => {
  const { ex, events, logs } = executor({});
  ex.handle(req('busy', 'sleep 1', {}, 1700000000));
  ex.handle(req('busy', 'sleep 1', {}, 1700000001));
  await ex.idle();
  assert.is(events.length, 1);
  assert.ok(
    logs.some((l) => l.level === 'warn' && l.msg === 'previous check command execution in progress'),
    JSON.stringify(logs),
  );
});

test('standalone checks run on the client clock, each fire issued at its time; subdued and non-standalone ones do not', async () => {
  const checks = {
    alone: { command: 'echo :::name:::', standalone: true, interval: 1 },
    requested: { command: 'echo no', interval: 1 },
    // Subdued all day long (two windows cover every second).
    quiet: {
      command: 'echo quiet',
      standalone: true,
      interval: 1,
      subdue: {
        days: {
          all: [
            { begin: '12:00 PM', end: '11:59 AM' },
            { begin: '11:00 AM', end: '1:00 PM' },
          ],
        },
      },
    },
  };
  const { ex, events } = executor(checks);
  const s = new StandaloneChecks({
    clientName: 'web-01',
    checks,
    request: (v) => ex.handle(v),
    log: createLogger('error', {}, () => {}),
  });
  s.start();
  await new Promise((r) => setTimeout(r, 3200));
  s.stop();
  await ex.idle();
  assert.ok(events.length >= 2 && events.length <= 4, `fires: ${events.length}`);
  const issued = events.map((e) => e.check!.issued as number);
  assert.equal([...new Set(issued)], issued, 'each fire once');
  for (const e of events) {
    assert.is(e.check!.metadata.name, 'alone');
    assert.is(e.check!.output, 'web-01\n');
    assert.is(e.check!.standalone, true);
  }
});

test.run();
