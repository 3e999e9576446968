import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nkeys } from 'nats';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { ConfigError } from '../../proto/flags.ts';
import { etcdFailure, loadStoreAccess, natsFailure } from '../../gateway/node/store-access.ts';
import { makeTestCerts } from '../harness/certs.ts';
import { tempDir } from '../harness/tmp.ts';

// How the backend's flags and URLs become the NATS and etcd clients' options: credentials taken out
// of URLs, flags winning over them, TLS files read at start, and every conflict a ConfigError naming
// a flag without its value (docs/compatibility.md#credentials-of-the-external-etcd-and-nats).

const certs = makeTestCerts();
const SECRET = 'Sup3r-secret';

const flags = {
  'nats-url': [] as string[],
  'nats-user': '',
  'nats-password': '',
  'nats-creds': '',
  'nats-tls-ca-file': '',
  'nats-tls-cert-file': '',
  'nats-tls-key-file': '',
  'etcd-client-urls': [] as string[],
  'etcd-username': '',
  'etcd-password': '',
  'etcd-trusted-ca-file': '',
  'etcd-cert-file': '',
  'etcd-key-file': '',
};
const load = (over: Partial<typeof flags>) => loadStoreAccess({ ...flags, ...over });

function configError(over: Partial<typeof flags>): string {
  try {
    load(over);
  } catch (err) {
    assert.instance(err, ConfigError);
    const message = (err as Error).message;
    assert.not.ok(message.includes(SECRET), `the message echoes a secret: ${message}`);
    return message;
  }
  throw new Error('expected a ConfigError');
}

test('user:password and a token in --nats-url are taken out of the servers', () => {
  const a = load({
    'nats-url': [`nats://u:${encodeURIComponent('p@ss:w/rd')}@127.0.0.1:4222`, '127.0.0.1:4223'],
  });
  assert.equal(a.nats.servers, ['nats://127.0.0.1:4222', '127.0.0.1:4223']);
  assert.equal(a.nats.auth, { user: 'u', pass: 'p@ss:w/rd' });
  const t = load({ 'nats-url': [`nats://${SECRET}@n1:4222`, `tls://${SECRET}@n2:4222`] });
  assert.equal(t.nats.servers, ['nats://n1:4222', 'tls://n2:4222']);
  assert.equal(t.nats.auth, { token: SECRET });
  const none = load({ 'nats-url': ['nats://n1:4222'] });
  assert.is(none.nats.auth, undefined);
});

test('user:password in --etcd-client-urls becomes etcd auth; the flags win over it', () => {
  const a = load({ 'etcd-client-urls': [`http://root:${SECRET}@127.0.0.1:2379`, 'http://127.0.0.1:22379'] });
  assert.equal(a.etcd.endpoints, ['http://127.0.0.1:2379', 'http://127.0.0.1:22379']);
  assert.equal(a.etcd.auth, { username: 'root', password: SECRET });
  const f = load({
    'etcd-client-urls': [`http://root:${SECRET}@127.0.0.1:2379`],
    'etcd-username': 'monitor',
    'etcd-password': 'other',
    'nats-url': [`nats://u:${SECRET}@n1:4222`],
    'nats-user': 'v',
    'nats-password': 'q',
  });
  assert.equal(f.etcd.auth, { username: 'monitor', password: 'other' });
  assert.equal(f.nats.auth, { user: 'v', pass: 'q' });
  assert.equal(f.nats.servers, ['nats://n1:4222']);
});

test('conflicting or incomplete credentials are a ConfigError naming the flag, never the value', () => {
  assert.match(
    configError({ 'nats-url': ['nats://n:4222'], 'nats-password': SECRET }),
    /^--nats-user: required/,
  );
  assert.match(configError({ 'nats-password': SECRET }), /^--nats-password: needs --nats-url/);
  assert.match(configError({ 'etcd-password': SECRET }), /^--etcd-password: needs --etcd-client-urls/);
  assert.match(
    configError({ 'etcd-client-urls': ['http://e:2379'], 'etcd-password': SECRET }),
    /^--etcd-username: required with --etcd-password/,
  );
  assert.match(
    configError({ 'nats-url': [`nats://a:${SECRET}@n1:4222`, `nats://b:${SECRET}@n2:4222`] }),
    /^--nats-url: the URLs carry different credentials/,
  );
  assert.match(
    configError({ 'etcd-client-urls': [`http://${SECRET}@e:2379`] }),
    /^--etcd-client-urls: user info/,
  );
  assert.match(
    configError({
      'nats-url': ['nats://n:4222'],
      'nats-user': 'u',
      'nats-password': SECRET,
      'nats-creds': '/x',
    }),
    /^--nats-creds: cannot be used with --nats-user/,
  );
  assert.match(
    configError({ 'etcd-client-urls': ['http://e:2379'], 'etcd-trusted-ca-file': certs.ca }),
    /^--etcd-trusted-ca-file: needs https:\/\//,
  );
  assert.match(
    configError({ 'nats-url': ['nats://n:4222'], 'nats-tls-cert-file': certs.clientChain }),
    /^--nats-tls-key-file: required with --nats-tls-cert-file/,
  );
});

