// suite-timeout: 240
import * as assert from 'uvu/assert';
import { test } from '../harness/uvu.ts';
import {
  ADMIN,
  adminAuth,
  CtlHome,
  getJson,
  startBackend,
  type Backend,
  type CtlResult,
} from '../harness/index.ts';

// monitorctl's user, API key, authentication provider and silencing commands against a real
// backend: users made with a password from stdin and from a flag log in with configure; disable,
// reinstate, change-password and groups; api-key grant, list and revoke; auth list, info and
// delete of an LDAP provider made through the API; silenced create, list, update, delete and
// expiry; bad input.

let backend: Backend;
const admin = new CtlHome();

test.before(async () => {
  backend = await startBackend({ name: 'ctl-ops-users', logLevel: 'warn' });
  const r = await admin.run(['configure', '-n', '--url', backend.apiUrl, '--api-key', ADMIN.apiKey]);
  assert.is(r.code, 0, r.stderr);
});

test.after(async () => {
  await backend?.stop();
});

const ok = (args: string[], input?: string, home = admin) => home.ok(args, input);
const json = (args: string[]) => admin.json(args);
const fails = (code: number, args: string[], home = admin, input?: string): Promise<CtlResult> =>
  home.expect(code, args, { input, oneLine: true });
/** `monitorctl configure` as `user` in a home of its own: the exit status and the home. */
async function login(
  user: string,
  password: string,
): Promise<{ code: number | null; home: CtlHome; r: CtlResult }> {
  const home = new CtlHome();
  const r = await home.run([
    'configure',
    '-n',
    '--url',
    backend.apiUrl,
    '--username',
    user,
    '--password',
    password,
  ]);
  return { code: r.code, home, r };
}

test('user create: the password from stdin or from a flag; both users log in with configure', async () => {
  const out = await ok(
    ['user', 'create', 'alice', '--password-stdin', '--groups', 'dev,ops'],
    'alice-pw-1\n',
  );
  assert.is(out, 'Created user "alice"\n');
  assert.not.match(out, 'alice-pw-1');
  await ok(['user', 'create', 'bob', '--password', 'bob-pw-1']);
  const alice = await json(['user', 'info', 'alice']);
  assert.equal(alice.groups, ['dev', 'ops']);
  assert.is(alice.disabled, false);
  assert.is(alice.password, undefined);
  assert.is((await login('alice', 'alice-pw-1')).code, 0);
  assert.is((await login('bob', 'bob-pw-1')).code, 0);
  assert.is((await login('bob', 'wrong')).code, 4);
  const names = (await json(['user', 'list'])).map((u: any) => u.username);
  assert.ok(names.includes('alice') && names.includes('bob'), names.join(','));
  // Exists already: the server's 409, one line.
  const again = await fails(5, ['user', 'create', 'bob', '--password', 'x']);
  assert.match(again.stderr, /^Error: user "bob": /);
});

test('user create without a password and without a terminal is a usage error; nothing is made', async () => {
  const r = await fails(2, ['user', 'create', 'carol']);
  assert.match(r.stderr, /--password/);
  await fails(2, ['user', 'create', 'carol', '--password-stdin'], admin, '');
  await fails(3, ['user', 'info', 'carol']);
});

test('user disable: its login is refused (exit 4); reinstate: it logs in again', async () => {
  await fails(2, ['user', 'disable', 'bob']); // no terminal to confirm on
  assert.match(await ok(['user', 'disable', 'bob', '--skip-confirm']), /Disabled user "bob"/);
  assert.is((await json(['user', 'info', 'bob'])).disabled, true);
  const refused = await login('bob', 'bob-pw-1');
  assert.is(refused.code, 4, refused.r.stderr);
  assert.match(await ok(['user', 'reinstate', 'bob']), /Reinstated user "bob"/);
  assert.is((await login('bob', 'bob-pw-1')).code, 0);
});

test("user change-password: own password (old refused, new accepted) and an administrator's reset", async () => {
  const { home } = await login('alice', 'alice-pw-1');
  // Own password: the logged-in user, the current password checked by the server.
  const wrong = await fails(
    4,
    ['user', 'change-password', '--current-password', 'nope', '--new-password', 'long-enough-x'],
    home,
  );
  assert.match(wrong.stderr, /user "alice": the current password is wrong/);
  await fails(2, ['user', 'change-password', '--new-password', 'alice-pw-2'], home); // no terminal: no current
  assert.match(
    await ok(
      ['user', 'change-password', '--current-password', 'alice-pw-1', '--new-password', 'alice-pw-2'],
      undefined,
      home,
    ),
    /Changed the password of user "alice"/,
  );
  assert.is((await login('alice', 'alice-pw-1')).code, 4);
  assert.is((await login('alice', 'alice-pw-2')).code, 0);
  // An administrator sets another user's password, from stdin.
  await ok(['user', 'change-password', 'bob', '--password-stdin'], 'bob-pw-2\n');
  assert.is((await login('bob', 'bob-pw-1')).code, 4);
  assert.is((await login('bob', 'bob-pw-2')).code, 0);
  // With an API key the own user is unknown: it must be named.
  await fails(2, ['user', 'change-password', '--new-password', 'long-enough-x']);
});

