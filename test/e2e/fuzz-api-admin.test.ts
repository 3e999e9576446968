// suite-timeout: 240
import { randomBytes, scryptSync } from 'node:crypto';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import fc from 'fast-check';
import { ADMIN, getJson, startBackend, waitFor, type Backend } from '../harness/index.ts';
import { answered, basic, bearer, coreApi } from '../harness/api.ts';
import { bodyText, fuzz } from '../harness/fuzz.ts';

// Fuzzing the administrative REST surfaces of one real backend (issue 13), as fuzz-api.test.ts does
// the resource kinds: namespace, user, password and API key bodies, authentication providers, the
// check extras (ad hoc execution, hooks), and the auth routes (Basic credentials, refresh bodies).
// Every answer is a success or a 4xx `{message, code}`, never a 5xx; a refused write changes nothing
// (lists hold only what was there plus what was accepted; a refused password change leaves the old
// password working); the backend keeps serving, and the administrator still logs in. Each request is
// bounded by the harness's per-request timeout. The administrator's user and API key are never
// written: the fuzzed writes go to users, keys and providers of the suite's own (fz-...).

const NAMESPACE_RUNS = 2_000;
const USER_RUNS = 1_000;
const KEY_RUNS = 1_000;
const CHECK_RUNS = 2_000;
const LOGIN_RUNS = 500;
const REFRESH_RUNS = 2_000;
const PROVIDER_RUNS = 3_000;

let backend: Backend;
const api = coreApi(() => backend);
const PROVIDERS = '/api/enterprise/authentication/v2/authproviders';

const USER = 'fz-user';
const PASSWORD = 'fz-P@ssw0rd';

/**
 * A password hash in the backend's stored format (gateway/auth/passwords.ts) at a low cost: the
 * suite checks thousands of logins of its user, right and wrong, and the backend's own cost would
 * make each wrong one take a tenth of a second.
 */
function cheapHash(password: string): string {
  const [N, r, p] = [1024, 8, 1];
  const salt = randomBytes(16);
  const hash = scryptSync(password, salt, 32, { N, r, p });
  return ['scrypt', N, r, p, salt.toString('base64'), hash.toString('base64')].join('$');
}
const HASH = cheapHash(PASSWORD);
const CANONICAL = { username: USER, password_hash: HASH, groups: ['fz'], disabled: false };

const CHECK = {
  metadata: { name: 'fz-check', namespace: 'default' },
  command: 'true',
  interval: 60,
  subscriptions: ['linux'],
};

/** The API key the suite fuzzes PATCH bodies on (the harness's own key is never written). */
let fzKey = '';

test.before(async () => {
  // Failed logins would block the suite's user name and the loopback address after a few (10 and 50
  // by default), and every later login would be a 429 before any password is checked: the answers
  // the fuzzing is after would go unseen. The limits have their own suite (login-limits.test.ts).
  backend = await startBackend({
    name: 'fuzz-api-admin',
    extraArgs: ['--login-user-failures', '0', '--login-address-failures', '0'],
  });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
  const writes: Array<[string, string, unknown]> = [
    [`/users/${USER}`, 'PUT', CANONICAL],
    ['/namespaces/default/checks/fz-check', 'PUT', CHECK],
  ];
  for (const [path, method, body] of writes) {
    const r = await api(path, method, body);
    assert.ok(r.status >= 200 && r.status < 300, `${method} ${path}: ${r.status} ${JSON.stringify(r.body)}`);
  }
  const key = await api('/apikeys', 'POST', { username: USER });
  assert.is(key.status, 201, `POST /apikeys: ${JSON.stringify(key.body)}`);
  fzKey = key.headers.get('location')!.split('/').at(-1)!;
});

test.after(async () => {
  await backend?.stop();
});

const json = (text: string): any => {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
};
const send = (path: string, method: string, text: string) =>
  api(path, method, text, { 'Content-Type': 'application/json' });
const loginAs = (user: string, password: string) =>
  getJson(`${backend.apiUrl}/auth/test`, { headers: basic(user, password) });
const what = (method: string, path: string, text: string) => `${method} ${path} ${text.slice(0, 300)}`;
/**
 * What a GET answers, to compare before and after a refused write; the body as JSON text, since
 * uvu's deep equality tells apart objects with equal own `constructor` keys.
 */
const snapshot = async (path: string) => {
  const r = path.startsWith(PROVIDERS) ? await backend.get(path) : await api(path);
  return { status: r.status, body: JSON.stringify(r.body) };
};

