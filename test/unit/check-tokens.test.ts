import { test } from 'uvu';
import * as assert from 'uvu/assert';
import {
  substituteString,
  substituteTokens,
  tokenData,
  TokenSubstitutionError,
} from '../../agent/checks/tokens.ts';

// Token substitution over check and hook strings (docs/compatibility.md#tokens).

const entity = {
  metadata: {
    name: 'web-01',
    namespace: 'default',
    labels: { region: 'eu', port: '' },
    annotations: { team: 'ops' },
  },
  entity_class: 'agent',
  system: { hostname: 'web-01.example', os: 'linux', network: { interfaces: [{ name: 'lo' }] } },
  subscriptions: ['linux'],
};
const data = tokenData(entity);
const sub = (s: string) => substituteString(s, data);

test('metadata fields are hoisted; nested fields; metadata still reachable', () => {
  assert.is(sub('{{ .name }}'), 'web-01');
  assert.is(sub('{{.metadata.name}}'), 'web-01');
  assert.is(sub('{{ .labels.region }}-{{ .annotations.team }}'), 'eu-ops');
  assert.is(sub('{{ .system.hostname }}'), 'web-01.example');
  assert.is(sub('{{ .namespace }}'), 'default');
  assert.is(sub('no tokens at all'), 'no tokens at all');
});

test('default: missing and empty values take it, present ones do not; both argument orders', () => {
  assert.is(sub('{{ .labels.missing | default "8080" }}'), '8080');
  assert.is(sub('{{ .labels.port | default "8080" }}'), '8080', 'an empty string is empty');
  assert.is(sub('{{ .labels.region | default "us" }}'), 'eu');
  assert.is(sub('{{ default "x" .labels.nope }}'), 'x');
  assert.is(sub('{{ .nothing.at.all | default `raw` }}'), 'raw');
  assert.is(sub('{{ .labels.missing | default 5 }}'), '5');
});

test('assetPath gives the asset variable', () => {
  assert.is(sub('{{ assetPath "check-disk" }}/bin/x'), '$CHECK_DISK_PATH/bin/x');
  assert.is(sub('{{ assetPath "tools" }}'), '$TOOLS_PATH');
});

test('unmatched tokens name themselves', () => {
  assert.throws(
    () => sub('echo {{ .labels.missing }}'),
    (e: Error) =>
      e instanceof TokenSubstitutionError && e.message === 'unmatched token: {{ .labels.missing }}',
  );
  assert.throws(() => sub('{{ .system.nope.deeper }}'), /unmatched token/);
  assert.throws(() => sub('{{ .subscriptions.x }}'), /unmatched token/);
});

test('malformed templates are TokenSubstitutionErrors, never crashes', () => {
  for (const bad of [
    '{{ .name',
    '{{ }}',
    '{{ nope }}',
    '{{ printf "%s" .name }}',
    '{{ "unterminated }}',
    '{{ assetPath }}',
    '{{ default }}',
    '{{ .name .name }}',
  ]) {
    assert.throws(
      () => sub(bad),
      (e: Error) => e instanceof TokenSubstitutionError,
      bad,
    );
  }
});

test('whitespace trim markers and non-string values', () => {
  assert.is(sub('a  {{- .name -}}  b'), 'aweb-01b');
  assert.is(sub('{{ .subscriptions }}'), '["linux"]');
});

test('substituteTokens walks every string of a check; keys and non-strings stay', () => {
  const check = {
    metadata: { name: 'c' },
    command: 'x {{ .name }}',
    env_vars: ['HOST={{ .system.hostname }}'],
    timeout: 5,
    stdin: true,
    output_metric_tags: [{ name: 'region', value: '{{ .labels.region }}' }],
    '{{ .name }}': 'key kept',
  };
  const out = substituteTokens(check, data);
  assert.equal(out, {
    metadata: { name: 'c' },
    command: 'x web-01',
    env_vars: ['HOST=web-01.example'],
    timeout: 5,
    stdin: true,
    output_metric_tags: [{ name: 'region', value: 'eu' }],
    '{{ .name }}': 'key kept',
  });
  assert.is(check.command, 'x {{ .name }}', 'the input is not changed');
  assert.equal(substituteTokens({ sha512: '{{ .name }}', url: '{{ .name }}' }, data, new Set(['sha512'])), {
    sha512: '{{ .name }}',
    url: 'web-01',
  });
});

test.run();
