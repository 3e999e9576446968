// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { Attribute, Change, Client } from 'ldapts';
import {
  freePort,
  getJson,
  startBackend,
  startSlapd,
  waitFor,
  type Backend,
  type Slapd,
} from '../harness/index.ts';
import { basic, bearer } from '../harness/api.ts';
import { BASE, providerCalls } from './authproviders/calls.ts';

// Directory login through `/auth` against a real slapd, on a backend with embedded etcd and NATS
// (docs/compatibility.md#authentication-providers): tokens, groups with the provider's prefixes,
// RBAC on those groups, wrong credentials, a refresh, and a provider whose server is down. The
// providers API itself is in authproviders.test.ts.

let backend: Backend;
let slapd: Slapd;
const { url, admin, put, login } = providerCalls(() => backend);

/** A provider pointing at our slapd (plain LDAP), binding as the read-only service account. */
function slapdProvider(name: string, servers?: Array<Record<string, unknown>>) {
  const server = (port: number) => ({
    host: '127.0.0.1',
    port,
    security: 'insecure',
    binding: { user_dn: slapd.bindDn, password: slapd.bindPassword },
    user_search: { base_dn: slapd.peopleDn },
    group_search: { base_dn: slapd.groupsDn },
  });
  return {
    type: 'ldap',
    api_version: 'authentication/v2',
    metadata: { name },
    spec: { servers: servers ?? [server(slapd.port)], groups_prefix: 'ldap', username_prefix: 'ldap' },
    server,
  };
}

const jwtPayload = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

test.before(async () => {
  [backend, slapd] = await Promise.all([startBackend({ name: 'authproviders-login' }), startSlapd()]);
});

test.after(async () => {
  await Promise.allSettled([backend?.stop(), slapd?.stop()]);
});

test('directory login: a provider for slapd, and a view binding for the group ldap:ops', async () => {
  // Only the providers of this part: any other would point at a host that does not exist.
  for (const p of (await admin(BASE)).body as Array<{ metadata: { name: string } }>) {
    assert.is((await admin(`${BASE}/${p.metadata.name}`, { method: 'DELETE' })).status, 204);
  }
  const { server: _server, ...provider } = slapdProvider('corp');
  assert.is((await put('corp', provider)).status, 200);
  const crb = await admin('/api/core/v2/clusterrolebindings/ldap-ops-view', {
    method: 'PUT',
    body: {
      metadata: { name: 'ldap-ops-view' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'Group', name: 'ldap:ops' }],
    },
  });
  assert.ok(crb.status < 300, `binding: ${crb.status} ${JSON.stringify(crb.body)}`);
});

test('alice logs in with her directory password and gets tokens carrying her prefixed groups', async () => {
  const res = await waitFor(
    async () => {
      const r = await login('alice', 'alice-secret');
      return r.status === 200 ? r : undefined;
    },
    { timeoutMs: 10_000, what: 'alice to log in through the provider' },
  );
  assert.type(res.body.access_token, 'string');
  assert.type(res.body.refresh_token, 'string');
  assert.type(res.body.expires_at, 'number');
  const claims = jwtPayload(res.body.access_token);
  assert.is(claims.sub, 'ldap:alice');
  assert.ok(claims.groups.includes('ldap:ops'), `groups ${claims.groups}`);
  assert.ok(claims.groups.includes('ldap:dev'), `groups ${claims.groups}`);
  assert.is(claims.provider, 'corp');

  const auth = bearer(res.body.access_token);
  const checks = await waitFor(
    async () => {
      const r = await getJson(url('/api/core/v2/namespaces/default/checks'), { headers: auth });
      return r.status === 200 ? r : undefined;
    },
    { timeoutMs: 10_000, what: 'alice to read checks through ldap:ops' },
  );
  assert.ok(Array.isArray(checks.body));
  const namespaces = await getJson(url('/api/core/v2/namespaces'), { headers: auth });
  assert.is(namespaces.status, 200);
  assert.ok(namespaces.body.some((n: { name: string }) => n.name === 'default'));
  const create = await getJson(url('/api/core/v2/namespaces/default/checks'), {
    method: 'POST',
    headers: auth,
    body: {
      metadata: { name: 'from-alice', namespace: 'default' },
      command: 'true',
      interval: 60,
      subscriptions: ['linux'],
    },
  });
  assert.is(create.status, 403, JSON.stringify(create.body));
  assert.is((await getJson(url(BASE), { headers: auth })).status, 403);

  assert.is((await getJson(url('/auth/test'), { headers: basic('alice', 'alice-secret') })).status, 200);
  assert.is((await getJson(url('/auth/test'), { headers: basic('alice', 'wrong') })).status, 401);
});