test('user add-group, remove-group, remove-all-groups', async () => {
  await ok(['user', 'add-group', 'bob', 'admins-2']);
  await ok(['user', 'add-group', 'bob', 'readers']);
  assert.equal((await json(['user', 'info', 'bob'])).groups, ['admins-2', 'readers']);
  assert.match(
    await ok(['user', 'remove-group', 'bob', 'admins-2']),
    /Removed user "bob" from group "admins-2"/,
  );
  assert.equal((await json(['user', 'info', 'bob'])).groups, ['readers']);
  await fails(3, ['user', 'remove-group', 'bob', 'admins-2']);
  await ok(['user', 'remove-all-groups', 'bob']);
  assert.equal((await json(['user', 'info', 'bob'])).groups, []);
});

test('users: unknown user exits 3, missing arguments 2, one line each', async () => {
  for (const args of [
    ['user', 'info', 'nobody'],
    ['user', 'disable', 'nobody', '--skip-confirm'],
    ['user', 'reinstate', 'nobody'],
    ['user', 'add-group', 'nobody', 'g'],
    ['user', 'remove-all-groups', 'nobody'],
    ['user', 'change-password', 'nobody', '--new-password', 'long-enough-x'],
  ]) {
    const r = await fails(3, args);
    assert.match(r.stderr, /^Error: user "nobody": resource not found/);
  }
  await fails(2, ['user', 'create']);
  await fails(2, ['user', 'add-group', 'bob']);
  await fails(2, ['user', 'create', 'x', '--password', 'a', '--password-stdin'], admin, 'b\n');
});

test('api-key grant prints a key that works with --api-key; list shows it; revoke makes it refused', async () => {
  await ok(
    ['cluster-role-binding', 'create', 'bob-admin', '--file', '-'],
    JSON.stringify({
      role_ref: { type: 'ClusterRole', name: 'cluster-admin' },
      subjects: [{ type: 'User', name: 'bob' }],
    }),
  );
  const out = await ok(['api-key', 'grant', 'bob']);
  const key = out.trim();
  assert.match(key, /^[0-9a-f-]{36}$/, out);
  const bob = new CtlHome();
  const asBob = ['--url', backend.apiUrl, '--api-key', key];
  assert.ok(
    Array.isArray(JSON.parse(await ok(['check', 'list', '--format', 'json', ...asBob], undefined, bob))),
  );
  const keys = await json(['api-key', 'list']);
  const mine = keys.find((k: any) => k.metadata.name === key);
  assert.is(mine?.username, 'bob');
  await fails(2, ['api-key', 'revoke', key]); // no terminal to confirm on
  const revoked = await ok(['api-key', 'revoke', key, '--skip-confirm']);
  assert.is(revoked, 'Revoked the API key\n');
  const refused = await fails(4, ['check', 'list', ...asBob], bob);
  assert.not.match(refused.stderr, key);
  await fails(3, ['api-key', 'revoke', key, '--skip-confirm']);
  const nobody = await fails(5, ['api-key', 'grant', 'nobody']);
  assert.match(nobody.stderr, /user "nobody" does not exist/);
});

test('auth list, info and delete of an LDAP provider made through the API', async () => {
  const provider = {
    type: 'ldap',
    api_version: 'authentication/v2',
    metadata: { name: 'corp-ldap' },
    spec: {
      servers: [
        {
          host: 'ldap.acme.org',
          port: 636,
          security: 'tls',
          binding: { user_dn: 'cn=binder,dc=acme,dc=org', password: 'BIND_SECRET' },
          group_search: { base_dn: 'dc=acme,dc=org' },
          user_search: { base_dn: 'dc=acme,dc=org' },
        },
      ],
      groups_prefix: 'ldap',
      username_prefix: 'ldap',
    },
  };
  const put = await getJson(`${backend.apiUrl}/api/enterprise/authentication/v2/authproviders/corp-ldap`, {
    method: 'PUT',
    headers: adminAuth,
    body: provider,
  });
  assert.is(put.status, 200, JSON.stringify(put.body));
  assert.match(await ok(['auth', 'list']), /corp-ldap\s+ldap\s+ldap\.acme\.org/);
  const info = await json(['auth', 'info', 'corp-ldap']);
  assert.is(info.type, 'ldap');
  assert.is(info.spec.servers[0].host, 'ldap.acme.org');
  assert.match(await ok(['auth', 'info', 'corp-ldap', '--format', 'yaml']), /type: ldap/);
  await fails(2, ['auth', 'delete', 'corp-ldap']);
  assert.match(
    await ok(['auth', 'delete', 'corp-ldap', '--skip-confirm']),
    /Deleted auth-provider "corp-ldap"/,
  );
  assert.equal(await json(['auth', 'list']), []);
  await fails(3, ['auth', 'info', 'corp-ldap']);
});

