import fs from 'node:fs';
import { isIP } from 'node:net';
import type tls from 'node:tls';
import { Client } from 'ldapts';
import type { DirectoryServer } from '../../proto/schemas/resources/authproviders.ts';
import { withTimeout } from '../../lib/timeout.ts';

/** TCP connect and each LDAP operation (and a STARTTLS handshake) give up after this long. */
const LDAP_TIMEOUT_MS = 5000;

/** `security` when absent: TLS (ldaps), as in the reference. */
const securityOf = (s: DirectoryServer) => s.security ?? 'tls';

/** Where a server is, as an LDAP URL (IPv6 literals bracketed); default ports 389 and 636 (ldaps). */
export function serverUrl(s: DirectoryServer): string {
  const tlsDirect = securityOf(s) === 'tls';
  const host = isIP(s.host) === 6 ? `[${s.host}]` : s.host;
  return `${tlsDirect ? 'ldaps' : 'ldap'}://${host}:${s.port ?? (tlsDirect ? 636 : 389)}`;
}

/** TLS settings of a server: verification unless `insecure`, CA and client certificate read from disk. */
function tlsOptions(s: DirectoryServer): tls.ConnectionOptions {
  const o: tls.ConnectionOptions = { rejectUnauthorized: !s.insecure, host: s.host };
  if (isIP(s.host) === 0) o.servername = s.host;
  if (s.trusted_ca_file) o.ca = fs.readFileSync(s.trusted_ca_file);
  if (s.client_cert_file) o.cert = fs.readFileSync(s.client_cert_file);
  if (s.client_key_file) o.key = fs.readFileSync(s.client_key_file);
  return o;
}

/** Closes a client, never throwing (the connection may already be broken). */
export async function closeClient(client: Client): Promise<void> {
  await withTimeout(client.unbind(), 1000, 'unbind').catch(() => {});
}

/**
 * A connected client for one server: `insecure` is plain LDAP, `tls` (the default) is LDAPS,
 * `starttls` is plain LDAP upgraded with STARTTLS before anything else is sent. The caller closes it
 * with closeClient (also when this throws after connecting, it closes the client itself).
 */
export async function connect(s: DirectoryServer): Promise<Client> {
  const security = securityOf(s);
  const tlsOpts = security === 'insecure' ? undefined : tlsOptions(s);
  const client = new Client({
    url: serverUrl(s),
    connectTimeout: LDAP_TIMEOUT_MS,
    timeout: LDAP_TIMEOUT_MS,
    ...(security === 'tls' ? { tlsOptions: tlsOpts } : {}),
  });
  try {
    if (security === 'starttls') await withTimeout(client.startTLS(tlsOpts), LDAP_TIMEOUT_MS * 2, 'STARTTLS');
    return client;
  } catch (err) {
    await closeClient(client);
    throw err;
  }
}
