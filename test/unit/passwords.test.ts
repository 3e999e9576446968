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

test('the cache answers concurrent and repeated asks, and never caches a failure', async () => {
  const h = await hashPassword('secret');
  const cache = new VerifiedCache();
  const results = await Promise.all(
    Array.from({ length: 50 }, (_, i) => cache.verify(i % 2 ? 'secret' : 'wrong', h)),
  );
  assert.equal(
    results,
    Array.from({ length: 50 }, (_, i) => i % 2 === 1),
  );
  for (let i = 0; i < 100; i++) assert.ok(await cache.verify('secret', h));
  assert.not.ok(await cache.verify('wrong', h));
  const other = await hashPassword('secret');
  assert.ok(await cache.verify('secret', other), 'another hash of the same password');
  assert.not.ok(
    await cache.verify('secret', await hashPassword('changed')),
    'a changed password misses the cache',
  );
});

test.run();
