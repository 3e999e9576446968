import * as v from 'valibot';
import { TokenAnswer } from '../../proto/schemas/cli-config.ts';
import { describeIssues } from '../../proto/schemas/common.ts';
import { ApiError, serverMessage } from '../client/errors.ts';
import { send, urlOf, type Endpoint } from '../client/http.ts';
import { CliError } from '../errors.ts';

// The API's login routes (docs/compatibility.md#authentication): `/auth` with Basic credentials,
// `/auth/token` to refresh, `/auth/logout`. Passwords and tokens go only into headers and bodies,
// never into a message.

const JSON_TYPE = { 'Content-Type': 'application/json', Accept: 'application/json' };

function tokensOf(text: string, what: string): TokenAnswer {
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch {
    throw new CliError('failure', `${what}: the answer is not JSON`);
  }
  const r = v.safeParse(TokenAnswer, body);
  if (!r.success) throw new CliError('failure', `${what}: unexpected answer (${describeIssues(r.issues)})`);
  return r.output;
}

/** Logs in with a user name and password: the session's tokens. */
export async function login(ep: Endpoint, username: string, password: string): Promise<TokenAnswer> {
  const res = await send({
    method: 'GET',
    url: urlOf(ep, '/auth'),
    headers: {
      Accept: 'application/json',
      Authorization: `Basic ${Buffer.from(`${username}:${password}`, 'utf8').toString('base64')}`,
    },
    timeoutMs: ep.timeoutMs,
    tls: ep.tls,
  });
  const what = `login as "${username}" at ${ep.base.origin}`;
  if (res.status !== 200)
    throw new ApiError(res.status, serverMessage(res.status, res.text), 'GET /auth').about(what);
  return tokensOf(res.text, what);
}

/** New tokens for a session (a refresh token works once). */
export async function refresh(
  ep: Endpoint,
  tokens: { access_token: string; refresh_token: string },
): Promise<TokenAnswer> {
  const res = await send({
    method: 'POST',
    url: urlOf(ep, '/auth/token'),
    headers: { ...JSON_TYPE, Authorization: `Bearer ${tokens.access_token}` },
    body: JSON.stringify({ refresh_token: tokens.refresh_token }),
    timeoutMs: ep.timeoutMs,
    tls: ep.tls,
  });
  const what = `token refresh at ${ep.base.origin}`;
  if (res.status !== 200) {
    const err = new ApiError(res.status, serverMessage(res.status, res.text), 'POST /auth/token');
    // 400 `invalid access token` and 401 both mean the session cannot go on.
    throw res.status === 400 || res.status === 401
      ? new CliError('auth', `${what}: ${err.serverMessage}`)
      : err;
  }
  return tokensOf(res.text, what);
}

/** Ends the session on the server; false when it had ended already (401). */
export async function logout(ep: Endpoint, accessToken: string): Promise<boolean> {
  const res = await send({
    method: 'POST',
    url: urlOf(ep, '/auth/logout'),
    headers: { Accept: 'application/json', Authorization: `Bearer ${accessToken}` },
    timeoutMs: ep.timeoutMs,
    tls: ep.tls,
  });
  if (res.status === 200 || res.status === 204) return true;
  if (res.status === 401) return false;
  throw new ApiError(res.status, serverMessage(res.status, res.text), 'POST /auth/logout');
}
