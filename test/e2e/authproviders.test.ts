// suite-timeout: 180
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { Attribute, Change, Client } from 'ldapts';
import {
  adminAuth,
  freePort,
  getJson,
  loud,
  startBackend,
  startSlapd,
  waitFor,
  type Backend,
  type Slapd,
} from '../harness/index.ts';

// The authentication providers API (docs/compatibility.md#authentication-providers) on a backend with embedded etcd
// and NATS, then directory login through `/auth` against a real slapd: tokens, groups with the
// provider's prefixes, RBAC on those groups, wrong credentials, and a provider whose server is down.

let backend: Backend;
let slapd: Slapd;
const BASE = '/api/enterprise/authentication/v2/authproviders';
const url = (path: string) => `${backend.apiUrl}${path}`;
const admin = (path: string, init: Parameters<typeof getJson>[1] = {}) =>
  getJson(url(path), {
    ...init,
    headers: { ...adminAuth, ...(init.headers as Record<string, string> | undefined) },
  });
const basic = (user: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });

/** A directory provider with every field a provider has (docs/compatibility.md#authentication-providers; the PUT example's shape, `type` spelled lower-case). */
function fullProvider(name: string, type = 'ldap') {
  return {
    type,
    api_version: 'authentication/v2',
    metadata: { name },
    spec: {
      servers: [
        {
          host: '127.0.0.1',
          port: 636,
          security: 'tls',
          insecure: false,
          trusted_ca_file: '/path/to/ca.pem',
          client_cert_file: '/path/to/client.pem',
          client_key_file: '/path/to/client-key.pem',
          default_upn_domain: 'example.org',
          binding: { user_dn: 'cn=binder,dc=acme,dc=org', password: 'YOUR_PASSWORD' },
          group_search: {
            base_dn: 'dc=acme,dc=org',
            attribute: 'member',
            name_attribute: 'cn',
            object_class: 'groupOfNames',
          },
          user_search: {
            base_dn: 'dc=acme,dc=org',
            attribute: 'uid',
            name_attribute: 'cn',
            object_class: 'person',
          },
        },
      ],
      groups_prefix: 'ldap',
      username_prefix: 'ldap',
    },
  };
}

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

const put = (name: string, body: unknown) =>
  admin(`${BASE}/${name}`, { method: 'PUT', body: body as object });

function without(obj: unknown, path: string): Record<string, unknown> {
  const copy = structuredClone(obj) as Record<string, any>;
  const parts = path.replace('[]', '.0').split('.');
  let at = copy;
  for (const p of parts.slice(0, -1)) at = at[p];
  delete at[parts[parts.length - 1]!];
  return copy;
}

const jwtPayload = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

async function login(user: string, password: string) {
  return getJson(url('/auth'), { headers: basic(user, password) });
}

test.before(
  loud(async () => {
    [backend, slapd] = await Promise.all([startBackend({ name: 'authproviders' }), startSlapd()]);
  }),
);

test.after(async () => {
  await Promise.allSettled([backend?.stop(), slapd?.stop()]);
});

// ---------------------------------------------------------------- the API

test('PUT creates (200), GET returns the provider with every field, PUT replaces (200)', async () => {
  const p = fullProvider('corp-ldap');
  const created = await put('corp-ldap', p);
  assert.is(created.status, 200, JSON.stringify(created.body));

  const got = await admin(`${BASE}/corp-ldap`);
  assert.is(got.status, 200);
  assert.is(got.body.type, 'ldap');
  assert.is(got.body.Type, undefined);
  assert.is(got.body.api_version, 'authentication/v2');
  assert.is(got.body.metadata.name, 'corp-ldap');
  assert.is(got.body.spec.groups_prefix, 'ldap');
  assert.is(got.body.spec.username_prefix, 'ldap');
  const srv = got.body.spec.servers[0];
  for (const [k, v] of Object.entries(p.spec.servers[0]!)) assert.equal(srv[k], v, `server field ${k}`);
  assert.is(srv.binding.password, 'YOUR_PASSWORD');

  const replacement = fullProvider('corp-ldap');
  replacement.spec.servers[0]!.host = 'ldap2.acme.org';
  replacement.spec.groups_prefix = 'corp';
  const replaced = await put('corp-ldap', replacement);
  assert.is(replaced.status, 200);
  const again = await admin(`${BASE}/corp-ldap`);
  assert.is(again.body.spec.servers[0].host, 'ldap2.acme.org');
  assert.is(again.body.spec.groups_prefix, 'corp');
  assert.is(again.body.spec.servers.length, 1);
});

