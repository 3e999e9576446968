import { ConfigError } from '../../proto/flags.ts';
import type { BackendConfig } from '../../proto/schemas/backend-config.ts';
import { readCertificates, readKeyPair } from '../../lib/tls.ts';

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
