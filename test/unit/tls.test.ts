import { writeFileSync } from 'node:fs';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../proto/flags.ts';
import { NOT_TRUSTED, readCertificates, readKeyPair, trustFailure } from '../../lib/tls.ts';
import { loadAgentServerTls } from '../../gateway/agents/tls.ts';
import { makeTestCerts } from '../harness/certs.ts';

// TLS file loading (both sides) and the mapping of TLS trust errors to one wording
// (docs/compatibility.md#tls-certificate-chains).

const certs = makeTestCerts();

function configError(fn: () => unknown): string {
  try {
    fn();
  } catch (err) {
    assert.instance(err, ConfigError);
    return (err as Error).message;
  }
  throw new Error('expected a ConfigError');
}

test('trust failures read the same whatever form Node gives them', () => {
  assert.is(trustFailure('UNABLE_TO_VERIFY_LEAF_SIGNATURE'), NOT_TRUSTED);
  assert.is(
    trustFailure(
      Object.assign(new Error('self-signed certificate in certificate chain'), {
        code: 'SELF_SIGNED_CERT_IN_CHAIN',
      }),
    ),
    NOT_TRUSTED,
  );
  assert.is(trustFailure(new Error('unable to get local issuer certificate')), NOT_TRUSTED);
  assert.is(
    trustFailure(
      Object.assign(new Error('tlsv1 alert unknown ca'), { code: 'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA' }),
    ),
    NOT_TRUSTED,
  );
  assert.is(
    trustFailure(Object.assign(new Error('certificate has expired'), { code: 'CERT_HAS_EXPIRED' })),
    undefined,
  );
  assert.is(trustFailure(new Error('connect ECONNREFUSED 127.0.0.1:1')), undefined);
  assert.is(trustFailure(null), undefined);
});

test('certificates: a missing, non-PEM or damaged file names its flag', () => {
  assert.match(
    configError(() => readCertificates('trusted-ca-file', `${certs.dir}/nope.pem`)),
    /^--trusted-ca-file: cannot read .*nope\.pem: no such file$/,
  );
  assert.match(
    configError(() => readCertificates('trusted-ca-file', certs.dir)),
    /^--trusted-ca-file: cannot read .*: is a directory$/,
  );
  assert.match(
    configError(() => readCertificates('trusted-ca-file', certs.serverKey)),
    /^--trusted-ca-file: .* holds no PEM certificate$/,
  );
  const damaged = `${certs.dir}/damaged.pem`;
  writeFileSync(
    damaged,
    '-----BEGIN CERTIFICATE-----\nbm90IGEgY2VydGlmaWNhdGU=\n-----END CERTIFICATE-----\n',
  );
  assert.match(
    configError(() => readCertificates('trusted-ca-file', damaged)),
    /^--trusted-ca-file: certificate 1 in .* is invalid/,
  );
  assert.is(readCertificates('trusted-ca-file', certs.clientChain).certs.length, 2);
});

test('key pairs: the key must match the first certificate, so a chain must start with the leaf', () => {
  const pair = readKeyPair('cert-file', certs.clientChain, 'key-file', certs.clientKey);
  assert.ok(pair.leaf.subject.includes('CN=agent'));
  assert.match(
    configError(() => readKeyPair('cert-file', certs.clientChainReversed, 'key-file', certs.clientKey)),
    /^--key-file: .* does not match the first certificate of --cert-file/,
  );
  assert.match(
    configError(() => readKeyPair('cert-file', certs.clientLeaf, 'key-file', certs.serverKey)),
    /^--key-file: /,
  );
  assert.match(
    configError(() => readKeyPair('cert-file', certs.clientLeaf, 'key-file', certs.clientLeaf)),
    /^--key-file: .* holds no valid unencrypted PEM private key$/,
  );
});

test('backend flags: cert and key together; CA and client-cert-auth need TLS; client-cert-auth needs a CA', () => {
  const flags = {
    'agent-cert-file': '',
    'agent-key-file': '',
    'agent-trusted-ca-file': '',
    'agent-client-cert-auth': false,
  };
  assert.is(loadAgentServerTls(flags), undefined);
  assert.match(
    configError(() => loadAgentServerTls({ ...flags, 'agent-cert-file': certs.serverCert })),
    /^--agent-key-file: required/,
  );
  assert.match(
    configError(() => loadAgentServerTls({ ...flags, 'agent-key-file': certs.serverKey })),
    /^--agent-cert-file: required/,
  );
  assert.match(
    configError(() => loadAgentServerTls({ ...flags, 'agent-trusted-ca-file': certs.ca })),
    /^--agent-trusted-ca-file: needs --agent-cert-file/,
  );
  const tls = { ...flags, 'agent-cert-file': certs.serverCert, 'agent-key-file': certs.serverKey };
  assert.match(
    configError(() => loadAgentServerTls({ ...tls, 'agent-client-cert-auth': true })),
    /^--agent-client-cert-auth: needs --agent-trusted-ca-file$/,
  );
  const ok = loadAgentServerTls({
    ...tls,
    'agent-trusted-ca-file': certs.ca,
    'agent-client-cert-auth': true,
  })!;
  assert.ok(ok.ca && ok.cert && ok.key);
  assert.is(ok.requireClientCert, true);
});

test.run();