test('GET and DELETE of a missing provider are 404; DELETE is 204 then 404', async () => {
  const missing = await admin(`${BASE}/no-such-provider`);
  assert.is(missing.status, 404);
  assert.type(missing.body.message, 'string');
  assert.is(missing.body.code, 2);
  assert.is((await admin(`${BASE}/no-such-provider`, { method: 'DELETE' })).status, 404);

  assert.is((await put('to-delete', fullProvider('to-delete'))).status, 200);
  const del = await admin(`${BASE}/to-delete`, { method: 'DELETE' });
  assert.is(del.status, 204);
  assert.is(del.body, '');
  assert.is((await admin(`${BASE}/to-delete`)).status, 404);
  assert.is((await admin(`${BASE}/to-delete`, { method: 'DELETE' })).status, 404);
});

test('DELETE through the alias /api/core/v2/namespaces/default/authproviders/:name', async () => {
  assert.is((await put('aliased', fullProvider('aliased'))).status, 200);
  const del = await admin('/api/core/v2/namespaces/default/authproviders/aliased', { method: 'DELETE' });
  assert.is(del.status, 204);
  assert.is((await admin(`${BASE}/aliased`)).status, 404);
  assert.is(
    (await admin('/api/core/v2/namespaces/default/authproviders/aliased', { method: 'DELETE' })).status,
    404,
  );
});

test('PUT with `Type` (the example spelling) is accepted and answered as `type`', async () => {
  const { type, ...rest } = fullProvider('spelled');
  const res = await put('spelled', { Type: type, ...rest });
  assert.is(res.status, 200, JSON.stringify(res.body));
  const got = await admin(`${BASE}/spelled`);
  assert.is(got.body.type, 'ldap');
  assert.not.ok('Type' in got.body);
});

test('a minimal PUT is answered with every server field, filled with the defaults the login uses', async () => {
  const minimal = {
    type: 'ldap',
    api_version: 'authentication/v2',
    metadata: { name: 'minimal' },
    spec: {
      servers: [
        {
          host: '127.0.0.1',
          binding: { user_dn: 'cn=x', password: 'y' },
          group_search: { base_dn: 'ou=groups' },
          user_search: { base_dn: 'ou=people' },
        },
      ],
    },
  };
  assert.is((await put('minimal', minimal)).status, 200);
  const srv = (await admin(`${BASE}/minimal`)).body.spec.servers[0];
  assert.equal(
    {
      port: srv.port,
      security: srv.security,
      insecure: srv.insecure,
      trusted_ca_file: srv.trusted_ca_file,
      client_cert_file: srv.client_cert_file,
      client_key_file: srv.client_key_file,
      default_upn_domain: srv.default_upn_domain,
    },
    {
      port: 636,
      security: 'tls',
      insecure: false,
      trusted_ca_file: '',
      client_cert_file: '',
      client_key_file: '',
      default_upn_domain: '',
    },
  );
  assert.equal(srv.user_search, {
    base_dn: 'ou=people',
    attribute: 'uid',
    object_class: 'person',
    name_attribute: 'cn',
  });
  assert.equal(srv.group_search, {
    base_dn: 'ou=groups',
    attribute: 'member',
    object_class: 'groupOfNames',
    name_attribute: 'cn',
  });
  assert.is((await admin(`${BASE}/minimal`, { method: 'DELETE' })).status, 204);
});

test('PUT missing any attribute the spec requires is a 400 naming it', async () => {
  const required = [
    'type',
    'api_version',
    'metadata.name',
    'spec.servers[].host',
    'spec.servers[].binding.user_dn',
    'spec.servers[].binding.password',
    'spec.servers[].group_search.base_dn',
    'spec.servers[].user_search.base_dn',
  ];
  for (const path of required) {
    const res = await put('incomplete', without(fullProvider('incomplete'), path));
    assert.is(res.status, 400, `${path}: ${res.status} ${JSON.stringify(res.body)}`);
    assert.type(res.body.message, 'string', path);
    assert.type(res.body.code, 'number', path);
    assert.ok(
      res.body.message.includes(path.replace('[]', '[0]')),
      `${path} not named in "${res.body.message}"`,
    );
  }
  assert.is((await admin(`${BASE}/incomplete`)).status, 404);
});

test('PUT with malformed JSON is a 400', async () => {
  const res = await admin(`${BASE}/broken`, {
    method: 'PUT',
    body: '{"type": "ldap", ',
    headers: { 'Content-Type': 'application/json' },
  });
  assert.is(res.status, 400);
  assert.type(res.body.message, 'string');
  assert.is(res.body.code, 1);
  assert.is((await admin(`${BASE}/broken`)).status, 404);
});

