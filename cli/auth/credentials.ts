import type { CliContext } from '../../proto/schemas/cli-config.ts';
import type { Endpoint } from '../client/http.ts';
import type { ConfigStore } from '../config/store.ts';
import type { Credential } from '../config/settings.ts';
import { CliError } from '../errors.ts';
import { refresh } from './session-api.ts';

/** How the API client authenticates its requests. */
export interface Authenticator {
  /** The `Authorization` value of the next request; a token close to its expiry is refreshed first. */
  header(): Promise<string | undefined>;
  /** After a 401: new credentials if there is a way to get them; true when a retry may succeed. */
  renew(): Promise<boolean>;
}

/** A stored access token is refreshed when it has less than this left. */
const REFRESH_MARGIN_SEC = 10;

const fixed = (header: string | undefined): Authenticator => ({
  header: async () => header,
  renew: async () => false,
});

/**
 * The tokens of a context, refreshed at `/auth/token` before they expire (and once after a 401),
 * each new pair written back to the configuration file at once: a refresh token works once, so
 * losing the new pair would end the session.
 */
class ContextSession implements Authenticator {
  private tokens: { access_token: string; refresh_token?: string; expires_at?: number };
  /** Refreshed by this process already: not again before expiry, however short the tokens' life. */
  private fresh = false;

  constructor(
    private readonly ep: Endpoint,
    private readonly store: ConfigStore,
    private readonly contextName: string,
    ctx: CliContext,
    private readonly now: () => number,
  ) {
    this.tokens = {
      access_token: ctx.access_token!,
      refresh_token: ctx.refresh_token,
      expires_at: ctx.expires_at,
    };
  }

  async header(): Promise<string> {
    const exp = this.tokens.expires_at;
    if (
      !this.fresh &&
      this.tokens.refresh_token &&
      exp !== undefined &&
      exp - this.now() / 1000 < REFRESH_MARGIN_SEC
    )
      await this.refresh();
    return `Bearer ${this.tokens.access_token}`;
  }

  async renew(): Promise<boolean> {
    if (!this.tokens.refresh_token) return false;
    await this.refresh();
    return true;
  }

  private async refresh(): Promise<void> {
    const mine = this.tokens;
    try {
      const next = await refresh(this.ep, {
        access_token: mine.access_token,
        refresh_token: mine.refresh_token!,
      });
      this.tokens = next;
      this.fresh = true;
      this.store.patchContext(this.contextName, next);
    } catch (err) {
      if (!(err instanceof CliError) || err.kind !== 'auth') throw err;
      // Another monitorctl may have refreshed this session a moment ago: take its tokens.
      const stored = this.store.load().contexts[this.contextName];
      if (stored?.access_token && stored.refresh_token && stored.refresh_token !== mine.refresh_token) {
        this.tokens = {
          access_token: stored.access_token,
          refresh_token: stored.refresh_token,
          expires_at: stored.expires_at,
        };
        return;
      }
      throw new CliError(
        'auth',
        `${err.message}; the login of context "${this.contextName}" has ended: run \`monitorctl configure\` to log in again`,
      );
    }
  }
}

/** The authenticator of a command's credential. */
export function authenticator(
  credential: Credential,
  ep: Endpoint,
  store: ConfigStore,
  context: { name: string; value: CliContext } | undefined,
  now: () => number = Date.now,
): Authenticator {
  switch (credential.kind) {
    case 'api-key':
      return fixed(`Key ${credential.key}`);
    case 'token':
      if (credential.refreshable && credential.source === 'context' && context)
        return new ContextSession(ep, store, context.name, context.value, now);
      return fixed(`Bearer ${credential.token}`);
    case 'none':
      // Asked only after a 401: say how to get credentials.
      return {
        header: async () => undefined,
        renew: async () => {
          throw new CliError(
            'auth',
            'no credentials: log in with `monitorctl configure`, or give --api-key or MONITOR_API_KEY',
          );
        },
      };
  }
}
