/**
 * NATS decentralized authentication for tests: an operator, its system account, an account with
 * JetStream, and users of it as `.creds` files, with the JWTs signed here.
 *
 * Why not nsc: it is not on the machine and tests do not download binaries. Nothing is faked by
 * signing here: the nats-server these go to (startNats's `jwt` option) checks every signature
 * (operator → account → user, and the user's signature of the connection's nonce), so a mistake in
 * this module fails the connection rather than passing a test.
 *
 * A JWT of NATS (nats-io/jwt v2): base64url(header) "." base64url(claims) "." base64url(the ed25519
 * signature of the issuer's NKey over the first two parts), with header
 * {"typ":"JWT","alg":"ed25519-nkey"}. The claims' `jti` is base32 (no padding) of the SHA-512/256 of
 * the standard claims (aud, exp, jti, iat, iss, name, nbf, sub in that order, empty ones left out,
 * jti itself empty); the server does not check it, nsc computes it so, and so does this module.
 */
import { createHash } from 'node:crypto';
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { nkeys } from 'nats';
import { tempDir } from './tmp.ts';

type KeyPair = ReturnType<typeof nkeys.createUser>;

/** What a nats-server needs to trust the operator and know its accounts (a MEMORY resolver). */
export interface NatsTrust {
  operatorJwt: string;
  /** Public key of the system account, which the operator's JWT names as well. */
  systemAccount: string;
  /** Account public key → account JWT: the system account and the JetStream account. */
  preload: Record<string, string>;
}

interface NatsUserCreds {
  /** A `.creds` file as nsc writes it: the user JWT, then the user's NKey seed. */
  file: string;
  jwt: string;
  /** The user's NKey seed (`SU...`): a secret. */
  seed: string;
}

export interface NatsOperator {
  trust: NatsTrust;
  /** The account with JetStream, whose users the backend connects as. */
  accountKey: string;
  /** A `.creds` file for a new user of the JetStream account. */
  user(name: string): NatsUserCreds;
  /** A `.creds` file for a user of an account this operator never signed or preloaded. */
  strangerUser(name: string): NatsUserCreds;
}

// nats-io/jwt's NoLimit.
const NO_LIMIT = -1;

const text = (b: Uint8Array) => new TextDecoder().decode(b);
const b64url = (s: string | Uint8Array) => Buffer.from(s).toString('base64url');

const BASE32 = 'ABCDEFGHIJKLMNOPQRSTUVWXYZ234567';
/** RFC 4648 base32 without padding, as Go's base32.StdEncoding.WithPadding(NoPadding). */
function base32(bytes: Uint8Array): string {
  let out = '';
  let bits = 0;
  let value = 0;
  for (const b of bytes) {
    value = (value << 8) | b;
    bits += 8;
    while (bits >= 5) {
      out += BASE32[(value >>> (bits - 5)) & 31];
      bits -= 5;
    }
  }
  if (bits > 0) out += BASE32[(value << (5 - bits)) & 31];
  return out;
}

/** A v2 JWT for `subject`, issued and signed by `issuer`; `nats` is the type-specific part. */
function signJwt(issuer: KeyPair, subject: string, name: string, nats: Record<string, unknown>): string {
  const header = b64url(JSON.stringify({ typ: 'JWT', alg: 'ed25519-nkey' }));
  // The key order of Go's ClaimsData, which the jti hashes.
  const standard = { iat: Math.floor(Date.now() / 1000), iss: issuer.getPublicKey(), name, sub: subject };
  const jti = base32(createHash('sha512-256').update(JSON.stringify(standard)).digest());
  const claims = b64url(JSON.stringify({ jti, ...standard, nats: { ...nats, version: 2 } }));
  const signature = b64url(issuer.sign(new TextEncoder().encode(`${header}.${claims}`)));
  return `${header}.${claims}.${signature}`;
}

/** nsc's defaults for a new account (everything unlimited), with JetStream on when asked. */
function accountJwt(operator: KeyPair, account: KeyPair, name: string, jetstream: boolean): string {
  const limits = {
    subs: NO_LIMIT,
    data: NO_LIMIT,
    payload: NO_LIMIT,
    imports: NO_LIMIT,
    exports: NO_LIMIT,
    wildcards: true,
    conn: NO_LIMIT,
    leaf: NO_LIMIT,
    // Zero storage is JetStream off for the account (nats-io/jwt's IsJSEnabled).
    ...(jetstream
      ? { mem_storage: NO_LIMIT, disk_storage: NO_LIMIT, streams: NO_LIMIT, consumer: NO_LIMIT }
      : {}),
  };
  return signJwt(operator, account.getPublicKey(), name, { type: 'account', limits });
}

function userCreds(account: KeyPair, name: string): NatsUserCreds {
  const user = nkeys.createUser();
  // nsc's defaults for a new user: no permissions (all allowed) and no limits.
  const jwt = signJwt(account, user.getPublicKey(), name, {
    type: 'user',
    pub: {},
    sub: {},
    subs: NO_LIMIT,
    data: NO_LIMIT,
    payload: NO_LIMIT,
  });
  const seed = text(user.getSeed());
  const file = join(tempDir('nats-creds'), `${name}.creds`);
  writeFileSync(
    file,
    `-----BEGIN NATS USER JWT-----\n${jwt}\n------END NATS USER JWT------\n\n` +
      `************************* IMPORTANT *************************\n` +
      `NKEY Seed printed below can be used to sign and prove identity.\n` +
      `NKEYs are sensitive and should be treated as secrets.\n\n` +
      `-----BEGIN USER NKEY SEED-----\n${seed}\n------END USER NKEY SEED------\n\n` +
      `*************************************************************\n`,
    { mode: 0o600 },
  );
  return { file, jwt, seed };
}

export function makeNatsOperator(): NatsOperator {
  const operator = nkeys.createOperator();
  const system = nkeys.createAccount();
  const account = nkeys.createAccount();
  const operatorJwt = signJwt(operator, operator.getPublicKey(), 'monitor-test-operator', {
    type: 'operator',
    system_account: system.getPublicKey(),
  });
  return {
    trust: {
      operatorJwt,
      systemAccount: system.getPublicKey(),
      preload: {
        [system.getPublicKey()]: accountJwt(operator, system, 'SYS', false),
        [account.getPublicKey()]: accountJwt(operator, account, 'MONITOR', true),
      },
    },
    accountKey: account.getPublicKey(),
    user: (name) => userCreds(account, name),
    strangerUser: (name) => userCreds(nkeys.createAccount(), name),
  };
}
