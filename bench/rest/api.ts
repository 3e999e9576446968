/** bench rest: helpers on the API (a Bearer token, walking the event pages). */
import { ADMIN, type Backend } from '../../test/harness/index.ts';
import { connect } from '../lib/http1.ts';
import { API } from './config.ts';
import type { Ctx } from './windows.ts';
import { authHeader } from './workload.ts';

// --- helpers on the API -------------------------------------------------------------------------

export async function bearerToken(backend: Backend): Promise<string> {
  const res = await backend.get<{ access_token?: string }>('/auth', {
    headers: {
      Authorization: 'Basic ' + Buffer.from(`${ADMIN.username}:${ADMIN.password}`).toString('base64'),
    },
  });
  if (res.status !== 200 || !res.body?.access_token)
    throw new Error(`GET /auth answered ${res.status}: ${JSON.stringify(res.body).slice(0, 200)}`);
  return `Bearer ${res.body.access_token}`;
}

/** Walks the event list of namespace default: count of events and the continue tokens of the first pages. */
export async function walkEvents(
  ctx: Ctx,
  credential: string,
  limit: number,
  pages: number,
): Promise<{ total: number; tokens: Array<string | undefined> }> {
  const conn = connect(ctx.cfg.client, ctx.backend.apiUrl);
  try {
    const tokens: Array<string | undefined> = [undefined];
    let total = 0,
      token: string | undefined;
    for (;;) {
      const res = await conn.request(
        'GET',
        `${API}/events?limit=${limit}${token ? `&continue=${token}` : ''}`,
        authHeader(credential),
      );
      if (res.status !== 200)
        throw new Error(`listing events answered ${res.status}: ${res.body.toString('utf8').slice(0, 200)}`);
      total += (JSON.parse(res.body.toString('utf8')) as unknown[]).length;
      token = res.headers['monitor-continue'];
      if (!token) break;
      if (tokens.length < pages) tokens.push(token);
    }
    return { total, tokens };
  } finally {
    conn.close();
  }
}
