import { readFileSync } from 'node:fs';
import { credsAuthenticator } from 'nats';
import { ConfigError } from '../../proto/flags.ts';
import type { BackendConfig } from '../../proto/schemas/backend-config.ts';
import { NOT_TRUSTED, readCertificates, readKeyPair, trustFailure } from '../../lib/tls.ts';
import { splitUrlCredentials, type SplitUrl } from '../../lib/url-credentials.ts';
import type { NatsAuth } from '../../actors/runtime/nats.ts';

// How the backend reaches an external NATS and etcd: the URLs without their user info (neither
// client reads credentials there, and the URLs get logged), the credentials from the flags or else
// from the URLs, and the TLS files read once at start. Every bad combination is a ConfigError naming
// a flag and never a value, and a server that refuses them is named with the flags to check
// (docs/compatibility.md#credentials-of-the-external-etcd-and-nats).

export interface StoreAccess {
  nats: { servers: string[]; auth?: NatsAuth; tls?: { ca?: string; cert?: string; key?: string } };
  etcd: {
    endpoints: string[];
    auth?: { username: string; password: string };
    tls?: { ca?: Buffer; cert?: Buffer; key?: Buffer };
  };
}

type AccessFlags = Pick<
  BackendConfig,
  | 'nats-url'
  | 'nats-user'
  | 'nats-password'
  | 'nats-creds'
  | 'nats-tls-ca-file'
  | 'nats-tls-cert-file'
  | 'nats-tls-key-file'
  | 'etcd-client-urls'
  | 'etcd-username'
  | 'etcd-password'
  | 'etcd-trusted-ca-file'
  | 'etcd-cert-file'
  | 'etcd-key-file'
>;

const both = (a: string, aValue: string, b: string, bValue: string) => {
  if (!aValue !== !bValue)
    throw new ConfigError(aValue ? `--${b}: required with --${a}` : `--${a}: required with --${b}`);
};

/** Flags that make sense only with the external store named by `urlFlag`. */
function needsExternal(
  cfg: AccessFlags,
  urlFlag: 'nats-url' | 'etcd-client-urls',
  flags: (keyof AccessFlags)[],
) {
  if (cfg[urlFlag].length > 0) return;
  const set = flags.find((f) => cfg[f] !== '');
  if (set)
    throw new ConfigError(`--${set}: needs --${urlFlag} (the embedded server has no users and no TLS)`);
}

/** The one set of credentials the URLs carry (servers without any share it); different ones are an error. */
function urlCredentials(flag: string, urls: SplitUrl[]): SplitUrl | undefined {
  const withInfo = urls.filter((u) => u.user !== undefined);
  const first = withInfo[0];
  if (withInfo.some((u) => u.user !== first!.user || u.password !== first!.password))
    throw new ConfigError(
      `--${flag}: the URLs carry different credentials; give them once with the user flags`,
    );
  return first;
}

function natsAccess(cfg: AccessFlags): StoreAccess['nats'] {
  needsExternal(cfg, 'nats-url', [
    'nats-user',
    'nats-password',
    'nats-creds',
    'nats-tls-ca-file',
    'nats-tls-cert-file',
    'nats-tls-key-file',
  ]);
  both('nats-user', cfg['nats-user'], 'nats-password', cfg['nats-password']);
  both('nats-tls-cert-file', cfg['nats-tls-cert-file'], 'nats-tls-key-file', cfg['nats-tls-key-file']);
  if (cfg['nats-creds'] && cfg['nats-user'])
    throw new ConfigError('--nats-creds: cannot be used with --nats-user and --nats-password');
  const urls = cfg['nats-url'].map(splitUrlCredentials);
  const inUrl = urlCredentials('nats-url', urls);
  let auth: NatsAuth | undefined;
  if (cfg['nats-creds']) auth = { creds: readCredsFile(cfg['nats-creds']) };
  else if (cfg['nats-user']) auth = { user: cfg['nats-user'], pass: cfg['nats-password'] };
  // As in nats-server's own URLs: `user:pass@` is a user, a lone `token@` a token.
  else if (inUrl?.password !== undefined) auth = { user: inUrl.user!, pass: inUrl.password };
  else if (inUrl) auth = { token: inUrl.user! };
  let tls: StoreAccess['nats']['tls'];
  if (cfg['nats-tls-ca-file'] || cfg['nats-tls-cert-file']) {
    tls = {};
    if (cfg['nats-tls-ca-file']) tls.ca = readCertificates('nats-tls-ca-file', cfg['nats-tls-ca-file']).pem;
    if (cfg['nats-tls-cert-file']) {
      const pair = readKeyPair(
        'nats-tls-cert-file',
        cfg['nats-tls-cert-file'],
        'nats-tls-key-file',
        cfg['nats-tls-key-file'],
      );
      tls.cert = pair.cert;
      tls.key = pair.key;
    }
  }
  return { servers: urls.map((u) => u.url), ...(auth ? { auth } : {}), ...(tls ? { tls } : {}) };
}

/** A NATS credentials file: a user JWT and an NKey seed, each between its BEGIN and END lines. */
function readCredsFile(path: string): Uint8Array {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    throw new ConfigError(
      `--nats-creds: cannot read ${path}: ${(err as NodeJS.ErrnoException).code ?? 'error'}`,
    );
  }
  const creds = new TextEncoder().encode(text);
  try {
    // Signing a nonce parses the JWT and the seed as the first connection would, but now.
    credsAuthenticator(creds)('check');
  } catch {
    throw new ConfigError(
      `--nats-creds: ${path} is not a NATS credentials file (a user JWT and an NKey seed)`,
    );
  }
  return creds;
}

