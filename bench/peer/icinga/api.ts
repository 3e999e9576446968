/**
 * One-off requests to an instance's REST API over `node:https` (readiness polls, checks): the API
 * is HTTPS only, behind our self-made CA, so the certificate is not verified; Basic auth.
 */
import https from 'node:https';

export const basicAuth = (user: string, password: string): string =>
  `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`;

interface ApiAnswer {
  status: number;
  body: string;
}

/** GET `path`; rejects on a connection error or after `timeoutMs`. */
export function apiGet(url: string, path: string, auth: string, timeoutMs = 2000): Promise<ApiAnswer> {
  return new Promise((resolve, reject) => {
    const req = https.get(
      new URL(path, url),
      {
        headers: { Authorization: auth, Accept: 'application/json' },
        rejectUnauthorized: false,
        agent: false,
        timeout: timeoutMs,
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on('data', (c: Buffer) => chunks.push(c));
        res.on('end', () =>
          resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }),
        );
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error(`GET ${path}: no answer within ${timeoutMs} ms`)));
    req.on('error', reject);
  });
}