/** Names of what a list holds. */
async function names(path: string, name: (x: any) => string): Promise<string[]> {
  const r = path.startsWith(PROVIDERS) ? await backend.get(path) : await api(path);
  assert.is(r.status, 200, `list ${path}`);
  return (r.body as unknown[]).map(name).sort();
}

/** How many cases of a surface were accepted, printed: a run that accepts none tests little. */
const tally = (surface: string, accepted: number, runs: number) =>
  process.stdout.write(`${surface}: ${accepted} of ${runs} accepted\n`);

function onlyAccepted(before: string[], accepted: Set<string>, after: string[], what: string) {
  const allowed = new Set([...before, ...accepted]);
  assert.equal(
    after.filter((n) => !allowed.has(n)),
    [],
    `${what}: only accepted writes are stored`,
  );
}

/** A body's possible names, flat or wrapped (`{type, api_version, metadata, spec}`). */
const namesIn = (j: any, field: string): string[] =>
  [j?.[field], j?.metadata?.[field], j?.spec?.[field], j?.spec?.metadata?.[field]].filter(
    (x): x is string => typeof x === 'string',
  );

test(`namespaces: ${NAMESPACE_RUNS.toLocaleString('en')} POST /namespaces and PUT /namespaces/:name bodies are accepted or a 4xx {message, code}; refused ones store nothing`, async () => {
  const list = () => names('/namespaces', (x) => x.name);
  const before = await list();
  const accepted = new Set<string>();
  let n = 0;
  await fuzz(
    'namespace bodies',
    fc.asyncProperty(
      fc.boolean(),
      fc.oneof(bodyText({ name: 'fz-ns' }), bodyText({ metadata: { name: 'fz-ns' } })),
      async (put, text) => {
        const [method, path] = put ? ['PUT', '/namespaces/fz-ns'] : ['POST', '/namespaces'];
        const old = await snapshot('/namespaces/fz-ns');
        if (answered(await send(path, method, text), what(method, path, text))) {
          n++;
          if (put) accepted.add('fz-ns');
          for (const n of namesIn(json(text), 'name')) accepted.add(n);
        } else
          assert.equal(await snapshot('/namespaces/fz-ns'), old, `${what(method, path, text)}: unchanged`);
      },
    ),
    NAMESPACE_RUNS,
  );
  tally('namespaces', n, NAMESPACE_RUNS);
  onlyAccepted(before, accepted, await list(), 'namespaces');
});

/** Hash-shaped text: the stored format's fields (`scrypt$N$r$p$salt$hash`) with odd values, or more or fewer of them. */
const costText = fc.oneof(
  fc.constantFrom('0', '1', '2', '3', '8', '16', '1000', '1024', '16384', '-1', '1e3', '0x10', 'NaN', ''),
  fc.nat({ max: 1 << 14 }).map(String),
);
const hashText: fc.Arbitrary<string> = fc.oneof(
  fc
    .tuple(
      costText,
      fc.constantFrom('1', '8', '16', '0', '-8', 'x'),
      fc.constantFrom('1', '2', '0', '-1'),
      fc.base64String({ maxLength: 32 }),
      fc.base64String({ maxLength: 64 }),
    )
    .map((parts) => ['scrypt', ...parts].join('$')),
  fc
    .array(fc.oneof(costText, fc.base64String({ maxLength: 16 }), fc.string({ maxLength: 6 })), {
      maxLength: 7,
    })
    .map((parts) => ['scrypt', ...parts].join('$')),
);

/** A user write: its route, a valid body, and how often it is picked (the ones in clear text cost a hash each). */
const USER_WRITES: Array<{ method: string; path: string; valid: Record<string, unknown>; weight: number }> = [
  {
    method: 'POST',
    path: '/users',
    valid: { username: 'fz-new', password_hash: HASH, groups: ['fz'] },
    weight: 4,
  },
  { method: 'PUT', path: `/users/${USER}`, valid: CANONICAL, weight: 4 },
  { method: 'PUT', path: `/users/${USER}`, valid: { username: USER, password: PASSWORD }, weight: 1 },
  { method: 'PUT', path: `/users/${USER}/password`, valid: { password_hash: HASH }, weight: 4 },
  { method: 'PUT', path: `/users/${USER}/reset_password`, valid: { password_new: PASSWORD }, weight: 1 },
  {
    method: 'PUT',
    path: `/users/${USER}/change_password`,
    valid: { username: USER, password: PASSWORD, password_new: PASSWORD },
    weight: 1,
  },
];
const userWrite = fc.oneof(
  ...USER_WRITES.map((w) => ({
    weight: w.weight,
    arbitrary: fc.tuple(
      fc.constant(w),
      'password_hash' in w.valid
        ? fc.oneof(
            { weight: 7, arbitrary: bodyText(w.valid) },
            { weight: 2, arbitrary: hashText.map((h) => JSON.stringify({ ...w.valid, password_hash: h })) },
          )
        : bodyText(w.valid),
    ),
  })),
);

