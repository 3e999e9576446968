import { createHash, randomBytes, timingSafeEqual } from 'node:crypto';
import type { ConfigStore } from '../../../actors/config/store.ts';
import type { EtcdAdapter } from '../../../actors/runtime/etcd.ts';
import type { Logger } from '../../../lib/log.ts';
import { configKeys, etcdKeys } from '../../../proto/names.ts';
import type { AuthProvider } from '../../../proto/schemas/resources/authproviders.ts';
import { OIDC_DEFAULTS, type OidcProvider } from '../../../proto/schemas/resources/oidc-provider.ts';
import { withUsersGroup } from '../login.ts';
import { authorizationUrl, exchange, isRefusal, reasonOf } from './client.ts';

// The OIDC login (docs/compatibility.md#oidc): `begin` remembers the state, nonce and PKCE verifier in
// etcd (any node may receive the callback) under a digest of the state, bound to a random browser
// secret the route sets as a cookie; `finish` takes that record once, exchanges the code and maps the
// claims to a subject; the tokens then wait once, briefly, for the dashboard (`handOff`/`takeHandoff`).

const DEFAULTS = {
  /** Seconds a browser has to come back from the provider. */
  flowTtlSec: 600,
  /** Seconds the dashboard has to collect the tokens of a finished login. */
  handoffTtlSec: 60,
};

export const OIDC_FLOW_TTL_SEC = DEFAULTS.flowTtlSec;

/** A login refused: `kind` is the API error it answers with. */
export class OidcLoginError extends Error {
  constructor(
    readonly kind: 'invalid_argument' | 'unauthenticated' | 'not_found' | 'unavailable',
    message: string,
  ) {
    super(message);
    this.name = 'OidcLoginError';
  }
}

interface Flow {
  provider: string;
  verifier: string;
  nonce: string;
  redirect_uri: string;
  /** Digest of the browser secret (the cookie). */
  browser: string;
}

interface Handoff {
  browser: string;
  body: Record<string, unknown>;
}

/** Who an OIDC login names; `provider` ties the session to it (login.ts `current`). */
interface OidcSubject {
  username: string;
  groups: string[];
  provider: string;
}

const digest = (s: string) => createHash('sha256').update(s).digest('base64url');
const same = (a: string, b: string) => {
  const [x, y] = [Buffer.from(a), Buffer.from(b)];
  return x.length === y.length && timingSafeEqual(x, y);
};
const prefixed = (prefix: string | undefined, name: string) => (prefix ? `${prefix}:${name}` : name);

/** The groups a claim holds: a list of strings, or one string; anything else holds none. */
function groupsIn(value: unknown): string[] {
  if (typeof value === 'string') return value ? [value] : [];
  if (!Array.isArray(value)) return [];
  return value.filter((g): g is string => typeof g === 'string' && g !== '');
}

export class OidcLogin {
  constructor(
    private readonly etcd: EtcdAdapter,
    private readonly config: ConfigStore,
    private readonly log: Logger,
  ) {}

  /** The configured OIDC providers, in name order. */
  providers(): OidcProvider[] {
    return this.config
      .list<AuthProvider>(configKeys.prefix('authproviders'))
      .filter((p): p is OidcProvider => p.type === 'oidc');
  }

  /** The provider a login names, or the only one when it names none. */
  private provider(name: string | undefined): OidcProvider {
    const all = this.providers();
    if (!name) {
      if (all.length === 1) return all[0]!;
      throw new OidcLoginError(
        all.length ? 'invalid_argument' : 'not_found',
        all.length
          ? `several OIDC providers are configured (${all.map((p) => p.metadata.name).join(', ')}): name one with ?provider=`
          : 'no OIDC provider is configured',
      );
    }
    const p = all.find((x) => x.metadata.name === name);
    if (!p) throw new OidcLoginError('not_found', `OIDC provider "${name}" not found`);
    return p;
  }

  /**
   * Starts a login: the provider's authorization URL, and the browser secret to set as a cookie.
   * `defaultRedirect` is this API's callback URL, used when the provider sets no `redirect_uri`.
   */
  async begin(
    name: string | undefined,
    defaultRedirect: string,
  ): Promise<{ location: string; browser: string }> {
    const p = this.provider(name);
    const redirect = p.spec.redirect_uri || defaultRedirect;
    let started;
    try {
      started = await authorizationUrl(p, redirect);
    } catch (err) {
      this.log.warn('OIDC discovery failed', { provider: p.metadata.name, error: reasonOf(err) });
      throw new OidcLoginError(
        'unavailable',
        `OIDC provider "${p.metadata.name}" cannot be used: discovery at ${p.spec.server} failed: ${reasonOf(err)}`,
      );
    }
    const browser = randomBytes(32).toString('base64url');
    const flow: Flow = {
      provider: p.metadata.name,
      verifier: started.verifier,
      nonce: started.nonce,
      redirect_uri: redirect,
      browser: digest(browser),
    };
    await this.etcd.putWithLease(
      etcdKeys.oidcFlow(digest(started.state)),
      JSON.stringify(flow),
      DEFAULTS.flowTtlSec,
    );
    return { location: started.url.href, browser };
  }

