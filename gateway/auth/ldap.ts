import { escapeFilter, InvalidCredentialsError, type Client, type Entry } from 'ldapts';
import {
  DIRECTORY_SEARCH_DEFAULTS,
  type AuthProvider,
  type DirectoryProvider,
  type DirectoryServer,
  type SearchSettings,
} from '../../proto/schemas/resources/authproviders.ts';
import { closeClient, connect, serverUrl } from './ldap-client.ts';
import type { Subject } from './rbac.ts';

// Directory login (LDAP and Active Directory providers) with ldapts: bind as the provider's service
// account, find the user's entry, bind as that entry with the given password, then look up the groups
// that name the entry as a member (with the service account again). Passwords are never logged.

// The user search's `name_attribute` is checked but not used: the subject is named by the login name
// as typed (with `username_prefix`).
const DEFAULTS = DIRECTORY_SEARCH_DEFAULTS;

/** An attribute description (name or OID, options after `;`): configuration, so checked, not escaped. */
const ATTRIBUTE = /^[A-Za-z][A-Za-z0-9-]*(;[A-Za-z0-9-]+)*$|^\d+(\.\d+)+$/;

function settings(given: DirectoryServer['user_search'], defaults: SearchSettings): SearchSettings {
  const s = {
    attribute: given.attribute || defaults.attribute,
    object_class: given.object_class || defaults.object_class,
    name_attribute: given.name_attribute || defaults.name_attribute,
  };
  for (const a of [s.attribute, s.name_attribute])
    if (!ATTRIBUTE.test(a)) throw new Error(`invalid attribute name ${JSON.stringify(a)}`);
  return s;
}

/** The values of one attribute of an entry as strings (attribute names are case-insensitive). */
function values(entry: Entry, attribute: string): string[] {
  const key = Object.keys(entry).find((k) => k.toLowerCase() === attribute.toLowerCase());
  const v = key === undefined ? undefined : entry[key];
  if (v === undefined) return [];
  return (Array.isArray(v) ? v : [v]).map((x) => (Buffer.isBuffer(x) ? x.toString('utf8') : x));
}

/** The user search filter; for AD a bare name also matches `userPrincipalName` with the default UPN domain. */
function userFilter(
  kind: DirectoryProvider['type'],
  server: DirectoryServer,
  s: SearchSettings,
  username: string,
): string {
  if (kind !== 'ad')
    return `(&${escapeFilter`(objectClass=${s.object_class})`}(${s.attribute}=${escapeFilter`${username}`}))`;
  const at = username.indexOf('@');
  const upn = at < 0 && server.default_upn_domain ? `${username}@${server.default_upn_domain}` : username;
  const account = at < 0 ? username : username.slice(0, at);
  const byAccount = `(${s.attribute}=${escapeFilter`${account}`})`;
  const byUpn = upn.includes('@') ? escapeFilter`(userPrincipalName=${upn})` : '';
  return `(&${escapeFilter`(objectClass=${s.object_class})`}${byUpn ? `(|${byAccount}${byUpn})` : byAccount})`;
}

/**
 * One server's answer: the user's group names, or undefined for an unknown user or a wrong password.
 * Without a password (a session refresh) the user is only looked up, not bound as.
 */
async function askServer(
  kind: DirectoryProvider['type'],
  server: DirectoryServer,
  username: string,
  password: string | undefined,
): Promise<{ groups: string[] } | undefined> {
  const user = settings(server.user_search, DEFAULTS[kind].user);
  const group = settings(server.group_search, DEFAULTS[kind].group);
  const client: Client = await connect(server);
  try {
    await client.bind(server.binding.user_dn, server.binding.password);
    const found = await client.search(server.user_search.base_dn, {
      // two are enough to know the name is ambiguous (ldapts returns them despite the size limit)
      scope: 'sub',
      filter: userFilter(kind, server, user, username),
      attributes: ['1.1'],
      sizeLimit: 2,
    });
    if (found.searchEntries.length !== 1) return undefined;
    const dn = found.searchEntries[0]!.dn;
    if (!dn) return undefined; // an empty DN would be an anonymous bind
    if (password !== undefined) {
      try {
        await client.bind(dn, password);
      } catch (err) {
        if (err instanceof InvalidCredentialsError) return undefined;
        throw err;
      }
      await client.bind(server.binding.user_dn, server.binding.password);
    }
    const groups = await client.search(server.group_search.base_dn, {
      scope: 'sub',
      filter: `(&${escapeFilter`(objectClass=${group.object_class})`}(${group.attribute}=${escapeFilter`${dn}`}))`,
      attributes: [group.name_attribute],
    });
    return {
      groups: [...new Set(groups.searchEntries.flatMap((e) => values(e, group.name_attribute).slice(0, 1)))],
    };
  } finally {
    await closeClient(client);
  }
}

/** An error for the log: ldapts result errors carry little more than their class name and code. */
function describe(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  const msg = err.message.trim();
  return err.name && err.name !== 'Error' ? `${err.name}${msg ? `: ${msg}` : ''}` : msg || 'unknown error';
}

const prefixed = (prefix: string | undefined, name: string) => (prefix ? `${prefix}:${name}` : name);

/**
 * Checks credentials against an LDAP or AD provider: its servers in order until one answers. Wrong
 * credentials, an unknown or ambiguous user, or a user outside `allowed_groups` give undefined; when
 * no server answers, an Error naming the provider and the last server error.
 */
export async function directoryLogin(
  provider: AuthProvider,
  username: string,
  password: string,
): Promise<Subject | undefined> {
  if (!password) return undefined; // an empty password would be an anonymous bind
  return ask(provider, username, password);
}

/**
 * The user as the directory has it now (exists, groups), without its password: what a session refresh
 * checks, so a user removed from the directory or from a group loses it at the next refresh.
 */
export function directoryLookup(provider: AuthProvider, username: string): Promise<Subject | undefined> {
  return ask(provider, username, undefined);
}

async function ask(
  provider: AuthProvider,
  username: string,
  password: string | undefined,
): Promise<Subject | undefined> {
  if (provider.type !== 'ldap' && provider.type !== 'ad') return undefined;
  if (!username) return undefined;
  let lastError: unknown;
  for (const server of provider.spec.servers) {
    let answer: { groups: string[] } | undefined;
    try {
      answer = await askServer(provider.type, server, username, password);
    } catch (err) {
      lastError = new Error(`${serverUrl(server)}: ${describe(err)}`);
      continue;
    }
    if (!answer) return undefined;
    const groups = answer.groups.map((g) => prefixed(provider.spec.groups_prefix, g));
    const allowed = provider.spec.allowed_groups ?? [];
    if (allowed.length > 0 && !groups.some((g) => allowed.includes(g))) return undefined;
    return { username: prefixed(provider.spec.username_prefix, username), groups };
  }
  throw new Error(
    `authentication provider "${provider.metadata.name}": no directory server answered; last error: ${(lastError as Error)?.message ?? 'none'}`,
  );
}
