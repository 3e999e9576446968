// suite-timeout: 240
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import {
  getJson,
  OIDC_CLIENT,
  OIDC_USERS,
  startBackend,
  startOidcProvider,
  stopAndAssertNoSecret,
  type Backend,
  type OidcServer,
} from '../harness/index.ts';
import { bearer } from '../harness/api.ts';
import { BASE, providerCalls } from './authproviders/calls.ts';
import { Browser } from './oidc/browse.ts';

// OIDC login (docs/compatibility.md#oidc) end to end against a real OpenID Provider process (the
// `oidc-provider` library, test/fixtures/oidc-provider.ts): the authorization-code flow with PKCE
// driven by an HTTP client with a cookie jar that follows every redirect, the provider checking the
// code verifier, groups mapped with the prefixes and RBAC applied, refusals of a tampered state,
// nonce, code challenge or code, and the client secret kept out of reads and logs.

const OIDC = '/api/enterprise/authentication/v2/oidc';
const CALLBACK = `${OIDC}/callback`;

let backend: Backend;
let idp: OidcServer;
const { url, admin, put } = providerCalls(() => backend);
const api = (path: string) => new URL(url(path));

const provider = (spec: Record<string, unknown> = {}) => ({
  type: 'OIDC',
  api_version: 'authentication/v2',
  metadata: { name: 'corp' },
  spec: {
    client_id: OIDC_CLIENT.id,
    client_secret: OIDC_CLIENT.secret,
    server: idp.issuer,
    redirect_uri: url(CALLBACK),
    additional_scopes: ['email', 'profile', 'groups'],
    username_claim: 'preferred_username',
    groups_claim: 'groups',
    username_prefix: 'oidc',
    groups_prefix: 'oidc',
    disable_offline_access: true,
    ...spec,
  },
});

const jwtPayload = (token: string) =>
  JSON.parse(Buffer.from(token.split('.')[1]!, 'base64url').toString('utf8'));

/**
 * A browser's way to our callback: our authorize route, the provider's login form (filled in as
 * `user`), and back; stops before the callback. `tamper` rewrites the provider's authorization URL.
 */
async function toCallback(
  user: keyof typeof OIDC_USERS,
  tamper?: (u: URL) => void,
  b = new Browser(),
  providerName = 'corp',
) {
  const rewrite = (u: URL) => {
    if (!tamper || u.origin !== idp.issuer || u.pathname !== '/auth') return u;
    const copy = new URL(u);
    tamper(copy);
    return copy;
  };
  const toForm = await b.follow(api(`${OIDC}/authorize?provider=${providerName}`), {
    rewrite,
    stopAt: (u) => u.pathname.startsWith('/interaction/'),
  });
  assert.ok(toForm.stopped, `no login form: ${toForm.res.status} ${await toForm.res.text()}`);
  const form = toForm.stopped!;
  assert.is((await b.fetch(form)).status, 200, 'the provider shows its login form');
  const back = await b.follow(new URL(`${form.pathname}/login`, form), {
    method: 'POST',
    form: { login: user, password: OIDC_USERS[user] },
    stopAt: (u) => u.pathname === CALLBACK,
  });
  assert.ok(back.stopped, `not sent back: ${back.res.status} ${await back.res.text()}`);
  return { browser: b, callback: back.stopped! };
}

/** The callback's answer, then the tokens the dashboard collects with the handoff key. */
async function finish(b: Browser, callback: URL) {
  const res = await b.fetch(callback);
  const text = await res.text();
  assert.is(res.status, 302, `callback answered ${res.status} ${text}`);
  const location = new URL(res.headers.get('Location')!, callback);
  assert.is(location.pathname, '/');
  const params = new URLSearchParams(location.hash.slice(location.hash.indexOf('?') + 1));
  const handoff = params.get('oidc_handoff')!;
  assert.ok(handoff, `no handoff in ${location.hash}`);
  const taken = await b.fetch(api(`${OIDC}/handoff`), { method: 'POST', json: { handoff } });
  return { handoff, status: taken.status, body: (await taken.json()) as Record<string, any> };
}

async function signIn(user: keyof typeof OIDC_USERS) {
  const { browser, callback } = await toCallback(user);
  const done = await finish(browser, callback);
  assert.is(done.status, 200, JSON.stringify(done.body));
  return { ...done, browser };
}

/** A refused callback: its status and `{message, code}`. */
async function refused(b: Browser, callback: URL, headers?: Record<string, string>) {
  const res = await b.fetch(callback, { headers });
  return {
    status: res.status,
    location: res.headers.get('Location'),
    body: (await res.json().catch(() => ({}))) as Record<string, any>,
  };
}

