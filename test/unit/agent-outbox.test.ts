import { spawn } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { EventRefusedError } from '../../agent/events/prepare.ts';
import { Outbox } from '../../agent/outbox/index.ts';
import { LOCK_FILE, lockCacheDir, OutboxOpenError } from '../../agent/outbox/lock.ts';
import { frameRecord, scanRecords } from '../../agent/outbox/records.ts';
import { Relay, type Transport } from '../../agent/outbox/relay.ts';
import { OutboxStore, type StoreOptions } from '../../agent/outbox/store.ts';
import { createLogger } from '../../lib/log.ts';
import { tempDir } from '../harness/tmp.ts';

// The outbox on real files in a temporary cache-dir: durability, order, repair, bounds, cleanup.

function logger() {
  const lines: Array<{ level: string; msg: string } & Record<string, unknown>> = [];
  const log = createLogger('debug', {}, (line) => {
    lines.push(JSON.parse(line));
  });
  return { log, lines };
}

function open(dir: string, extra: Partial<StoreOptions> = {}) {
  const { log, lines } = logger();
  const store = OutboxStore.open({ cacheDir: dir, maxBytes: 1024 * 1024, log, ...extra });
  return { store, lines };
}

const ev = (id: string, pad = 0) => ({ id, check: { output: 'x'.repeat(pad) } });
const segments = (dir: string) =>
  fs
    .readdirSync(path.join(dir, 'outbox'))
    .filter((n) => n.startsWith('seg-'))
    .sort();
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));
/** Polls: the cursor is saved (and acknowledged segments deleted) a moment after acks, on a timer. */
async function until(what: string, cond: () => boolean, timeoutMs = 10_000) {
  const end = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await sleep(20);
  }
}

test('records: encode and scan round trip; a torn or corrupt tail stops the scan', () => {
  const a = frameRecord(Buffer.from('{"id":"a"}'));
  const b = frameRecord(Buffer.from('{"id":"b"}'));
  const whole = scanRecords(Buffer.concat([a, b]));
  assert.is(whole.records.length, 2);
  assert.is(whole.validBytes, a.length + b.length);
  assert.is(whole.problem, undefined);
  const torn = scanRecords(Buffer.concat([a, b.subarray(0, b.length - 3)]));
  assert.is(torn.records.length, 1);
  assert.is(torn.validBytes, a.length);
  const bad = Buffer.concat([a, b]);
  bad[bad.length - 1]! ^= 0xff;
  assert.match(scanRecords(bad).problem!, /checksum/);
  assert.match(scanRecords(Buffer.alloc(20)).problem!, /length 0/);
});

test('append, ack, reopen: only unacknowledged events come back, in order, readable', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir);
  const entries = await Promise.all(['a', 'b', 'c', 'd'].map((id) => store.append(ev(id))));
  assert.equal(
    entries.map((e) => e.seq),
    [0, 1, 2, 3],
  );
  store.ack(entries[0]!);
  store.ack(entries[2]!); // out of order: 'b' is still pending, so 'c' may come back (resends are safe)
  assert.is(store.stats.queued, 2);
  await store.close();
  const again = open(dir).store;
  // The cursor only says "everything before 'b' is acknowledged", so 'c' is sent again (deduped by id).
  assert.equal(
    again.entries().map((e) => e.id),
    ['b', 'c', 'd'],
  );
  assert.equal(again.read(again.entries()[0]!), ev('b'));
  const e = await again.append(ev('e'));
  assert.ok(e.seq >= 4, 'numbers keep growing across restarts');
  await again.close();
});

test('many concurrent appends share fsyncs and all come back in submission order', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir, { segmentBytes: 4096 });
  const ids = Array.from({ length: 300 }, (_, i) => `ev-${i}`);
  // Waves: each wave is one group commit; the next one finds the segment full and rotates.
  for (let w = 0; w < 10; w++)
    await Promise.all(ids.slice(w * 30, w * 30 + 30).map((id) => store.append(ev(id, 50))));
  assert.ok(segments(dir).length > 3, 'small segments rotate');
  await store.close();
  const again = open(dir, { segmentBytes: 4096 }).store;
  assert.equal(
    again.entries().map((e) => e.id),
    ids,
  );
  assert.equal(
    again.entries().map((e) => again.read(e)),
    ids.map((id) => ev(id, 50)),
  );
  await again.close();
});

test('a torn tail after a crash is truncated with a warning; later appends and reopens are clean', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir);
  await Promise.all(['a', 'b', 'c'].map((id) => store.append(ev(id))));
  await store.close();
  const seg = path.join(dir, 'outbox', segments(dir).at(-1)!);
  const good = fs.statSync(seg).size;
  fs.appendFileSync(seg, frameRecord(Buffer.from('{"id":"torn"}')).subarray(0, 9));
  const second = open(dir);
  assert.equal(
    second.store.entries().map((e) => e.id),
    ['a', 'b', 'c'],
  );
  assert.ok(second.lines.some((l) => l.level === 'warn' && /torn or corrupt tail/.test(l.msg)));
  assert.is(fs.statSync(seg).size, good);
  await second.store.append(ev('d'));
  await second.store.close();
  const third = open(dir);
  assert.equal(
    third.store.entries().map((e) => e.id),
    ['a', 'b', 'c', 'd'],
  );
  assert.not.ok(third.lines.some((l) => l.level === 'warn'));
  await third.store.close();
});

