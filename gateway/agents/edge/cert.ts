import type { TLSSocket } from 'node:tls';
import { trustFailure } from '../../../lib/tls.ts';
import type { CertVerdict } from './protocol.ts';

/**
 * The user named by the agent's client certificate (its CN), none when the agent sent none and none
 * is required, or a 401 with its reason. The TLS layer accepts any certificate so that a bad one gets
 * an HTTP 401 with a reason the agent can log, instead of an opaque alert.
 */
export function certificateVerdict(socket: TLSSocket, requireClientCert: boolean): CertVerdict {
  const peer = socket.getPeerCertificate();
  const presented = !!peer && Object.keys(peer).length > 0;
  if (!presented) return requireClientCert ? { status: 401, message: 'client certificate required' } : {};
  if (!socket.authorized) {
    const err = socket.authorizationError as unknown;
    return {
      status: 401,
      message:
        trustFailure(err) ??
        `client certificate refused: ${err instanceof Error ? err.message : String(err)}`,
    };
  }
  const cn = peer.subject?.CN as string | string[] | undefined;
  const user = Array.isArray(cn) ? cn[0] : cn;
  if (!user) return { status: 401, message: 'client certificate has no common name' };
  return { user };
}