test.before(async () => {
  backend = await startBackend({ name: 'oidc-login' });
  idp = await startOidcProvider([url(CALLBACK)]);
});

test.after(async () => {
  await Promise.allSettled([backend?.stop(), idp?.stop()]);
});

test('an OIDC provider is configured through the providers API; reads leave out client_secret', async () => {
  const res = await put('corp', provider());
  assert.is(res.status, 200, JSON.stringify(res.body));
  const one = await admin(`${BASE}/corp`);
  assert.is(one.status, 200);
  assert.is(one.body.type, 'oidc');
  assert.is(one.body.spec.client_id, OIDC_CLIENT.id);
  assert.is(one.body.spec.username_claim, 'preferred_username');
  assert.not.ok('client_secret' in one.body.spec, 'GET shows no client secret');
  const list = await admin(BASE);
  assert.not.ok(JSON.stringify(list.body).includes(OIDC_CLIENT.secret), 'the list shows no client secret');
  const withSecrets = await admin(`${BASE}/corp?include_secrets=true`);
  assert.is(withSecrets.body.spec.client_secret, OIDC_CLIENT.secret, 'an administrator may ask for it');

  // What a read gives back, written again: the stored secret stays (the logins below use it).
  const again = await put('corp', { ...one.body, spec: { ...one.body.spec } });
  assert.is(again.status, 200, JSON.stringify(again.body));
  assert.is((await admin(`${BASE}/corp?include_secrets=true`)).body.spec.client_secret, OIDC_CLIENT.secret);

  const binding = await admin('/api/core/v2/clusterrolebindings/oidc-ops-view', {
    method: 'PUT',
    body: {
      metadata: { name: 'oidc-ops-view' },
      role_ref: { type: 'ClusterRole', name: 'view' },
      subjects: [{ type: 'Group', name: 'oidc:ops' }],
    },
  });
  assert.ok(binding.status < 300, JSON.stringify(binding.body));
});

test('an OIDC provider with a plain-http server off loopback, or without client_id, is refused with 400', async () => {
  const http = await put('bad', {
    ...provider({ server: 'http://idp.example.org' }),
    metadata: { name: 'bad' },
  });
  assert.is(http.status, 400);
  assert.match(http.body.message, /spec\.server must be an https URL/);
  const { client_id: _id, ...noId } = provider().spec;
  const missing = await put('bad', { ...provider(), metadata: { name: 'bad' }, spec: noId });
  assert.is(missing.status, 400);
  assert.match(missing.body.message, /client_id/);
  assert.is((await admin(`${BASE}/bad`)).status, 404);
});

test('GET /auth/methods (public) names the OIDC provider and its authorize route, without secrets', async () => {
  const res = await getJson(url('/auth/methods'));
  assert.is(res.status, 200);
  assert.equal(res.body, {
    password: true,
    oidc: [{ name: 'corp', authorize: `${OIDC}/authorize?provider=corp` }],
  });
});

test('alice signs in through the provider: prefixed name and groups, RBAC through oidc:ops, a refresh', async () => {
  const { body, handoff, browser } = await signIn('alice');
  assert.is(body.username, 'oidc:alice');
  const claims = jwtPayload(body.access_token);
  assert.is(claims.sub, 'oidc:alice');
  assert.equal([...claims.groups].sort(), ['oidc:dev', 'oidc:ops', 'system:users']);
  assert.is(claims.provider, 'corp');
  const checks = await getJson(url('/api/core/v2/namespaces/default/checks'), {
    headers: bearer(body.access_token),
  });
  assert.is(checks.status, 200, JSON.stringify(checks.body));
  const write = await getJson(url('/api/core/v2/namespaces/default/checks'), {
    method: 'POST',
    headers: bearer(body.access_token),
    body: {
      metadata: { name: 'x', namespace: 'default' },
      command: 'true',
      interval: 60,
      subscriptions: ['a'],
    },
  });
  assert.is(write.status, 403, 'view does not create');

  const again = await browser.fetch(api(`${OIDC}/handoff`), { method: 'POST', json: { handoff } });
  assert.is(again.status, 401, 'a handoff key works once');

  const refreshed = await getJson(url('/auth/token'), {
    method: 'POST',
    headers: bearer(body.access_token),
    body: { refresh_token: body.refresh_token },
  });
  assert.is(refreshed.status, 200, JSON.stringify(refreshed.body));
  assert.ok(jwtPayload(refreshed.body.access_token).groups.includes('oidc:ops'));
});

