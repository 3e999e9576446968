import type { AgentConfig } from '../proto/schemas/agent-config.ts';
import { readCertificates, readKeyPair } from '../lib/tls.ts';

/**
 * What the agent hands `ws` for wss URLs. `cert`/`key` present means mutual TLS: the backend then
 * takes the certificate's CN as the user, so no Basic credentials are sent.
 */
export interface AgentTls {
  ca?: string;
  cert?: string;
  key?: string;
  rejectUnauthorized: boolean;
}

/** Reads the TLS files named by the config once, at start; a bad file throws a ConfigError naming its flag. */
export function loadAgentTls(config: AgentConfig): AgentTls {
  const tls: AgentTls = { rejectUnauthorized: !config['insecure-skip-tls-verify'] };
  if (config['trusted-ca-file']) tls.ca = readCertificates('trusted-ca-file', config['trusted-ca-file']).pem;
  if (config['cert-file'] && config['key-file']) {
    const { cert, key } = readKeyPair('cert-file', config['cert-file'], 'key-file', config['key-file']);
    Object.assign(tls, { cert, key });
  }
  return tls;
}
