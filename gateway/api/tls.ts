import type { IncomingMessage, RequestListener, ServerResponse } from 'node:http';
import type { TLSSocket } from 'node:tls';
import { ConfigError } from '../../proto/flags.ts';
import { errorBody } from '../../proto/errors.ts';
import type { BackendConfig } from '../../proto/schemas/backend-config.ts';
import { readCertificates, readKeyPair, trustFailure } from '../../lib/tls.ts';

// TLS of the REST API port (REST, dashboard, /health, /ready): the backend's --cert-file and
// --key-file, and --trusted-ca-file for client certificates, which are verified when a client
// presents one and never required; they authenticate nobody, the API's own credentials still do
// (docs/compatibility.md#rest-api-over-tls).

export interface ApiServerTls {
  cert: string;
  key: string;
  /** Authorities for client certificates; absent: none are asked for. */
  ca?: string;
}

type TlsFlags = Pick<BackendConfig, 'cert-file' | 'key-file' | 'trusted-ca-file'>;

/** Reads the files once at start (undefined: plain HTTP); a bad file or combination throws a ConfigError naming the flag. */
export function loadApiServerTls(cfg: TlsFlags): ApiServerTls | undefined {
  const certFile = cfg['cert-file'];
  const keyFile = cfg['key-file'];
  if (!certFile !== !keyFile)
    throw new ConfigError(
      certFile ? '--key-file: required with --cert-file' : '--cert-file: required with --key-file',
    );
  if (!certFile) {
    if (cfg['trusted-ca-file'])
      throw new ConfigError('--trusted-ca-file: needs --cert-file and --key-file (TLS on the API port)');
    return undefined;
  }
  const { cert, key } = readKeyPair('cert-file', certFile, 'key-file', keyFile);
  const ca = cfg['trusted-ca-file']
    ? readCertificates('trusted-ca-file', cfg['trusted-ca-file']).pem
    : undefined;
  return { cert, key, ca };
}

/**
 * The https server options and a listener that answers 401 to a client whose certificate does not
 * verify. The TLS layer lets it through (rejectUnauthorized false, so a client without a
 * certificate is served) and the refusal is an HTTP answer with a reason rather than a bare alert.
 */
export function httpsOptions(tls: ApiServerTls) {
  return { cert: tls.cert, key: tls.key, ca: tls.ca, requestCert: !!tls.ca, rejectUnauthorized: false };
}

export function verifyClientCertificate(next: RequestListener): RequestListener {
  return (req: IncomingMessage, res: ServerResponse) => {
    const socket = req.socket as TLSSocket;
    const peer = typeof socket.getPeerCertificate === 'function' ? socket.getPeerCertificate() : undefined;
    const presented = !!peer && Object.keys(peer).length > 0;
    if (!presented || socket.authorized) return next(req, res);
    const err = socket.authorizationError as unknown;
    const reason = trustFailure(err) ?? (err instanceof Error ? err.message : String(err ?? 'not verified'));
    res.writeHead(401, { 'content-type': 'application/json', connection: 'close' });
    res.end(JSON.stringify(errorBody('unauthenticated', `client certificate refused: ${reason}`)));
  };
}