test('corrupt files never crash the agent: bad checksum, garbage segment, garbage cursor', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir);
  await Promise.all(['a', 'b', 'c'].map((id) => store.append(ev(id))));
  await store.close();
  const seg = path.join(dir, 'outbox', segments(dir).at(-1)!);
  const buf = fs.readFileSync(seg);
  buf[buf.length - 2]! ^= 0x55; // inside 'c'
  fs.writeFileSync(seg, buf);
  fs.writeFileSync(path.join(dir, 'outbox', 'seg-0000000000000900.log'), 'garbage, not records');
  fs.writeFileSync(path.join(dir, 'outbox', 'cursor'), 'not a number');
  const again = open(dir);
  assert.equal(
    again.store.entries().map((e) => e.id),
    ['a', 'b'],
  );
  const warnings = again.lines
    .filter((l) => l.level === 'warn')
    .map((l) => l.msg)
    .join('\n');
  assert.match(warnings, /cursor is corrupt/);
  assert.match(warnings, /torn or corrupt tail/);
  await again.store.append(ev('d'));
  await again.store.close();
  assert.equal(
    open(dir)
      .store.entries()
      .map((e) => e.id),
    ['a', 'b', 'd'],
  );
});

test('a full queue refuses new events and keeps every queued one; room comes back after acks', async () => {
  const dir = tempDir('outbox-unit');
  const { store, lines } = open(dir, { maxBytes: 64 * 1024, segmentBytes: 8 * 1024 });
  const kept = [];
  let refused: unknown;
  for (let i = 0; i < 100 && !refused; i++) {
    try {
      kept.push(await store.append(ev(`e${i}`, 2000)));
    } catch (err) {
      refused = err;
    }
  }
  assert.instance(refused, EventRefusedError);
  assert.match((refused as Error).message, /full/);
  assert.ok(lines.some((l) => l.level === 'warn' && /queue full/.test(l.msg)));
  assert.ok(store.stats.bytes <= 64 * 1024);
  assert.is(store.stats.refused, 1);
  assert.equal(
    store.entries().map((e) => e.id),
    kept.map((e) => e.id),
  );
  for (const e of kept) store.ack(e);
  await until('acknowledged segments deleted', () => store.stats.bytes < 16 * 1024);
  await store.append(ev('after', 2000));
  await store.close();
  assert.equal(
    open(dir)
      .store.entries()
      .map((e) => e.id),
    ['after'],
  );
});

test('fully acknowledged segments are deleted; the active one stays', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir, { segmentBytes: 4096 });
  const entries = [];
  for (let i = 0; i < 10; i++)
    entries.push(
      ...(await Promise.all(Array.from({ length: 10 }, (_, k) => store.append(ev(`e${i}-${k}`, 100))))),
    );
  const before = segments(dir).length;
  assert.ok(before > 3);
  for (const e of entries.slice(0, 50)) store.ack(e);
  await until('first half deleted', () => segments(dir).length < before);
  assert.ok(segments(dir).length > 1);
  for (const e of entries.slice(50)) store.ack(e);
  await until('all but the active segment deleted', () => segments(dir).length === 1);
  await store.append(ev('next')); // rotation: the full, acknowledged segment goes at once
  assert.is(segments(dir).length, 1);
  assert.is(store.stats.queued, 1);
  await store.close();
});

test('oversized events are refused; appends after close are refused', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir);
  try {
    await store.append(ev('big', 1024 * 1024 + 1));
    assert.unreachable();
  } catch (err) {
    assert.instance(err, EventRefusedError);
  }
  await store.close();
  try {
    await store.append(ev('late'));
    assert.unreachable();
  } catch (err) {
    assert.instance(err, EventRefusedError);
  }
});