test('an OIDC provider is stored and listed; `types` filters the list; limit/continue page it', async () => {
  assert.is((await put('corp-ad', fullProvider('corp-ad', 'AD'))).status, 200);
  const oidc = {
    type: 'OIDC',
    api_version: 'authentication/v2',
    metadata: { name: 'corp-oidc' },
    spec: {
      client_id: 'monitor',
      client_secret: 'shh',
      server: 'https://idp.example.org',
      groups_prefix: 'oidc',
      username_prefix: 'oidc',
    },
  };
  const stored = await put('corp-oidc', oidc);
  assert.is(stored.status, 200, JSON.stringify(stored.body));
  assert.is((await admin(`${BASE}/corp-oidc`)).body.spec.client_id, 'monitor');

  const names = (body: Array<{ metadata: { name: string } }>) => body.map((p) => p.metadata.name).sort();
  const all = await admin(BASE);
  assert.is(all.status, 200);
  assert.equal(names(all.body), ['corp-ad', 'corp-ldap', 'corp-oidc', 'spelled']);
  const directory = await admin(`${BASE}?types=ldap&types=AD`);
  assert.equal(names(directory.body), ['corp-ad', 'corp-ldap', 'spelled']);
  assert.equal(names((await admin(`${BASE}?types=OIDC`)).body), ['corp-oidc']);
  assert.equal(names((await admin(`${BASE}?types=AD`)).body), ['corp-ad']);

  const seen: string[] = [];
  let token: string | null = null;
  let pages = 0;
  do {
    const res = await admin(`${BASE}?limit=3${token ? `&continue=${encodeURIComponent(token)}` : ''}`);
    assert.is(res.status, 200);
    assert.ok(res.body.length <= 3);
    seen.push(...res.body.map((p: { metadata: { name: string } }) => p.metadata.name));
    token = res.headers.get('Monitor-Continue');
    pages++;
  } while (token && pages < 10);
  assert.is(pages, 2);
  assert.equal([...seen].sort(), ['corp-ad', 'corp-ldap', 'corp-oidc', 'spelled']);
  assert.is(new Set(seen).size, seen.length, 'no provider on two pages');

  const filteredPage = await admin(`${BASE}?types=ldap&types=AD&limit=2`);
  assert.is(filteredPage.body.length, 2);
  const rest = await admin(
    `${BASE}?types=ldap&types=AD&limit=2&continue=${encodeURIComponent(filteredPage.headers.get('Monitor-Continue')!)}`,
  );
  assert.equal(names([...filteredPage.body, ...rest.body]), ['corp-ad', 'corp-ldap', 'spelled']);
  assert.is(rest.headers.get('Monitor-Continue'), null);
});

test('without credentials 401; as a user with only the view role 403', async () => {
  for (const [method, path] of [
    ['GET', BASE],
    ['GET', `${BASE}/corp-ldap`],
    ['PUT', `${BASE}/corp-ldap`],
    ['DELETE', `${BASE}/corp-ldap`],
  ] as const) {
    const res = await getJson(url(path), {
      method,
      ...(method === 'PUT' ? { body: fullProvider('corp-ldap') } : {}),
    });
    assert.is(res.status, 401, `${method} ${path}`);
    assert.type(res.body.message, 'string');
  }
  assert.is((await getJson(url(BASE), { headers: { Authorization: 'Key not-a-key' } })).status, 401);

  const user = await admin('/api/core/v2/users', {
    method: 'POST',
    body: { username: 'viewer', password: 'viewer-password', groups: ['viewers'] },
  });
  assert.ok(
    user.status === 201 || user.status === 200,
    `create user: ${user.status} ${JSON.stringify(user.body)}`,
  );
  const crb = await admin('/api/core/v2/clusterrolebindings/viewers-view', {
    method: 'PUT',
    body: {
      metadata: { name: 'viewers-view' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'Group', name: 'viewers' }],
    },
  });
  assert.ok(crb.status < 300, `binding: ${crb.status} ${JSON.stringify(crb.body)}`);
  const tokens = await waitFor(
    async () => {
      const r = await login('viewer', 'viewer-password');
      return r.status === 200 ? r.body : undefined;
    },
    { timeoutMs: 10_000, what: 'the viewer to log in' },
  );
  const auth = bearer(tokens.access_token);
  // the view role does work where it applies...
  await waitFor(
    async () =>
      (await getJson(url('/api/core/v2/namespaces/default/checks'), { headers: auth })).status === 200,
    { timeoutMs: 10_000, what: 'the viewer binding to take effect' },
  );
  // ...but not on authentication providers
  for (const [method, path] of [
    ['GET', BASE],
    ['GET', `${BASE}/corp-ldap`],
    ['PUT', `${BASE}/corp-ldap`],
    ['DELETE', `${BASE}/corp-ldap`],
    ['DELETE', '/api/core/v2/namespaces/default/authproviders/corp-ldap'],
  ] as const) {
    const res = await getJson(url(path), {
      method,
      headers: auth,
      ...(method === 'PUT' ? { body: fullProvider('corp-ldap') } : {}),
    });
    assert.is(res.status, 403, `${method} ${path}: ${res.status}`);
    assert.type(res.body.message, 'string');
  }
  assert.is((await admin(`${BASE}/corp-ldap`)).status, 200, 'still there');
});

// ---------------------------------------------------------------- directory login

test('directory login: a provider for slapd, and a view binding for the group ldap:ops', async () => {
  // Only the providers of this part: the ones above point at hosts that do not exist.
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
