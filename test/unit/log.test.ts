import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { createLogger } from '../../lib/log.ts';

// What the logger keeps out of its lines: secret keys at any depth and in a child's fixed fields,
// and the user info of URLs in any string (docs/compatibility.md#credentials-of-the-external-etcd-and-nats).

function capture() {
  const lines: string[] = [];
  const log = createLogger('debug', {}, (l) => lines.push(l));
  return { log, lines, last: () => JSON.parse(lines[lines.length - 1]!) as Record<string, any> };
}

test('secret keys are redacted at any depth, inside arrays too', () => {
  const { log, lines, last } = capture();
  let deep: Record<string, unknown> = { password: 'deep-secret' };
  for (let i = 0; i < 12; i++) deep = { level: deep };
  log.info('deep', { deep, list: [{ token: 'tok-secret' }, [{ api_key: 'key-secret' }]] });
  assert.not.match(lines.join('\n'), /deep-secret|tok-secret|key-secret/);
  let at = last().deep;
  for (let i = 0; i < 12; i++) at = at.level;
  assert.is(at.password, 'REDACTED');
  assert.is(last().list[0].token, 'REDACTED');
  assert.is(last().list[1][0].api_key, 'REDACTED');
});

test('password flags are redacted in a logged configuration', () => {
  const { log, lines, last } = capture();
  log.info('config', {
    cfg: {
      'nats-password': 'np-secret',
      'etcd-password': 'ep-secret',
      'etcd-username': 'root',
      jwt_secret: 's',
    },
  });
  assert.not.match(lines.join('\n'), /np-secret|ep-secret/);
  assert.is(last().cfg['etcd-username'], 'root');
  assert.is(last().cfg['nats-password'], 'REDACTED');
  assert.is(last().cfg.jwt_secret, 'REDACTED');
});

test("a child's fixed fields are scrubbed, and its children's", () => {
  const { log, lines, last } = capture();
  const child = log.child({ password: 'child-secret', server: 'nats://u:child-pass@127.0.0.1:4222' });
  child.child({ nested: { authorization: 'Bearer grandchild-secret' } }).info('hello');
  assert.not.match(lines.join('\n'), /child-secret|child-pass|grandchild-secret/);
  assert.is(last().password, 'REDACTED');
  assert.is(last().server, 'nats://***@127.0.0.1:4222');
  assert.is(last().nested.authorization, 'REDACTED');
});

test('URLs with user info in any string, the message and errors lose the user info', () => {
  const { log, lines, last } = capture();
  log.error('cannot reach http://root:msg-pass@10.0.0.1:2379/v3', {
    urls: ['nats://u:list-pass@a:4222', 'nats://token-secret@b:4222', 'nats://plain:4222'],
    error: new Error('dial tls://x:err-pass@c:4222 failed'),
    note: 'see https://user:p@ss-w0rd@example.com/path and mail a@b.c',
  });
  assert.not.match(lines.join('\n'), /msg-pass|list-pass|token-secret|err-pass|ss-w0rd/);
  assert.is(last().msg, 'cannot reach http://***@10.0.0.1:2379/v3');
  assert.equal(last().urls, ['nats://***@a:4222', 'nats://***@b:4222', 'nats://plain:4222']);
  assert.is(last().error.message, 'dial tls://***@c:4222 failed');
  assert.is(last().note, 'see https://***@example.com/path and mail a@b.c');
});

test('an object seen twice is logged twice, a cycle is cut', () => {
  const { log, last } = capture();
  const shared = { a: 1 };
  const cyclic: Record<string, unknown> = { name: 'x' };
  cyclic.self = cyclic;
  log.info('shapes', { one: shared, two: shared, cyclic });
  assert.equal(last().two, { a: 1 });
  assert.is(last().cyclic.self, '[circular]');
});

test.run();
