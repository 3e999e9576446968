import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hashPassword, verifyPassword, VerifiedCache } from '../../gateway/auth/passwords.ts';

test('hash and verify', async () => {
  const h = await hashPassword('P@ssw0rd!');
  assert.match(h, /^scrypt\$32768\$8\$1\$/);
  assert.ok(await verifyPassword('P@ssw0rd!', h));
  assert.not.ok(await verifyPassword('P@ssw0rd', h));
  assert.not.ok(await verifyPassword('x', 'not a hash'));
  assert.is.not(await hashPassword('P@ssw0rd!'), h, 'salted');
});

test('the cache answers repeats and concurrent asks with one KDF run', async () => {
  const h = await hashPassword('secret');
  const cache = new VerifiedCache();
  const t0 = performance.now();
  const results = await Promise.all(Array.from({ length: 50 }, () => cache.verify('secret', h)));
  const first = performance.now() - t0;
  assert.ok(results.every(Boolean));
  const t1 = performance.now();
  for (let i = 0; i < 1000; i++) assert.ok(await cache.verify('secret', h));
  const repeats = performance.now() - t1;
  // 1000 cached answers cost less than the 50 concurrent first ones (about one KDF run).
  assert.ok(repeats < first * 5, `cached ${repeats}ms vs first ${first}ms`);
  assert.not.ok(await cache.verify('wrong', h), 'failures are never cached as success');
});

test.run();