test('a NATS credentials file is read and checked at start', () => {
  const dir = tempDir('creds');
  const user = nkeys.createUser();
  const good = join(dir, 'user.creds');
  writeFileSync(
    good,
    `-----BEGIN NATS USER JWT-----\neyJhbGciOiJlZDI1NTE5In0.e30.c2ln\n------END NATS USER JWT------\n\n` +
      `************************* IMPORTANT *************************\n\n` +
      `-----BEGIN USER NKEY SEED-----\n${new TextDecoder().decode(user.getSeed())}\n------END USER NKEY SEED------\n`,
  );
  const a = load({ 'nats-url': ['nats://n:4222'], 'nats-creds': good });
  assert.ok(a.nats.auth && 'creds' in a.nats.auth && a.nats.auth.creds.length > 0);
  const bad = join(dir, 'bad.creds');
  writeFileSync(bad, 'not credentials');
  assert.match(
    configError({ 'nats-url': ['nats://n:4222'], 'nats-creds': bad }),
    /^--nats-creds: .* is not a NATS/,
  );
  assert.match(
    configError({ 'nats-url': ['nats://n:4222'], 'nats-creds': join(dir, 'missing') }),
    /^--nats-creds: cannot read/,
  );
});

test('TLS files are read at start, for NATS and for etcd', () => {
  const a = load({
    'nats-url': ['tls://n:4222'],
    'nats-tls-ca-file': certs.ca,
    'nats-tls-cert-file': certs.clientChain,
    'nats-tls-key-file': certs.clientKey,
    'etcd-client-urls': ['https://e:2379'],
    'etcd-trusted-ca-file': certs.ca,
    'etcd-cert-file': certs.clientChain,
    'etcd-key-file': certs.clientKey,
  });
  assert.match(a.nats.tls!.ca!, /BEGIN CERTIFICATE/);
  assert.match(a.nats.tls!.key!, /PRIVATE KEY/);
  assert.match(a.etcd.tls!.cert!.toString(), /BEGIN CERTIFICATE/);
  assert.match(a.etcd.tls!.ca!.toString(), /BEGIN CERTIFICATE/);
  assert.match(
    configError({ 'etcd-client-urls': ['https://e:2379'], 'etcd-trusted-ca-file': '/nonexistent.pem' }),
    /^--etcd-trusted-ca-file: cannot read/,
  );
  assert.match(
    configError({
      'nats-url': ['nats://n:4222'],
      'nats-tls-cert-file': certs.clientChain,
      'nats-tls-key-file': certs.serverKey,
    }),
    /^--nats-tls-key-file: .* does not match/,
  );
});

test("a store's refusal names the store, its URLs and the flags to check; only a refusal is permanent", () => {
  const urls = ['https://127.0.0.1:2379'];
  // The messages of etcd3 over @grpc/grpc-js, as a real etcd 3.4 made them.
  const grpc = (cause: string) =>
    new Error(`14 UNAVAILABLE: No connection established. Last error: ${cause}. Resolution note: `);
  const noCert = etcdFailure(
    grpc(
      '80BC4697D87F0000:error:0A000412:SSL routines:ssl3_read_bytes:sslv3 alert bad certificate:' +
        '../deps/openssl/openssl/ssl/record/rec_layer_s3.c:1601:SSL alert number 42\n (2026-11-23T22:08:19.368Z)',
    ),
    urls,
  );
  assert.equal(noCert, {
    message:
      "etcd at https://127.0.0.1:2379: the server refused this backend's client certificate, or its lack of one " +
      '(sslv3 alert bad certificate): check --etcd-cert-file and --etcd-key-file',
    permanent: true,
  });
  assert.equal(etcdFailure(grpc('Error: unable to verify the first certificate'), urls), {
    message:
      "etcd at https://127.0.0.1:2379: certificate not signed by trusted authority (the server's certificate, " +
      'checked against --etcd-trusted-ca-file)',
    permanent: true,
  });
  const password = etcdFailure(
    new Error('3 INVALID_ARGUMENT: etcdserver: authentication failed, invalid user ID or password'),
    urls,
  );
  assert.ok(password.permanent);
  assert.match(
    password.message,
    /^etcd at https:\/\/127\.0\.0\.1:2379: authentication failed.*--etcd-password/,
  );
  assert.equal(etcdFailure(grpc('Error: connect ECONNREFUSED 127.0.0.1:2379'), urls), {
    message: 'etcd at https://127.0.0.1:2379: connect ECONNREFUSED 127.0.0.1:2379',
    permanent: false,
  });

  const violation = Object.assign(new Error("'Authorization Violation'"), {
    code: 'AUTHORIZATION_VIOLATION',
  });
  assert.match(
    natsFailure(violation, ['nats://127.0.0.1:4222']),
    /^NATS at nats:\/\/127\.0\.0\.1:4222: Authorization Violation, the server refused the credentials .*--nats-creds/,
  );
  assert.is(
    natsFailure(Object.assign(new Error('CONNECTION_REFUSED'), { code: 'CONNECTION_REFUSED' }), [
      'nats://n:4222',
    ]),
    'NATS at nats://n:4222: CONNECTION_REFUSED',
  );
});

test.run();