/** The user a body names, as the API reads it (flat, or the `spec` of the wrapped form). */
function usernameIn(j: any): string | undefined {
  const wrapped =
    j?.spec &&
    typeof j.spec === 'object' &&
    !Array.isArray(j.spec) &&
    (typeof j.type === 'string' || typeof j.api_version === 'string');
  const u = (wrapped ? j.spec : j)?.username;
  return typeof u === 'string' ? u : undefined;
}

test(`users: ${USER_RUNS.toLocaleString('en')} user and password bodies (POST /users, PUT /users/:name, /password, /reset_password, /change_password) are accepted or a 4xx {message, code}; a refused one leaves the user and its password as they were`, async () => {
  const list = () => names('/users', (x) => x.username);
  const before = await list();
  const accepted = new Set<string>();
  const view = { username: USER, groups: CANONICAL.groups, disabled: false };
  let n = 0;
  await fuzz(
    'user bodies',
    fc.asyncProperty(userWrite, async ([w, text]) => {
      const case_ = what(w.method, w.path, text);
      if (answered(await send(w.path, w.method, text), case_)) {
        n++;
        const user = w.method === 'POST' ? usernameIn(json(text)) : USER;
        if (user === undefined) return;
        accepted.add(user);
        // Whatever the write stored, logging in as that user is answered, and a wrong password is refused.
        const right = await loginAs(user, PASSWORD);
        assert.ok(
          [200, 401].includes(right.status),
          `${case_}: login ${right.status} ${JSON.stringify(right.body)}`,
        );
        const wrong = await loginAs(user, 'fz-wrong-password');
        assert.is(wrong.status, 401, `${case_}: a wrong password is refused, got ${wrong.status}`);
        if (user === USER) {
          const r = await api(`/users/${USER}`, 'PUT', CANONICAL);
          assert.is(r.status, 201, `${USER} reset: ${JSON.stringify(r.body)}`);
        }
      } else if (w.method !== 'POST') {
        assert.equal(
          await snapshot(`/users/${USER}`),
          { status: 200, body: JSON.stringify(view) },
          `${case_}: unchanged`,
        );
        const login = await loginAs(USER, PASSWORD);
        assert.is(login.status, 200, `${case_}: the old password still logs in`);
      }
    }),
    USER_RUNS,
  );
  tally('users', n, USER_RUNS);
  onlyAccepted(before, accepted, await list(), 'users');
});

test(`API keys: ${KEY_RUNS.toLocaleString('en')} POST /apikeys and PATCH /apikeys/:key bodies are accepted or a 4xx {message, code}; refused ones store nothing`, async () => {
  const list = async () => {
    const r = await api<Array<{ metadata: { name: string }; username: string }>>('/apikeys');
    assert.is(r.status, 200, 'list /apikeys');
    return new Map(r.body.map((k) => [k.metadata.name, k.username]));
  };
  const before = await list();
  const posted: string[] = [];
  let patched = 0;
  await fuzz(
    'API key bodies',
    fc.asyncProperty(fc.boolean(), bodyText({ username: USER }), async (patch, text) => {
      const [method, path] = patch ? ['PATCH', `/apikeys/${fzKey}`] : ['POST', '/apikeys'];
      const old = await snapshot(`/apikeys/${fzKey}`);
      const r = await api(path, method, text, {
        'Content-Type': patch ? 'application/merge-patch+json' : 'application/json',
      });
      if (answered(r, what(method, path, text))) {
        if (patch) patched++;
        else posted.push(usernameIn(json(text))!);
      } else assert.equal(await snapshot(`/apikeys/${fzKey}`), old, `${what(method, path, text)}: unchanged`);
    }),
    KEY_RUNS,
  );
  tally('API keys', posted.length + patched, KEY_RUNS);
  const after = await list();
  for (const [k, user] of before)
    if (k !== fzKey) assert.is(after.get(k), user, `the key of ${user} is as it was`);
  const added = [...after].filter(([k]) => !before.has(k)).map(([, user]) => user);
  assert.equal(added.sort(), posted.sort(), 'one key for each accepted POST, of its user');
});