  /** Takes a record once: the first caller gets it, any later one (or another node) nothing. */
  private async takeOnce<T>(key: string): Promise<T | undefined> {
    const rec = await this.etcd.get(key);
    if (!rec) return undefined;
    const { deleted } = await this.etcd.deleteReporting(key);
    return deleted ? (JSON.parse(rec.value) as T) : undefined;
  }

  /**
   * Finishes a login from the callback's query and the browser's cookie: the subject it names, with
   * the provider's prefixes. Every refusal is an OidcLoginError with a message saying why.
   */
  async finish(query: URLSearchParams, browser: string | undefined): Promise<OidcSubject> {
    const state = query.get('state');
    if (!state) throw new OidcLoginError('invalid_argument', 'the OIDC callback has no state parameter');
    const flow = await this.takeOnce<Flow>(etcdKeys.oidcFlow(digest(state)));
    if (!flow)
      throw new OidcLoginError(
        'invalid_argument',
        'unknown, used or expired OIDC login state: start the login again',
      );
    if (!browser || !same(flow.browser, digest(browser)))
      throw new OidcLoginError(
        'invalid_argument',
        'the OIDC login was started in another browser (its cookie does not match the state): start the login again',
      );
    const p = this.providers().find((x) => x.metadata.name === flow.provider);
    if (!p) throw new OidcLoginError('not_found', `OIDC provider "${flow.provider}" no longer exists`);
    if (query.get('error'))
      throw new OidcLoginError(
        'unauthenticated',
        `OIDC provider "${p.metadata.name}" refused the login: ${query.get('error')}${query.get('error_description') ? ` (${query.get('error_description')})` : ''}`,
      );
    const callback = new URL(flow.redirect_uri);
    for (const [k, value] of query) callback.searchParams.append(k, value);
    const usernameClaim = p.spec.username_claim || OIDC_DEFAULTS.username_claim;
    const groupsClaim = p.spec.groups_claim ?? '';
    let claims: Record<string, unknown>;
    try {
      claims = await exchange(
        p,
        callback,
        { ...flow, state },
        groupsClaim ? [usernameClaim, groupsClaim] : [usernameClaim],
      );
    } catch (err) {
      const reason = reasonOf(err);
      this.log.warn('OIDC login refused', { provider: p.metadata.name, error: reason });
      throw isRefusal(err)
        ? new OidcLoginError('unauthenticated', `OIDC login with "${p.metadata.name}" failed: ${reason}`)
        : new OidcLoginError(
            'unavailable',
            `OIDC provider "${p.metadata.name}" could not be reached: ${reason}`,
          );
    }
    const name = claims[usernameClaim];
    if ((typeof name !== 'string' && typeof name !== 'number') || name === '')
      throw new OidcLoginError(
        'unauthenticated',
        `the ID token of "${p.metadata.name}" has no "${usernameClaim}" claim (the provider's username_claim)`,
      );
    const groups = groupsClaim
      ? groupsIn(claims[groupsClaim]).map((g) => prefixed(p.spec.groups_prefix, g))
      : [];
    const username = prefixed(p.spec.username_prefix, String(name));
    this.log.info('OIDC login', { provider: p.metadata.name, username, groups: groups.length });
    return { username, groups: withUsersGroup(groups), provider: p.metadata.name };
  }

  /** Keeps a finished login's answer for the dashboard of the same browser; the key it redeems it with. */
  async handOff(browser: string, body: Record<string, unknown>): Promise<string> {
    const key = randomBytes(32).toString('base64url');
    const rec: Handoff = { browser: digest(browser), body };
    await this.etcd.putWithLease(
      etcdKeys.oidcHandoff(digest(key)),
      JSON.stringify(rec),
      DEFAULTS.handoffTtlSec,
    );
    return key;
  }

  /** A handed-off answer, once, to the browser that finished the login. */
  async takeHandoff(key: string, browser: string | undefined): Promise<Record<string, unknown>> {
    const rec = await this.takeOnce<Handoff>(etcdKeys.oidcHandoff(digest(key)));
    if (!rec || !browser || !same(rec.browser, digest(browser)))
      throw new OidcLoginError('unauthenticated', 'unknown, used or expired OIDC handoff: sign in again');
    return rec.body;
  }
}