test('cache-dir lock: a second user fails with one clear line; stale locks are taken over; bad dirs are reported', async () => {
  const dir = tempDir('outbox-unit');
  const nested = path.join(dir, 'a', 'b', 'cache');
  const { store } = open(nested); // created like mkdir -p
  try {
    open(nested);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, OutboxOpenError);
    assert.is((err as Error).message, `another monitor-agent (pid ${process.pid}) uses ${nested}`);
  }
  await store.close();
  assert.not.ok(fs.existsSync(path.join(nested, LOCK_FILE)), 'lock released on close');

  // A pid that no longer runs: far above any pid_max.
  fs.writeFileSync(path.join(nested, LOCK_FILE), '4194303999\n');
  const taken = open(nested);
  assert.is(fs.readFileSync(path.join(nested, LOCK_FILE), 'utf8').trim(), String(process.pid));
  await taken.store.close();

  // A live process that is not an agent (pid reused after a reboot): the lock is stale too.
  fs.writeFileSync(path.join(nested, LOCK_FILE), '1\n');
  lockCacheDir(nested)();

  // A live process whose command line names monitor-agent: another agent.
  const other = spawn(process.execPath, ['-e', 'setTimeout(() => {}, 60000)', 'monitor-agent'], {
    stdio: 'ignore',
  });
  try {
    await sleep(200);
    fs.writeFileSync(path.join(nested, LOCK_FILE), `${other.pid}\n`);
    try {
      lockCacheDir(nested);
      assert.unreachable();
    } catch (err) {
      assert.is((err as Error).message, `another monitor-agent (pid ${other.pid}) uses ${nested}`);
    }
  } finally {
    other.kill('SIGKILL');
  }
  fs.unlinkSync(path.join(nested, LOCK_FILE));

  const file = path.join(dir, 'plain-file');
  fs.writeFileSync(file, '');
  try {
    open(path.join(file, 'cache'));
    assert.unreachable();
  } catch (err) {
    assert.instance(err, OutboxOpenError);
    assert.match(
      (err as Error).message,
      /^cannot create cache-dir .*plain-file\/cache: ENOTDIR: not a directory$/,
    );
  }
});

test('relay: oldest first, bounded window, unacknowledged ones resent in order after a reconnect', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir);
  const { log } = logger();
  const sent: string[] = [];
  const link = { connected: false };
  const transport: Transport = {
    get connected() {
      return link.connected;
    },
    send: (e) => {
      if (!link.connected) return false;
      sent.push((e as { id: string }).id);
      return true;
    },
  };
  const relay = new Relay(store, transport, { rate: 1000, burst: 1000, window: 3, log });
  for (const id of ['a', 'b', 'c', 'd', 'e']) relay.push(await store.append(ev(id)));
  assert.equal(sent, []);
  link.connected = true;
  relay.connected();
  assert.equal(sent, ['a', 'b', 'c'], 'window of 3');
  relay.ack({ id: 'b', ok: true });
  assert.equal(sent, ['a', 'b', 'c', 'd']);
  relay.ack({ id: 'zzz', ok: true }); // unknown ids are ignored
  link.connected = false;
  relay.disconnected();
  link.connected = true;
  relay.connected();
  assert.equal(sent.slice(4), ['a', 'c', 'd']);
  relay.ack({ id: 'a', ok: false, code: 'invalid', message: 'bad' });
  relay.ack({ id: 'c', ok: true });
  relay.ack({ id: 'd', ok: true });
  relay.ack({ id: 'e', ok: true });
  assert.equal(sent.slice(7), ['e']);
  assert.is(store.stats.queued, 0);
  assert.is(relay.rejected, 1);
  relay.stop();
  await store.close();
});

test('relay: the token bucket limits the rate after the burst', async () => {
  const dir = tempDir('outbox-unit');
  const { store } = open(dir);
  const { log } = logger();
  const sent: string[] = [];
  const relay = new Relay(
    store,
    {
      connected: true,
      send: (e) => {
        sent.push((e as { id: string }).id);
        return true;
      },
    },
    { rate: 20, burst: 2, window: 100, log },
  );
  for (let i = 0; i < 5; i++) relay.push(await store.append(ev(`r${i}`)));
  assert.is(sent.length, 2, 'burst of 2 at once');
  await until('the rest follow at the rate', () => sent.length === 5);
  assert.is(sent.length, 5);
  relay.stop();
  await store.close();
});

test('cache-dir /dev/null: a memory queue of 1000 events, nothing written, acks free room', async () => {
  const { log, lines } = logger();
  const sent: string[] = [];
  const outbox = new Outbox(
    {
      connected: true,
      send: (e) => {
        sent.push((e as { id: string }).id);
        return true;
      },
    },
    { cacheDir: '/dev/null', maxBytes: 1 << 20, rate: 0.001, burst: 2, log },
  );
  assert.ok(lines.some((l) => l.level === 'warn' && /in memory only/.test(l.msg)));
  for (let i = 0; i < 1000; i++) await outbox.submit({ id: `m${i}` } as never);
  try {
    await outbox.submit({ id: 'over' } as never);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, EventRefusedError);
    assert.match((err as Error).message, /full/);
  }
  assert.is(outbox.stats.queued, 1000);
  assert.is(outbox.stats.refused, 1);
  assert.equal(sent, ['m0', 'm1'], 'the burst went out');
  outbox.ack({ id: 'm0', ok: true });
  assert.is(outbox.stats.queued, 999);
  await outbox.submit({ id: 'room again' } as never);
  await outbox.close();
  try {
    await outbox.submit({ id: 'late' } as never);
    assert.unreachable();
  } catch (err) {
    assert.instance(err, EventRefusedError);
  }
});

test.run();