test('silenced create by flags (the name derived), list, info, update, delete', async () => {
  const out = await ok([
    'silenced',
    'create',
    '--subscription',
    'linux',
    '--check',
    'disk',
    '--reason',
    'maintenance',
    '--expire-on-resolve',
    '--begin',
    '+1h',
    '--expire',
    '2h',
  ]);
  assert.is(out, 'Created silenced "linux:disk" in namespace "default"\n');
  await ok(['silenced', 'create', '--check', 'load', '-n']);
  await ok(['silenced', 'create', '--subscription', 'entity:web-1']);
  const s = await json(['silenced', 'info', 'linux:disk']);
  const now = Date.now() / 1000;
  assert.is(s.subscription, 'linux');
  assert.is(s.check, 'disk');
  assert.is(s.reason, 'maintenance');
  assert.is(s.expire_on_resolve, true);
  assert.ok(Math.abs(s.begin - (now + 3600)) < 60, String(s.begin));
  assert.is(s.expire, 7200);
  assert.is(s.expire_at, s.begin + 7200);
  assert.is(s.creator, 'admin');
  const names = (await json(['silenced', 'list'])).map((x: any) => x.metadata.name).sort();
  assert.equal(names, ['*:load', 'entity:web-1:*', 'linux:disk']);
  assert.match(await ok(['silenced', 'list']), /linux:disk\s+linux\s+disk\s/);
  assert.match(
    await ok([
      'silenced',
      'update',
      'linux:disk',
      '--reason',
      'patching',
      '--no-expire-on-resolve',
      '--begin',
      '2030-05-01T12:00:00Z',
    ]),
    /Updated silenced "linux:disk"/,
  );
  const u = await json(['silenced', 'info', 'linux:disk']);
  assert.is(u.reason, 'patching');
  assert.is(u.expire_on_resolve, false);
  assert.is(u.begin, Date.parse('2030-05-01T12:00:00Z') / 1000);
  assert.is(u.subscription, 'linux');
  await ok(['silenced', 'update', 'linux:disk', '--no-expire']);
  assert.is((await json(['silenced', 'info', 'linux:disk'])).expire_at, 0);
  assert.match(
    await ok(['silenced', 'delete', 'linux:disk', '--skip-confirm']),
    /Deleted silenced "linux:disk"/,
  );
  await fails(3, ['silenced', 'info', 'linux:disk']);
});

test('silenced create with --expire: the entry is gone once it expires', async () => {
  await ok(['silenced', 'create', '--subscription', 'brief', '--expire', '2']);
  assert.is((await json(['silenced', 'info', 'brief:*'])).expire, 2);
  const deadline = Date.now() + 15000;
  let r: CtlResult;
  do {
    await new Promise((res) => setTimeout(res, 500));
    r = await admin.run(['silenced', 'info', 'brief:*']);
  } while (r.code === 0 && Date.now() < deadline);
  assert.is(r.code, 3, r.stdout + r.stderr);
});

test('silenced bad input: no subscription or check, a bad --begin or --expire, an update without flags', async () => {
  const r = await fails(2, ['silenced', 'create', '--reason', 'x']);
  assert.match(r.stderr, /--subscription, --check or both/);
  assert.match(
    (await fails(2, ['silenced', 'create', '--check', 'x', '--begin', 'tomorrow'])).stderr,
    /--begin/,
  );
  assert.match((await fails(2, ['silenced', 'create', '--check', 'x', '--expire', '0'])).stderr, /--expire/);
  await fails(2, ['silenced', 'update', '*:load']);
  await fails(3, ['silenced', 'update', 'no:such', '--reason', 'x']);
});

test('--help of every new command', async () => {
  for (const args of [
    ['user', 'create'],
    ['user', 'disable'],
    ['user', 'reinstate'],
    ['user', 'change-password'],
    ['user', 'add-group'],
    ['user', 'remove-group'],
    ['user', 'remove-all-groups'],
    ['api-key', 'grant'],
    ['api-key', 'revoke'],
    ['auth', 'list'],
    ['auth', 'info'],
    ['auth', 'delete'],
    ['silenced', 'create'],
    ['silenced', 'update'],
  ]) {
    const out = await ok([...args, '--help']);
    assert.match(out, /^Usage: monitorctl /);
  }
});

test.run();
