import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { resolveSettings, parseTimeout, sameUrl } from '../../cli/config/settings.ts';
import type { CliConfigFile } from '../../proto/schemas/cli-config.ts';
import { usageMessage } from './cli/usage-error.ts';

// monitorctl's settings: flag > environment > context > default, credentials only for the
// context's own server, and the usage errors of bad values.

const file: CliConfigFile = {
  current_context: 'prod',
  contexts: {
    prod: {
      url: 'https://prod.example:8080',
      namespace: 'ops',
      format: 'yaml',
      timeout: 30,
      trusted_ca_file: '/etc/ca.pem',
      insecure_skip_tls_verify: false,
      username: 'admin',
      access_token: 'tok',
      refresh_token: 'ref',
      expires_at: 1,
    },
    lab: {
      url: 'http://lab:8080',
      namespace: 'default',
      format: 'tabular',
      insecure_skip_tls_verify: true,
      api_key: 'key',
    },
  },
};

const usage = (fn: () => unknown, re: RegExp) => assert.match(usageMessage(fn), re);

test('the context gives every setting when nothing else does', () => {
  const s = resolveSettings({}, {}, file);
  assert.is(s.contextName, 'prod');
  assert.is(s.url, 'https://prod.example:8080');
  assert.is(s.namespace, 'ops');
  assert.is(s.format, 'yaml');
  assert.is(s.timeoutMs, 30_000);
  assert.is(s.trustedCaFile, '/etc/ca.pem');
  assert.equal(s.credential, { kind: 'token', token: 'tok', source: 'context', refreshable: true });
  assert.equal(s.sources, {
    url: 'context',
    namespace: 'context',
    format: 'context',
    timeout: 'context',
    tls: 'context',
    context: 'context',
  });
});

test('a variable beats the context, a flag beats both', () => {
  const env = { MONITOR_NAMESPACE: 'env-ns', MONITOR_FORMAT: 'json', MONITOR_TIMEOUT: '5s' };
  let s = resolveSettings({}, env, file);
  assert.is(s.namespace, 'env-ns');
  assert.is(s.format, 'json');
  assert.is(s.timeoutMs, 5000);
  assert.is(s.sources.namespace, 'env');
  s = resolveSettings({ namespace: 'flag-ns', format: 'wrapped-json', timeout: '500ms' }, env, file);
  assert.is(s.namespace, 'flag-ns');
  assert.is(s.format, 'wrapped-json');
  assert.is(s.timeoutMs, 500);
  assert.is(s.sources.format, 'flag');
  // an empty variable counts as unset
  assert.is(resolveSettings({}, { MONITOR_NAMESPACE: '' }, file).namespace, 'ops');
});

test('the context is chosen by flag, then MONITOR_CONTEXT, then the file', () => {
  assert.is(resolveSettings({}, { MONITOR_CONTEXT: 'lab' }, file).url, 'http://lab:8080');
  assert.is(
    resolveSettings({ context: 'prod' }, { MONITOR_CONTEXT: 'lab' }, file).url,
    'https://prod.example:8080',
  );
  const lab = resolveSettings({ context: 'lab' }, {}, file);
  assert.equal(lab.credential, { kind: 'api-key', key: 'key', source: 'context' });
  assert.is(lab.insecureSkipTlsVerify, true);
  usage(
    () => resolveSettings({ context: 'nope' }, {}, file),
    /no context "nope" \(--context\); known: prod, lab/,
  );
  usage(() => resolveSettings({}, { MONITOR_CONTEXT: 'nope' }, file), /MONITOR_CONTEXT/);
  assert.is(resolveSettings({ context: 'new' }, {}, file, { allowNewContext: true }).context, undefined);
  const empty = resolveSettings({}, {}, { contexts: {} });
  assert.equal(
    [empty.url, empty.namespace, empty.format, empty.timeoutMs],
    [undefined, 'default', 'tabular', 15_000],
  );
  assert.equal(empty.credential, { kind: 'none' });
});

test('credentials: --api-key, MONITOR_API_KEY, MONITOR_ACCESS_TOKEN, then the context', () => {
  const env = { MONITOR_API_KEY: 'env-key', MONITOR_ACCESS_TOKEN: 'env-tok' };
  assert.equal(resolveSettings({ apiKey: 'flag-key' }, env, file).credential, {
    kind: 'api-key',
    key: 'flag-key',
    source: 'flag',
  });
  assert.equal(resolveSettings({}, env, file).credential, { kind: 'api-key', key: 'env-key', source: 'env' });
  assert.equal(resolveSettings({}, { MONITOR_ACCESS_TOKEN: 'env-tok' }, file).credential, {
    kind: 'token',
    token: 'env-tok',
    source: 'env',
    refreshable: false,
  });
});

test("another server's URL gets none of the context's credentials or TLS settings", () => {
  const s = resolveSettings({ url: 'http://elsewhere:8080' }, {}, file);
  assert.equal(s.credential, { kind: 'none' });
  assert.is(s.trustedCaFile, undefined);
  assert.is(s.namespace, 'ops', 'defaults of the context still apply');
  // the same server written differently keeps them
  const same = resolveSettings({}, { MONITOR_URL: 'https://PROD.example:8080/' }, file);
  assert.is(same.credential.kind, 'token');
  assert.ok(sameUrl('http://a:1/', 'http://A:1'));
  assert.not.ok(sameUrl('http://a:1', 'http://a:2'));
  assert.not.ok(sameUrl(undefined, 'http://a:1'));
});

test('bad values are usage errors naming their source', () => {
  usage(() => resolveSettings({ format: 'xml' }, {}, file), /--format/);
  usage(() => resolveSettings({}, { MONITOR_FORMAT: 'xml' }, file), /MONITOR_FORMAT/);
  usage(() => resolveSettings({}, { MONITOR_TIMEOUT: 'soon' }, file), /MONITOR_TIMEOUT/);
  usage(
    () => resolveSettings({}, { MONITOR_INSECURE_SKIP_TLS_VERIFY: 'maybe' }, file),
    /MONITOR_INSECURE_SKIP_TLS_VERIFY/,
  );
  assert.is(resolveSettings({ format: 'template={{ . }}' }, {}, file).format, 'template={{ . }}');
  assert.equal(
    ['15', '1.5', '250ms', '2m', '1h'].map((t) => parseTimeout(t, 'x')),
    [15_000, 1_500, 250, 120_000, 3_600_000],
  );
  usage(() => parseTimeout('0', '--timeout'), /--timeout/);
  usage(() => parseTimeout('-1s', '--timeout'), /--timeout/);
});

test.run();