test(`check extras: ${CHECK_RUNS.toLocaleString('en')} ad hoc execution and check hook bodies are accepted or a 4xx {message, code}; refused ones leave the check unchanged`, async () => {
  const CHECK_PATH = '/namespaces/default/checks/fz-check';
  const hookType = fc.constantFrom(...'ok warning critical unknown non-zero 1 255 256 x'.split(' '));
  const write = fc.oneof(
    fc
      .oneof(
        {
          weight: 6,
          arbitrary: bodyText({ check: 'fz-check', subscriptions: ['linux'], creator: 'fz', reason: 'fuzz' }),
        },
        { weight: 1, arbitrary: fc.constantFrom('', ' ', '\n') },
      )
      .map((text) => ({ path: `${CHECK_PATH}/execute`, method: 'POST', text })),
    hookType.chain((type) =>
      bodyText({ type, hooks: ['fz-hook'] }).map((text) => ({
        path: `${CHECK_PATH}/hooks/${encodeURIComponent(type)}`,
        method: 'PUT',
        text,
      })),
    ),
  );
  let n = 0;
  await fuzz(
    'check extras bodies',
    fc.asyncProperty(write, async ({ path, method, text }) => {
      const old = await snapshot(CHECK_PATH);
      const r = await send(path, method, text);
      if (answered(r, what(method, path, text))) {
        n++;
        if (method === 'POST') assert.type(r.body.issued, 'number', `${what(method, path, text)}: {issued}`);
      } else assert.equal(await snapshot(CHECK_PATH), old, `${what(method, path, text)}: unchanged`);
    }),
    CHECK_RUNS,
  );
  tally('check extras', n, CHECK_RUNS);
});

/** Header text: any byte a header value may carry (no CR, LF or NUL; fetch refuses those). */
const headerText = fc.string({
  unit: fc
    .oneof(fc.integer({ min: 0x20, max: 0x7e }), fc.integer({ min: 0x80, max: 0xff }), fc.constant(9))
    .map((c) => String.fromCharCode(c)),
  maxLength: 40,
});
const toBase64 = (s: string | Uint8Array) => Buffer.from(s).toString('base64');
/** The credentials the backend reads from an Authorization header (gateway/api/routes/auth.ts). */
const basicOf = (h: string | undefined) =>
  h && /^basic /i.test(h.trim())
    ? Buffer.from(h.trim().slice(6).trim(), 'base64').toString('utf8')
    : undefined;

test(`logins: ${LOGIN_RUNS.toLocaleString('en')} GET /auth and /auth/test with arbitrary Authorization headers answer 200 for the right password only, else a 4xx {message, code}`, async () => {
  const authorization = fc.oneof(
    {
      weight: 4,
      arbitrary: fc
        .tuple(
          // Unknown users cost a full password hash each (the dummy's): fewer of those.
          fc.oneof(
            { weight: 4, arbitrary: fc.constant(USER) },
            fc.constant('fz-nobody'),
            fc.string({ maxLength: 10 }),
          ),
          fc.oneof(fc.constant(PASSWORD), fc.string({ maxLength: 20 }), mutatedText(PASSWORD)),
        )
        .map(([u, p]) => `Basic ${toBase64(`${u}:${p}`)}`),
    },
    { weight: 2, arbitrary: fc.uint8Array({ maxLength: 40 }).map((b) => `Basic ${toBase64(b)}`) },
    { weight: 2, arbitrary: headerText.map((t) => `Basic ${t}`) },
    { weight: 1, arbitrary: headerText },
    { weight: 1, arbitrary: fc.constant(undefined) },
  );
  let n = 0;
  await fuzz(
    'logins',
    fc.asyncProperty(fc.constantFrom('/auth', '/auth/test'), authorization, async (path, h) => {
      const r = await getJson(`${backend.apiUrl}${path}`, {
        headers: h === undefined ? {} : { Authorization: h },
      });
      const case_ = `GET ${path} Authorization: ${JSON.stringify(h)}`;
      if (answered(r, case_)) {
        n++;
        assert.is(basicOf(h), `${USER}:${PASSWORD}`, `${case_}: 200 for the right password only`);
        if (path === '/auth') assert.type(r.body.access_token, 'string', `${case_}: tokens`);
      }
    }),
    LOGIN_RUNS,
  );
  tally('logins', n, LOGIN_RUNS);
});

function mutatedText(s: string): fc.Arbitrary<string> {
  return fc
    .tuple(fc.nat({ max: s.length }), fc.nat({ max: 2 }), fc.string({ maxLength: 2 }))
    .map(([at, cut, add]) => s.slice(0, at) + add + s.slice(at + cut));
}