function etcdAccess(cfg: AccessFlags): StoreAccess['etcd'] {
  needsExternal(cfg, 'etcd-client-urls', [
    'etcd-username',
    'etcd-password',
    'etcd-trusted-ca-file',
    'etcd-cert-file',
    'etcd-key-file',
  ]);
  both('etcd-username', cfg['etcd-username'], 'etcd-password', cfg['etcd-password']);
  both('etcd-cert-file', cfg['etcd-cert-file'], 'etcd-key-file', cfg['etcd-key-file']);
  const urls = cfg['etcd-client-urls'].map(splitUrlCredentials);
  const inUrl = urlCredentials('etcd-client-urls', urls);
  if (inUrl && inUrl.password === undefined)
    throw new ConfigError('--etcd-client-urls: user info must be user:password');
  const tlsFlag = (['etcd-trusted-ca-file', 'etcd-cert-file'] as const).find((f) => cfg[f] !== '');
  // etcd3 would otherwise speak TLS to every URL anyway, to the surprise of an http:// one.
  if (tlsFlag && urls.some((u) => !u.url.startsWith('https://')))
    throw new ConfigError(`--${tlsFlag}: needs https:// URLs in --etcd-client-urls`);
  const auth = cfg['etcd-username']
    ? { username: cfg['etcd-username'], password: cfg['etcd-password'] }
    : inUrl
      ? { username: inUrl.user!, password: inUrl.password! }
      : undefined;
  let tls: StoreAccess['etcd']['tls'];
  if (tlsFlag) {
    tls = {};
    if (cfg['etcd-trusted-ca-file'])
      tls.ca = Buffer.from(readCertificates('etcd-trusted-ca-file', cfg['etcd-trusted-ca-file']).pem);
    if (cfg['etcd-cert-file']) {
      const pair = readKeyPair(
        'etcd-cert-file',
        cfg['etcd-cert-file'],
        'etcd-key-file',
        cfg['etcd-key-file'],
      );
      tls.cert = Buffer.from(pair.cert);
      tls.key = Buffer.from(pair.key);
    }
  }
  return { endpoints: urls.map((u) => u.url), ...(auth ? { auth } : {}), ...(tls ? { tls } : {}) };
}

/** Read at start, before anything runs, so that a bad combination or file exits 2 like a bad flag. */
export function loadStoreAccess(cfg: AccessFlags): StoreAccess {
  return { nats: natsAccess(cfg), etcd: etcdAccess(cfg) };
}

/** Why etcd could not be used, in a line naming the store; `permanent` when retrying cannot help. */
interface StoreFailure {
  message: string;
  permanent: boolean;
}

// A TLS alert from the server: it refused the certificate this client gave, or the lack of one.
const PEER_REFUSED_CERT = /alert (bad certificate|certificate required|unknown ca|certificate unknown)/i;

/**
 * The cause inside a gRPC connection error, which wraps it as "14 UNAVAILABLE: No connection
 * established. Last error: Error: <cause> (<time>). Resolution note: ", an OpenSSL error code and
 * source line around an alert.
 */
function grpcCause(message: string): string {
  const last = /Last error: (?:Error: )?([\s\S]*?)(?:\s*\(\d{4}-\d\d-\d\dT[^)]*\))?\.? Resolution note:/.exec(
    message,
  );
  const cause = (last?.[1] ?? message).trim();
  return /^[0-9A-F]+:error:[0-9A-F]+:[^:]*:[^:]*:([^:]+):/.exec(cause)?.[1] ?? cause;
}

export function etcdFailure(err: unknown, endpoints: string[]): StoreFailure {
  const where = `etcd at ${endpoints.join(', ')}`;
  const message = err instanceof Error ? err.message : String(err);
  const cause = grpcCause(message);
  if (message.includes('etcdserver: authentication failed'))
    return {
      message: `${where}: authentication failed, wrong user name or password (--etcd-username and --etcd-password, or the URLs' user info)`,
      permanent: true,
    };
  if (PEER_REFUSED_CERT.test(cause))
    return {
      message: `${where}: the server refused this backend's client certificate, or its lack of one (${cause}): check --etcd-cert-file and --etcd-key-file`,
      permanent: true,
    };
  if (trustFailure(cause))
    return {
      message: `${where}: ${NOT_TRUSTED} (the server's certificate, checked against --etcd-trusted-ca-file)`,
      permanent: true,
    };
  return { message: `${where}: ${cause}`, permanent: false };
}

/** Why NATS refused the connection, in a line naming the store and, for credentials, their flags. */
export function natsFailure(err: unknown, servers: string[]): string {
  const where = `NATS at ${servers.join(', ')}`;
  // nats.js quotes the server's -ERR text.
  const message = (err instanceof Error ? err.message : String(err)).replace(/^'(.*)'$/s, '$1');
  if ((err as { code?: unknown })?.code === 'AUTHORIZATION_VIOLATION')
    return `${where}: ${message}, the server refused the credentials (--nats-user and --nats-password, --nats-creds, or the URLs' user info)`;
  return `${where}: ${message}`;
}
