import * as v from 'valibot';
import type { ConfigStore } from '../../actors/config/store.ts';
import { configKeys, etcdKeys } from '../../proto/names.ts';
import type { AuthProvider } from '../../proto/schemas/resources/authproviders.ts';
import type { Logger } from '../../lib/log.ts';
import { verifyNothing, type VerifiedCache } from './passwords.ts';
import type { Subject } from './rbac.ts';
import { USERS_GROUP } from './seed.ts';
import { StoredUser } from './users.ts';

/** Who logged in; a directory user also keeps its provider and the name it typed (for refreshes). */
interface LoggedIn extends Subject {
  provider?: string;
  login?: string;
}

/** Checks a user's credentials against one directory provider; undefined when they do not match. */
interface Directory {
  login(provider: AuthProvider, username: string, password: string): Promise<Subject | undefined>;
  /** The user as the directory has it now, without a password check. */
  lookup(provider: AuthProvider, username: string): Promise<Subject | undefined>;
}

/** Every authenticated subject is also in `system:users`, which lets it read and change itself. */
export const withUsersGroup = (groups: readonly string[]) =>
  groups.includes(USERS_GROUP) ? [...groups] : [...groups, USERS_GROUP];

/**
 * Who someone is: local users first (a slow KDF, cached for repeats), then each configured LDAP or
 * AD provider in name order. A disabled local user is refused without asking the directories.
 */
export class Authenticator {
  constructor(
    private readonly config: ConfigStore,
    private readonly passwords: VerifiedCache,
    private readonly directory: Directory | undefined,
    private readonly log: Logger,
  ) {}

  /** The subject of a local user as of now (current groups); undefined if missing or disabled. */
  localSubject(username: string): Subject | undefined {
    const r = v.safeParse(StoredUser, this.config.get(etcdKeys.user(username)));
    if (!r.success || r.output.disabled) return undefined;
    return { username, groups: withUsersGroup(r.output.groups) };
  }

  /**
   * Whether a session may go on, and with which groups: a local user must still exist and be
   * enabled; a directory user must still be found by its provider (groups re-read); an OIDC user's
   * provider must still exist.
   */
  async current(session: LoggedIn): Promise<LoggedIn | undefined> {
    if (!session.provider) return this.localSubject(session.username);
    const provider = this.config.get<AuthProvider>(configKeys.cluster('authproviders', session.provider));
    // An OIDC user is not asked for again before its next login: its session goes on with the groups
    // it logged in with while its provider exists (docs/compatibility.md#oidc).
    if (provider?.type === 'oidc') return { ...session, groups: withUsersGroup(session.groups) };
    if (!provider || !this.directory || !session.login) return undefined;
    const who = await this.directory.lookup(provider, session.login);
    return who
      ? {
          username: who.username,
          groups: withUsersGroup(who.groups),
          provider: session.provider,
          login: session.login,
        }
      : undefined;
  }

  /**
   * A failure costs one password hash whether the user is local, disabled, a directory's or unknown,
   * so its timing does not tell which (docs/compatibility.md#authentication).
   */
  async login(username: string, password: string): Promise<LoggedIn | undefined> {
    const stored = v.safeParse(StoredUser, this.config.get(etcdKeys.user(username)));
    if (stored.success) {
      const good = await this.passwords.verify(password, stored.output.password_hash);
      return good && !stored.output.disabled
        ? { username, groups: withUsersGroup(stored.output.groups) }
        : undefined;
    }
    // Directories answer in their own time; an unknown name still pays one local hash on top.
    const who = await this.directoryLogin(username, password);
    if (!who) await verifyNothing(password);
    return who;
  }

  private async directoryLogin(username: string, password: string): Promise<LoggedIn | undefined> {
    if (!this.directory || !password) return undefined;
    for (const provider of this.config.list<AuthProvider>(configKeys.prefix('authproviders'))) {
      if (provider.type !== 'ldap' && provider.type !== 'ad') continue;
      try {
        const who = await this.directory.login(provider, username, password);
        if (who)
          return {
            username: who.username,
            groups: withUsersGroup(who.groups),
            provider: provider.metadata.name,
            login: username,
          };
      } catch (err) {
        this.log.warn('directory login failed', {
          provider: provider.metadata.name,
          error: (err as Error).message,
        });
      }
    }
    return undefined;
  }
}