test(`token refresh: ${REFRESH_RUNS.toLocaleString('en')} POST /auth/token bodies and access tokens are answered with new tokens or a 4xx {message, code}; a refused refresh leaves the refresh token working`, async () => {
  const login = await getJson(`${backend.apiUrl}/auth`, { headers: basic(USER, PASSWORD) });
  assert.is(login.status, 200, 'login');
  let pair = login.body as { access_token: string; refresh_token: string };
  const PLACE = 'fz-refresh-token';
  const refresh = (text: string, auth: string | undefined) =>
    getJson(`${backend.apiUrl}/auth/token`, {
      method: 'POST',
      body: text,
      headers: { 'Content-Type': 'application/json', ...(auth === undefined ? {} : { Authorization: auth }) },
    });
  const access = fc.oneof(
    { weight: 3, arbitrary: fc.constant('current') },
    { weight: 1, arbitrary: headerText.map((t) => `Bearer ${t}`) },
    { weight: 1, arbitrary: fc.option(headerText, { nil: undefined }) },
  );
  let n = 0;
  await fuzz(
    'token refresh',
    fc.asyncProperty(access, bodyText({ refresh_token: PLACE }), async (a, template) => {
      const text = template.split(PLACE).join(pair.refresh_token);
      const auth = a === 'current' ? bearer(pair.access_token).Authorization : a;
      const r = await refresh(text, auth);
      const case_ = `POST /auth/token Authorization: ${JSON.stringify(a)} ${template.slice(0, 300)}`;
      if (answered(r, case_)) {
        n++;
        assert.type(r.body.refresh_token, 'string', `${case_}: tokens`);
        pair = r.body;
      } else if (text.includes(pair.refresh_token)) {
        const again = await refresh(
          JSON.stringify({ refresh_token: pair.refresh_token }),
          bearer(pair.access_token).Authorization,
        );
        assert.is(again.status, 200, `${case_}: refused, the refresh token still works`);
        pair = again.body;
      }
    }),
    REFRESH_RUNS,
  );
  tally('token refreshes', n, REFRESH_RUNS);
});

test(`authentication providers: ${PROVIDER_RUNS.toLocaleString('en')} PUT bodies of LDAP, AD and OIDC providers are accepted or a 4xx {message, code}; refused ones store nothing`, async () => {
  // A closed local port: a login that reaches an accepted provider fails at once.
  const server = {
    host: '127.0.0.1',
    port: 1,
    security: 'insecure',
    binding: { user_dn: 'cn=fz,dc=fz', password: 'fz' },
    group_search: { base_dn: 'dc=fz' },
    user_search: { base_dn: 'dc=fz' },
  };
  const meta = (name: string) => ({ api_version: 'authentication/v2', metadata: { name } });
  const TARGETS: Array<[string, Record<string, unknown>]> = [
    ['fz-ldap', { type: 'ldap', ...meta('fz-ldap'), spec: { servers: [server], groups_prefix: 'fz' } }],
    ['fz-ad', { Type: 'AD', ...meta('fz-ad'), spec: { servers: [server], username_prefix: 'fz' } }],
    [
      'fz-oidc',
      { type: 'oidc', ...meta('fz-oidc'), spec: { client_id: 'fz', server: 'https://127.0.0.1:1' } },
    ],
  ];
  const list = () => names(PROVIDERS, (x) => x.metadata?.name);
  const before = await list();
  const accepted = new Set<string>();
  let n = 0;
  await fuzz(
    'authentication provider bodies',
    fc.asyncProperty(
      fc.constantFrom(...TARGETS).chain(([name, valid]) => fc.tuple(fc.constant(name), bodyText(valid))),
      async ([name, text]) => {
        const path = `${PROVIDERS}/${name}`;
        const old = await snapshot(path);
        const r = await backend.get(path, {
          method: 'PUT',
          body: text,
          headers: { 'Content-Type': 'application/json' },
        });
        if (answered(r, what('PUT', path, text))) {
          n++;
          accepted.add(name);
        } else assert.equal(await snapshot(path), old, `${what('PUT', path, text)}: unchanged`);
      },
    ),
    PROVIDER_RUNS,
  );
  tally('authentication providers', n, PROVIDER_RUNS);
  onlyAccepted(before, accepted, await list(), 'authentication providers');
});

test('after the fuzzing: the backend serves, and the administrator and the suite user log in', async () => {
  assert.is((await backend.health()).status, 200, 'the backend still serves');
  assert.is((await api('/namespaces')).status, 200, 'the admin API key works');
  assert.is((await loginAs(ADMIN.username, ADMIN.password)).status, 200, 'the administrator logs in');
  assert.is((await loginAs(USER, PASSWORD)).status, 200, `${USER} logs in with its password`);
});

test.run();