test('bob (in ops) may read checks; carol (in no group) logs in but may not', async () => {
  const bob = await login('bob', 'bob-secret');
  assert.is(bob.status, 200);
  const bobClaims = jwtPayload(bob.body.access_token);
  assert.is(bobClaims.sub, 'ldap:bob');
  assert.ok(bobClaims.groups.includes('ldap:ops'));
  assert.not.ok(bobClaims.groups.includes('ldap:dev'));
  assert.is(
    (await getJson(url('/api/core/v2/namespaces/default/checks'), { headers: bearer(bob.body.access_token) }))
      .status,
    200,
  );
  assert.is(
    (
      await getJson(url('/api/core/v2/namespaces/default/checks'), {
        method: 'POST',
        headers: bearer(bob.body.access_token),
        body: {
          metadata: { name: 'from-bob', namespace: 'default' },
          command: 'true',
          interval: 60,
          subscriptions: ['linux'],
        },
      })
    ).status,
    403,
  );

  const carol = await login('carol', 'carol-secret');
  assert.is(carol.status, 200);
  const carolClaims = jwtPayload(carol.body.access_token);
  assert.is(carolClaims.sub, 'ldap:carol');
  assert.not.ok(
    carolClaims.groups.some((g: string) => g.startsWith('ldap:')),
    `groups ${carolClaims.groups}`,
  );
  const auth = bearer(carol.body.access_token);
  assert.is((await getJson(url('/api/core/v2/namespaces/default/checks'), { headers: auth })).status, 403);
  const namespaces = await getJson(url('/api/core/v2/namespaces'), { headers: auth });
  assert.ok(
    namespaces.status === 403 || (namespaces.status === 200 && namespaces.body.length === 0),
    `namespaces: ${namespaces.status} ${JSON.stringify(namespaces.body)}`,
  );
  assert.is((await getJson(url('/auth/test'), { headers: basic('carol', 'carol-secret') })).status, 200);
});

test('wrong password, unknown user, empty password and filter characters are 401', async () => {
  for (const [user, password] of [
    ['alice', 'bob-secret'],
    ['alice', 'alice-secre'],
    ['mallory', 'alice-secret'],
    ['alice', ''],
    ['*', 'alice-secret'],
    ['alice)(uid=*', 'alice-secret'],
    ['', 'alice-secret'],
  ]) {
    const res = await login(user!, password!);
    assert.is(
      res.status,
      401,
      `${JSON.stringify(user)} / ${password ? 'a password' : 'empty password'}: ${res.status}`,
    );
    assert.type(res.body.message, 'string');
    assert.is((await getJson(url('/auth/test'), { headers: basic(user!, password!) })).status, 401);
  }
  assert.is((await getJson(url('/auth'))).status, 401);
});

