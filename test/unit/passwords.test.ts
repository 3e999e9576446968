import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { hashPassword, verifyPassword, VerifiedCache } from '../../gateway/auth/passwords.ts';
import { parsePasswordHash } from '../../proto/schemas/resources/users.ts';

test('hash and verify', async () => {
  const h = await hashPassword('P@ssw0rd!');
  assert.match(h, /^scrypt\$32768\$8\$1\$/);
  assert.ok(await verifyPassword('P@ssw0rd!', h));
  assert.not.ok(await verifyPassword('P@ssw0rd', h));
  assert.not.ok(await verifyPassword('x', 'not a hash'));
  assert.is.not(await hashPassword('P@ssw0rd!'), h, 'salted');
});

test('a stored hash no login could check safely matches no password, and never throws', async () => {
  const salt = Buffer.alloc(16, 1).toString('base64');
  const hash = Buffer.alloc(32, 2).toString('base64');
  const unusable = [
    `scrypt$1024$8$1$${salt}$`, // an empty hash: every password would match it
    `scrypt$1024$8$1$${salt}$AAAA`, // too short to tell passwords apart
    `scrypt$3$8$1$${salt}$${hash}`, // not a power of two: scrypt throws
    `scrypt$-1$0$2$${salt}$${hash}`,
    `scrypt$65536$1$1$${salt}$${hash}`, // N beyond 2^(16 r): scrypt throws
    `scrypt$1048576$8$1$${salt}$${hash}`, // a gigabyte per login
    `scrypt$1024$8$1$$${hash}`, // no salt
    `scrypt$1e3$8$1$${salt}$${hash}`,
    `$2a$10$${'a'.repeat(53)}`, // Sensu's bcrypt
  ];
  for (const stored of unusable) {
    assert.is(parsePasswordHash(stored), undefined, stored);
    assert.not.ok(await verifyPassword('P@ssw0rd!', stored), stored);
    assert.not.ok(await verifyPassword('', stored), stored);
  }
  assert.ok(parsePasswordHash(await hashPassword('x')), 'our own hashes pass');
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
