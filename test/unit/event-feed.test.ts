import { test } from 'uvu';
import * as assert from 'uvu/assert';
import type { EventChange, EventChangeListener } from '../../actors/entity/read-model.ts';
import { createLogger } from '../../lib/log.ts';
import { EventFeed } from '../../gateway/api/event-feed.ts';

// The fan-out behind the live event stream, fed straight from the read model's change hook: the
// bound on what a client that does not read may cost (closed with `event: error` and a warn log),
// heartbeats, message format (redaction, id, delete data) and the open-stream count.

// The read model is a stand-in here: these cases are about the fan-out alone, and a resumed stream's
// replay from the bucket is tested against a real backend (test/e2e/event-stream-resume.test.ts).
class Changes {
  readonly listeners = new Set<EventChangeListener>();
  readonly eventRevision = 0;
  async eventHistory() {
    return { first: 1, last: 0 };
  }
  async eventChangesSince() {
    return [];
  }
  onEventChange(l: EventChangeListener): () => void {
    this.listeners.add(l);
    return () => {
      this.listeners.delete(l);
    };
  }
  emit(c: EventChange): void {
    for (const l of this.listeners) l(c);
  }
}

const put = (entity: string, extra: object = {}, revision?: number): EventChange => ({
  op: 'put',
  namespace: 'default',
  entity,
  check: 'c',
  revision,
  json: JSON.stringify({
    entity: { metadata: { name: entity, labels: { password: 'hunter2' } }, ...extra },
    check: { metadata: { name: 'c' } },
    metadata: { namespace: 'default' },
  }),
});

async function readAll(stream: ReadableStream<Uint8Array>): Promise<string> {
  const reader = stream.getReader();
  let out = '';
  const dec = new TextDecoder();
  for (;;) {
    const { done, value } = await reader.read();
    if (done) return out;
    out += dec.decode(value, { stream: true });
  }
}

const logger = () => {
  const lines: any[] = [];
  return { lines, log: createLogger('debug', {}, (l) => lines.push(JSON.parse(l))) };
};

test('a client that does not read is cut off at the cap with event: error and a warn log', async () => {
  const src = new Changes();
  const { lines, log } = logger();
  const feed = new EventFeed(src, log, { queueCap: 16 * 1024, heartbeatMs: 60_000 });
  const stream = feed.open({ accept: () => true }, { user: 'slow' });
  assert.is(feed.openCount, 1);
  const pad = 'x'.repeat(1000);
  for (let i = 0; i < 100; i++) src.emit(put(`e${i}`, { pad }));
  assert.is(feed.openCount, 0, 'the stream is closed');
  assert.is(src.listeners.size, 0, 'and unsubscribed');
  const text = await readAll(stream);
  assert.ok(text.length < 20 * 1024, `queued ${text.length} bytes past the cap`);
  assert.match(text, /event: error\ndata: \{"message":"[^"]+","code":10\}\n\n$/);
  const warn = lines.find((l) => l.level === 'warn');
  assert.ok(warn, 'a warn log');
  assert.is(warn.user, 'slow');
});

test('messages: put redacted with id, delete with its names, heartbeats, filter', async () => {
  const src = new Changes();
  const feed = new EventFeed(src, logger().log, { queueCap: 1 << 20, heartbeatMs: 20 });
  const stream = feed.open({ accept: (c) => c.entity !== 'skip' }, {});
  src.emit(put('a', {}, 7));
  src.emit(put('skip'));
  src.emit({ op: 'delete', namespace: 'default', entity: 'a', check: 'c', revision: 8 });
  await new Promise((r) => setTimeout(r, 70));
  feed.closeAll();
  assert.is(feed.openCount, 0);
  const text = await readAll(stream);
  const blocks = text.split('\n\n').filter(Boolean);
  assert.is(blocks[0], ': stream of event changes');
  const putBlock = blocks.find((b) => b.startsWith('event: put'))!;
  assert.match(putBlock, /^event: put\nid: 7\ndata: \{/);
  assert.not.ok(putBlock.includes('hunter2'));
  assert.ok(putBlock.includes('"password":"REDACTED"'));
  assert.not.ok(text.includes('"skip"'), 'the filter');
  assert.ok(blocks.includes('event: delete\nid: 8\ndata: {"namespace":"default","entity":"a","check":"c"}'));
  assert.ok(blocks.filter((b) => b === ': heartbeat').length >= 1, 'heartbeats');
});

test('a cancelled stream unsubscribes', async () => {
  const src = new Changes();
  const feed = new EventFeed(src, logger().log);
  const stream = feed.open({ accept: () => true }, {});
  await stream.cancel();
  assert.is(feed.openCount, 0);
  assert.is(src.listeners.size, 0);
});

test.run();