test('bob (groups claim: dev only) signs in but may not read checks: 403', async () => {
  const { body } = await signIn('bob');
  assert.is(body.username, 'oidc:bob');
  assert.equal([...jwtPayload(body.access_token).groups].sort(), ['oidc:dev', 'system:users']);
  const checks = await getJson(url('/api/core/v2/namespaces/default/checks'), {
    headers: bearer(body.access_token),
  });
  assert.is(checks.status, 403);
});

test('a tampered state is refused with 400 naming it; the callback works once', async () => {
  const { browser, callback } = await toCallback('alice');
  const tampered = new URL(callback);
  tampered.searchParams.set('state', `${callback.searchParams.get('state')}x`);
  const bad = await refused(browser, tampered);
  assert.is(bad.status, 400);
  assert.match(bad.body.message, /unknown, used or expired OIDC login state/);
  assert.is(bad.body.code, 1);
  assert.is((await finish(browser, callback)).status, 200, 'the real state still works');
  const replay = await refused(browser, callback);
  assert.is(replay.status, 400, 'a callback replayed');
});

test('a callback in another browser (no matching cookie) is refused', async () => {
  const { callback } = await toCallback('alice');
  const bad = await refused(new Browser(), callback);
  assert.is(bad.status, 400);
  assert.match(bad.body.message, /started in another browser/);
});

test("a wrong code is refused with 401 and the provider's invalid_grant", async () => {
  const { browser, callback } = await toCallback('alice');
  const wrong = new URL(callback);
  wrong.searchParams.set('code', 'not-the-code');
  const bad = await refused(browser, wrong);
  assert.is(bad.status, 401, JSON.stringify(bad.body));
  assert.match(bad.body.message, /OIDC login with "corp" failed: invalid_grant/);
  assert.is(bad.body.code, 5);
});

test('a tampered nonce is refused: the ID token names another nonce', async () => {
  const { browser, callback } = await toCallback('alice', (u) => u.searchParams.set('nonce', 'forged-nonce'));
  const bad = await refused(browser, callback);
  assert.is(bad.status, 401, JSON.stringify(bad.body));
  assert.match(bad.body.message, /nonce/);
});

test('a tampered PKCE code challenge makes the provider refuse our verifier: invalid_grant', async () => {
  const { browser, callback } = await toCallback('alice', (u) =>
    u.searchParams.set('code_challenge', 'A'.repeat(43)),
  );
  const bad = await refused(browser, callback);
  assert.is(bad.status, 401, JSON.stringify(bad.body));
  assert.match(bad.body.message, /invalid_grant/);
});

test('an ID token signed with a key the provider does not publish is refused with 401', async () => {
  // A provider configured afresh fetches the key set at its first login: here, one with a decoy key
  // under the signing key's kid (test/fixtures/oidc-provider.ts).
  const res = await put('forged', { ...provider(), metadata: { name: 'forged' } });
  assert.is(res.status, 200, JSON.stringify(res.body));
  const decoy = (body: string) =>
    fetch(`${idp.issuer}/test/decoy-jwks`, {
      method: 'POST',
      headers: { 'Content-Type': 'application/x-www-form-urlencoded' },
      body,
    });
  assert.is((await decoy('')).status, 204);
  try {
    const { browser, callback } = await toCallback('alice', undefined, new Browser(), 'forged');
    const bad = await refused(browser, callback);
    assert.is(bad.status, 401, JSON.stringify(bad.body));
    assert.match(bad.body.message, /OIDC login with "forged" failed: .*signature/i);
    assert.not.ok('access_token' in bad.body);
  } finally {
    await decoy('off');
  }
});

test('a browser (Accept: text/html) refused at the callback is sent to the sign-in page with the message', async () => {
  const { browser, callback } = await toCallback('alice');
  const tampered = new URL(callback);
  tampered.searchParams.set('state', 'forged');
  const bad = await refused(browser, tampered, { Accept: 'text/html' });
  assert.is(bad.status, 302);
  const to = new URL(bad.location!, callback);
  assert.is(to.pathname, '/');
  assert.match(
    decodeURIComponent(to.hash),
    /^#\/signin\?oidc_error=unknown, used or expired OIDC login state/,
  );
});

test('the client secret is in no line the backend wrote', async () => {
  await stopAndAssertNoSecret(backend, [OIDC_CLIENT.secret]);
  const lines = backend.logs();
  assert.ok(
    lines.some((l) => l.msg === 'OIDC login' && l.username === 'oidc:alice'),
    'logins are logged',
  );
});

test.run();
