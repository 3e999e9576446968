import type { TLSSocket } from 'node:tls';
import { ConfigError } from '../../proto/flags.ts';
import type { BackendConfig } from '../../proto/schemas/backend-config.ts';
import { readCertificates, readKeyPair, trustFailure } from '../../lib/tls.ts';
import { HandshakeError } from './handshake.ts';

/** TLS of the agent port: the server's own pair, and how agents' client certificates are treated. */
export interface AgentServerTls {
  cert: string;
  key: string;
  /** Authorities for client certificates; absent: client certificates are not asked for. */
  ca?: string;
  /** A verified client certificate is required; Basic credentials alone are refused. */
  requireClientCert: boolean;
}

type TlsFlags = Pick<
  BackendConfig,
  'agent-cert-file' | 'agent-key-file' | 'agent-trusted-ca-file' | 'agent-client-cert-auth'
>;

/** Reads the files once at start (undefined: plain ws); a bad file or combination throws a ConfigError naming the flag. */
export function loadAgentServerTls(cfg: TlsFlags): AgentServerTls | undefined {
  const certFile = cfg['agent-cert-file'];
  const keyFile = cfg['agent-key-file'];
  if (!certFile !== !keyFile)
    throw new ConfigError(
      certFile
        ? '--agent-key-file: required with --agent-cert-file'
        : '--agent-cert-file: required with --agent-key-file',
    );
  if (!certFile) {
    if (cfg['agent-trusted-ca-file'])
      throw new ConfigError(
        '--agent-trusted-ca-file: needs --agent-cert-file and --agent-key-file (TLS on the agent port)',
      );
    if (cfg['agent-client-cert-auth'])
      throw new ConfigError(
        '--agent-client-cert-auth: needs --agent-cert-file and --agent-key-file (TLS on the agent port)',
      );
    return undefined;
  }
  // Without an explicit authority every public CA could vouch for any user name.
  if (cfg['agent-client-cert-auth'] && !cfg['agent-trusted-ca-file'])
    throw new ConfigError('--agent-client-cert-auth: needs --agent-trusted-ca-file');
  const { cert, key } = readKeyPair('agent-cert-file', certFile, 'agent-key-file', keyFile);
  const ca = cfg['agent-trusted-ca-file']
    ? readCertificates('agent-trusted-ca-file', cfg['agent-trusted-ca-file']).pem
    : undefined;
  return { cert, key, ca, requireClientCert: cfg['agent-client-cert-auth'] };
}

/**
 * The user named by the agent's client certificate (its CN), or undefined when the agent sent none
 * and none is required. The TLS layer accepts any certificate so that a bad one gets an HTTP 401
 * with a reason the agent can log, instead of an opaque alert.
 */
export function certificateUser(socket: TLSSocket, requireClientCert: boolean): string | undefined {
  const peer = socket.getPeerCertificate();
  const presented = !!peer && Object.keys(peer).length > 0;
  if (!presented) {
    if (requireClientCert) throw new HandshakeError(401, 'client certificate required');
    return undefined;
  }
  if (!socket.authorized) {
    const err = socket.authorizationError as unknown;
    throw new HandshakeError(
      401,
      trustFailure(err) ?? `client certificate refused: ${err instanceof Error ? err.message : String(err)}`,
    );
  }
  const cn = peer.subject?.CN as string | string[] | undefined;
  const user = Array.isArray(cn) ? cn[0] : cn;
  if (!user) throw new HandshakeError(401, 'client certificate has no common name');
  return user;
}
