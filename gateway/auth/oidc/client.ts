import { createHash } from 'node:crypto';
import * as oidc from 'openid-client';
import { isSafeUrl, type OidcProvider } from '../../../proto/schemas/resources/oidc-provider.ts';

// The relying-party side of an OIDC login, with openid-client: discovery of the provider's endpoints
// (`<server>/.well-known/openid-configuration`), the authorization URL with PKCE (S256), and the code
// exchange, whose ID token is checked for its JWKS signature, issuer, audience, expiry and nonce
// (docs/compatibility.md#oidc). The client secret goes to the token endpoint only, never to a log.

const DEFAULTS = {
  /** Seconds each request to the provider may take (discovery, JWKS, token, userinfo). */
  requestTimeoutSec: 10,
};

/** A provider's endpoints and keys, kept per provider and dropped when its settings change. */
const discovered = new Map<string, { fingerprint: string; config: Promise<oidc.Configuration> }>();

const fingerprint = (p: OidcProvider) =>
  createHash('sha256')
    .update(JSON.stringify([p.spec.server, p.spec.client_id, p.spec.client_secret ?? '']))
    .digest('base64url');

/** The provider's configuration, from discovery on first use (and again after a failure or a change). */
function configurationOf(p: OidcProvider): Promise<oidc.Configuration> {
  const name = p.metadata.name;
  const fp = fingerprint(p);
  const known = discovered.get(name);
  if (known && known.fingerprint === fp) return known.config;
  const config = oidc.discovery(
    new URL(p.spec.server),
    p.spec.client_id,
    p.spec.client_secret ? { client_secret: p.spec.client_secret } : undefined,
    p.spec.client_secret ? oidc.ClientSecretBasic(p.spec.client_secret) : oidc.None(),
    {
      timeout: DEFAULTS.requestTimeoutSec,
      execute: [
        // The ID token's signature is checked against the provider's JWKS even though it came over
        // the back channel: the brief for this login asks for it, and it costs one cached fetch.
        oidc.enableNonRepudiationChecks,
        // Plain http only where the provider schema allows it: loopback (isSafeUrl).
        ...(new URL(p.spec.server).protocol === 'http:' && isSafeUrl(p.spec.server)
          ? [oidc.allowInsecureRequests]
          : []),
      ],
    },
  );
  discovered.set(name, { fingerprint: fp, config });
  config.catch(() => {
    if (discovered.get(name)?.config === config) discovered.delete(name);
  });
  return config;
}

/** What a login must remember between the redirect and the callback. */
interface Started {
  url: URL;
  verifier: string;
  nonce: string;
  state: string;
}

/** The scopes a login asks for: `openid`, the provider's `scopes` and `additional_scopes`. */
const scopesOf = (p: OidcProvider): string =>
  [...new Set(['openid', ...(p.spec.scopes ?? []), ...(p.spec.additional_scopes ?? [])])].join(' ');

/** The authorization URL the browser is sent to, with a fresh state, nonce and PKCE verifier. */
export async function authorizationUrl(p: OidcProvider, redirectUri: string): Promise<Started> {
  const config = await configurationOf(p);
  const verifier = oidc.randomPKCECodeVerifier();
  const state = oidc.randomState();
  const nonce = oidc.randomNonce();
  const url = oidc.buildAuthorizationUrl(config, {
    redirect_uri: redirectUri,
    scope: scopesOf(p),
    response_type: 'code',
    code_challenge: await oidc.calculatePKCECodeChallenge(verifier),
    code_challenge_method: 'S256',
    state,
    nonce,
  });
  return { url, verifier, nonce, state };
}

/**
 * Exchanges the callback's code (with the PKCE verifier) and returns the verified ID token's claims,
 * completed from the userinfo endpoint when the username or groups claim is not in the ID token.
 */
export async function exchange(
  p: OidcProvider,
  callback: URL,
  flow: { verifier: string; nonce: string; state: string },
  wanted: string[],
): Promise<Record<string, unknown>> {
  const config = await configurationOf(p);
  const tokens = await oidc.authorizationCodeGrant(config, callback, {
    pkceCodeVerifier: flow.verifier,
    expectedState: flow.state,
    expectedNonce: flow.nonce,
    idTokenExpected: true,
  });
  const claims = { ...(tokens.claims() ?? {}) } as Record<string, unknown>;
  if (wanted.some((c) => claims[c] === undefined) && tokens.access_token) {
    const info = await oidc.fetchUserInfo(config, tokens.access_token, String(claims.sub));
    for (const [k, value] of Object.entries(info)) if (claims[k] === undefined) claims[k] = value;
  }
  return claims;
}

/**
 * Errors of the provider's answers or of their checks, as openid-client throws them: a refused login.
 * Anything else (a TypeError of fetch, a timeout) means the provider could not be reached.
 */
export const isRefusal = (err: unknown): boolean =>
  err instanceof oidc.ResponseBodyError ||
  err instanceof oidc.AuthorizationResponseError ||
  err instanceof oidc.WWWAuthenticateChallengeError ||
  err instanceof oidc.ClientError;

/** openid-client's reason for a refusal, with the provider's error code and description when given. */
export function reasonOf(err: unknown): string {
  if (err instanceof oidc.ResponseBodyError || err instanceof oidc.AuthorizationResponseError)
    return `${err.error}${err.error_description ? ` (${err.error_description})` : ''}`;
  const e = err as Error;
  const cause = e.cause instanceof Error ? `: ${e.cause.message}` : '';
  return `${e.message}${cause}`;
}
