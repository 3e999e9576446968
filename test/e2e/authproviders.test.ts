// suite-timeout: 180
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { getJson, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { bearer } from '../harness/api.ts';
import { BASE, providerCalls } from './authproviders/calls.ts';

// The authentication providers API (docs/compatibility.md#authentication-providers) on a backend with
// embedded etcd and NATS: create and replace with PUT, the defaults, validation, lists, and who may
// use it. Directory login through these providers is in authproviders-login.test.ts.

let backend: Backend;
const { url, admin, put, login } = providerCalls(() => backend);

/**
 * A directory provider with every field a provider has (docs/compatibility.md#authentication-providers;
 * the PUT example's shape, `type` spelled lower-case).
 */
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

function without(obj: unknown, path: string): Record<string, unknown> {
  const copy = structuredClone(obj) as Record<string, any>;
  const parts = path.replace('[]', '.0').split('.');
  let at = copy;
  for (const p of parts.slice(0, -1)) at = at[p];
  delete at[parts[parts.length - 1]!];
  return copy;
}

test.before(async () => {
  backend = await startBackend({ name: 'authproviders' });
});

test.after(async () => {
  await backend?.stop();
});

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

test.run();