test('a refresh re-reads the directory: a group taken away is gone from the new token; a refresh token works once', async () => {
  const first = await login('bob', 'bob-secret');
  assert.is(first.status, 200);
  assert.ok(jwtPayload(first.body.access_token).groups.includes('ldap:ops'));
  // The directory changes: bob leaves ops.
  const membership = async (operation: 'add' | 'delete') => {
    const ldap = new Client({ url: slapd.url });
    try {
      await ldap.bind(slapd.adminDn, slapd.adminPassword);
      await ldap.modify(
        `cn=ops,${slapd.groupsDn}`,
        new Change({
          operation,
          modification: new Attribute({ type: 'member', values: [`uid=bob,${slapd.peopleDn}`] }),
        }),
      );
    } finally {
      await ldap.unbind();
    }
  };
  await membership('delete');
  const refreshed = await getJson(url('/auth/token'), {
    method: 'POST',
    headers: bearer(first.body.access_token),
    body: { refresh_token: first.body.refresh_token },
  });
  assert.is(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.not.ok(
    jwtPayload(refreshed.body.access_token).groups.includes('ldap:ops'),
    'ops is gone after the refresh',
  );
  const again = await getJson(url('/auth/token'), {
    method: 'POST',
    headers: bearer(first.body.access_token),
    body: { refresh_token: first.body.refresh_token },
  });
  assert.is(again.status, 401, 'the old refresh token is spent');
  await membership('add');
});

test('a provider whose server is down, earlier in name order, does not stop alice; nor a down first server; an AD provider', async () => {
  const closed = await freePort(); // nothing listens there
  const { server, ...good } = slapdProvider('corp');
  const { server: _s, ...down } = slapdProvider('a-down', [server(closed)]);
  assert.is((await put('a-down', down)).status, 200);
  const res = await waitFor(
    async () => {
      const list = await admin(BASE);
      if (list.body.length !== 2) return undefined;
      return login('alice', 'alice-secret');
    },
    { timeoutMs: 10_000, what: 'both providers listed' },
  );
  assert.is(res.status, 200, JSON.stringify(res.body));
  assert.is(jwtPayload(res.body.access_token).provider, 'corp');
  const warned = await waitFor(
    () =>
      backend
        .logs()
        .find(
          (l) => l.provider === 'a-down' && /directory login failed/.test(String(l.msg ?? l.message ?? '')),
        ),
    { timeoutMs: 5000, what: 'a log line about the provider that is down' },
  );
  assert.match(JSON.stringify(warned), String(closed));

  // Inside one provider, too: the first server is down, the second answers.
  assert.is((await admin(`${BASE}/corp`, { method: 'DELETE' })).status, 204);
  assert.is((await admin(`${BASE}/a-down`, { method: 'DELETE' })).status, 204);
  const { server: _t, ...twoServers } = slapdProvider('corp', [server(closed), good.spec.servers[0]!]);
  assert.is((await put('corp', twoServers)).status, 200);
  const viaSecond = await waitFor(
    async () => {
      const r = await login('alice', 'alice-secret');
      return r.status === 200 ? r : undefined;
    },
    { timeoutMs: 10_000, what: 'alice to log in through the second server' },
  );
  assert.ok(jwtPayload(viaSecond.body.access_token).groups.includes('ldap:ops'));
  assert.is((await login('alice', 'wrong-secret')).status, 401);

  // An AD provider (slapd has no AD schema, so the user search is told to use uid and the group
  // search groupOfNames): found by account name, with or without the default UPN domain.
  const ad = slapdProvider('b-ad', [
    {
      ...server(slapd.port),
      default_upn_domain: 'monitor.test',
      user_search: { base_dn: slapd.peopleDn, attribute: 'uid' },
      group_search: { base_dn: slapd.groupsDn, object_class: 'groupOfNames' },
    },
  ]);
  const { server: _u, ...adProvider } = {
    ...ad,
    type: 'AD',
    spec: { ...ad.spec, username_prefix: 'ad', groups_prefix: 'ad' },
  };
  assert.is((await put('b-ad', adProvider)).status, 200);
  const viaAd = await waitFor(
    async () => {
      const r = await login('bob', 'bob-secret');
      return r.status === 200 && jwtPayload(r.body.access_token).provider === 'b-ad' ? r : undefined;
    },
    { timeoutMs: 10_000, what: 'bob to log in through the AD provider' },
  );
  assert.is(jwtPayload(viaAd.body.access_token).sub, 'ad:bob');
  assert.ok(jwtPayload(viaAd.body.access_token).groups.includes('ad:ops'));
  const upn = await login('bob@monitor.test', 'bob-secret');
  assert.is(upn.status, 200);
  assert.is(jwtPayload(upn.body.access_token).sub, 'ad:bob@monitor.test');
  assert.is((await login('bob', 'alice-secret')).status, 401);
  assert.is((await admin(`${BASE}/b-ad`, { method: 'DELETE' })).status, 204);

  // No log line of the backend carries a password.
  const text = backend.proc.lines().join('\n');
  for (const secret of ['alice-secret', 'bob-secret', 'carol-secret', slapd.bindPassword])
    assert.not.ok(text.includes(secret), `a log line holds ${secret}`);
});

test.run();
