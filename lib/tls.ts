import { createPrivateKey, X509Certificate } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { createSecureContext } from 'node:tls';
import { ConfigError } from '../proto/flags.ts';

// TLS material shared by the agent (client) and the backend's agent port (server): PEM files read
// once at start with errors that name the flag, and the one wording both sides use for a
// certificate that does not chain to a trusted authority (docs/compatibility.md#tls-certificate-chains).

export const NOT_TRUSTED = 'certificate not signed by trusted authority';

// OpenSSL's verify results (and the TLS alert a peer sends for them) that all mean "this chain does
// not lead to an authority I trust". Expiry and host name mismatch keep their own messages.
const TRUST_CODES = new Set([
  'UNABLE_TO_VERIFY_LEAF_SIGNATURE',
  'UNABLE_TO_GET_ISSUER_CERT',
  'UNABLE_TO_GET_ISSUER_CERT_LOCALLY',
  'SELF_SIGNED_CERT_IN_CHAIN',
  'DEPTH_ZERO_SELF_SIGNED_CERT',
  'CERT_UNTRUSTED',
  'CERT_SIGNATURE_FAILURE',
  'INVALID_CA',
  'ERR_SSL_TLSV1_ALERT_UNKNOWN_CA',
  'ERR_SSL_SSLV3_ALERT_BAD_CERTIFICATE',
]);
const TRUST_TEXT =
  /unable to verify the first certificate|unable to get (local )?issuer certificate|self[- ]signed certificate|alert unknown ca|alert bad certificate/i;

/** NOT_TRUSTED when `err` (a TLS error or a socket's authorizationError) is a trust failure, else undefined. */
export function trustFailure(err: unknown): string | undefined {
  if (!err) return undefined;
  // A TLSSocket's authorizationError is the bare code string, a client's error an Error with `code`.
  const code =
    typeof err === 'string' ? err : typeof err === 'object' ? (err as { code?: unknown }).code : undefined;
  if (typeof code === 'string' && TRUST_CODES.has(code)) return NOT_TRUSTED;
  const message = err instanceof Error ? err.message : String(err);
  return TRUST_TEXT.test(message) ? NOT_TRUSTED : undefined;
}

function readFlagFile(flag: string, path: string): string {
  try {
    return readFileSync(path, 'utf8');
  } catch (err) {
    const e = err as NodeJS.ErrnoException;
    const why =
      e.code === 'ENOENT'
        ? 'no such file'
        : e.code === 'EACCES'
          ? 'permission denied'
          : e.code === 'EISDIR'
            ? 'is a directory'
            : e.message;
    throw new ConfigError(`--${flag}: cannot read ${path}: ${why}`);
  }
}

const PEM_CERT = /-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g;

/** The PEM certificates of a file, each parsed so a damaged one is caught here and not at the first handshake. */
export function readCertificates(flag: string, path: string): { pem: string; certs: X509Certificate[] } {
  const pem = readFlagFile(flag, path);
  const blocks = pem.match(PEM_CERT) ?? [];
  if (blocks.length === 0) throw new ConfigError(`--${flag}: ${path} holds no PEM certificate`);
  const certs = blocks.map((block, i) => {
    try {
      return new X509Certificate(block);
    } catch (err) {
      throw new ConfigError(
        `--${flag}: certificate ${i + 1} in ${path} is invalid: ${(err as Error).message}`,
      );
    }
  });
  return { pem, certs };
}

function readPrivateKey(flag: string, path: string): string {
  const pem = readFlagFile(flag, path);
  try {
    createPrivateKey(pem);
  } catch {
    throw new ConfigError(`--${flag}: ${path} holds no valid unencrypted PEM private key`);
  }
  return pem;
}

/**
 * A certificate (or chain, leaf first) and its key. The key must match the first certificate:
 * that is how a chain with the leaf elsewhere is caught at start rather than as a refused handshake.
 */
export function readKeyPair(
  certFlag: string,
  certPath: string,
  keyFlag: string,
  keyPath: string,
): { cert: string; key: string; leaf: X509Certificate } {
  const { pem: cert, certs } = readCertificates(certFlag, certPath);
  const key = readPrivateKey(keyFlag, keyPath);
  if (!certs[0]!.checkPrivateKey(createPrivateKey(key))) {
    throw new ConfigError(
      `--${keyFlag}: ${keyPath} does not match the first certificate of --${certFlag} (a chain must start with the leaf certificate)`,
    );
  }
  try {
    createSecureContext({ cert, key });
  } catch (err) {
    throw new ConfigError(
      `--${certFlag}: ${certPath} cannot be used with --${keyFlag}: ${(err as Error).message}`,
    );
  }
  return { cert, key, leaf: certs[0]! };
}
