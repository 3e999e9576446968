import * as v from 'valibot';
import { ProviderApiVersion, ProviderMetadata } from './provider-envelope.ts';
import { OidcProvider, withOidcDefaults } from './oidc-provider.ts';

// Authentication providers (authentication/v2), docs/compatibility.md#authentication-providers. The PUT
// example spells the kind `Type`; responses spell it `type`. Both spellings are accepted and stored as
// `type`.

const Search = v.object({
  base_dn: v.pipe(v.string(), v.minLength(1, 'base_dn must not be empty')),
  attribute: v.optional(v.string()),
  name_attribute: v.optional(v.string()),
  object_class: v.optional(v.string()),
});

const Server = v.object({
  host: v.pipe(v.string(), v.minLength(1, 'host must not be empty')),
  port: v.optional(v.pipe(v.number(), v.integer(), v.minValue(1), v.maxValue(65535))),
  security: v.optional(v.picklist(['insecure', 'tls', 'starttls'], 'security is insecure, tls or starttls')),
  insecure: v.optional(v.boolean()),
  trusted_ca_file: v.optional(v.string()),
  client_cert_file: v.optional(v.string()),
  client_key_file: v.optional(v.string()),
  default_upn_domain: v.optional(v.string()),
  include_nested_groups: v.optional(v.boolean()),
  binding: v.object({ user_dn: v.string(), password: v.string() }),
  group_search: Search,
  user_search: Search,
});
export type DirectoryServer = v.InferOutput<typeof Server>;

export const DirectoryProvider = v.object({
  type: v.picklist(['ldap', 'ad']),
  api_version: ProviderApiVersion,
  metadata: ProviderMetadata,
  spec: v.object({
    servers: v.pipe(v.array(Server), v.minLength(1, 'spec.servers needs at least one server')),
    groups_prefix: v.optional(v.string(), ''),
    username_prefix: v.optional(v.string(), ''),
    allowed_groups: v.optional(v.array(v.string())),
  }),
});
export type DirectoryProvider = v.InferOutput<typeof DirectoryProvider>;

export type AuthProvider = DirectoryProvider | OidcProvider;

/** The attributes a PUT must hold (docs/compatibility.md#authentication-providers), as paths, for a directory provider. */
const REQUIRED_DIRECTORY = [
  'type',
  'api_version',
  'metadata.name',
  'spec.servers[].host',
  'spec.servers[].binding.user_dn',
  'spec.servers[].binding.password',
  'spec.servers[].group_search.base_dn',
  'spec.servers[].user_search.base_dn',
];

const has = (o: unknown, k: string): o is Record<string, unknown> =>
  typeof o === 'object' &&
  o !== null &&
  k in o &&
  (o as Record<string, unknown>)[k] !== undefined &&
  (o as Record<string, unknown>)[k] !== null;

/**
 * The kind a payload names, lower-cased; '' when it names none. Not String(): the payload is not
 * validated yet, and String() of a parsed `{"toString": 1}` throws.
 */
const kindIn = (body: Record<string, unknown>) => {
  const t = body.type ?? body.Type;
  return typeof t === 'string' ? t.toLowerCase() : '';
};

/** Which required attributes a provider payload lacks (docs/compatibility.md#authentication-providers). */
export function missingProviderAttributes(body: Record<string, unknown>): string[] {
  const missing: string[] = [];
  if (!has(body, 'type') && !has(body, 'Type')) missing.push('type');
  if (!has(body, 'api_version')) missing.push('api_version');
  if (!has(body, 'metadata') || !has(body.metadata, 'name')) missing.push('metadata.name');
  if (kindIn(body) === 'oidc') {
    if (!has(body, 'spec')) missing.push('spec');
    return missing;
  }
  const spec = has(body, 'spec') ? (body.spec as Record<string, unknown>) : undefined;
  const servers = spec && Array.isArray(spec.servers) ? (spec.servers as unknown[]) : undefined;
  if (!servers || servers.length === 0) {
    missing.push(...REQUIRED_DIRECTORY.filter((p) => p.startsWith('spec.')));
    return missing;
  }
  servers.forEach((srv: unknown, i: number) => {
    if (!has(srv, 'host')) missing.push(`spec.servers[${i}].host`);
    if (!has(srv, 'binding') || !has(srv.binding, 'user_dn'))
      missing.push(`spec.servers[${i}].binding.user_dn`);
    if (!has(srv, 'binding') || !has(srv.binding, 'password'))
      missing.push(`spec.servers[${i}].binding.password`);
    if (!has(srv, 'group_search') || !has(srv.group_search, 'base_dn'))
      missing.push(`spec.servers[${i}].group_search.base_dn`);
    if (!has(srv, 'user_search') || !has(srv.user_search, 'base_dn'))
      missing.push(`spec.servers[${i}].user_search.base_dn`);
  });
  return missing;
}

/** Normalizes the kind's spelling (`Type`, `AD`) before schema validation. */
export function normalizeProvider(body: Record<string, unknown>): Record<string, unknown> {
  const { Type, ...rest } = body;
  const t = rest.type ?? Type;
  // A kind that is no string goes on as it is, for the schema to refuse it.
  return { ...rest, type: typeof t === 'string' ? t.toLowerCase() : t };
}

export const AuthProviderSchema = v.variant(
  'type',
  [DirectoryProvider, OidcProvider],
  'type is ldap, AD or OIDC',
);

export interface SearchSettings {
  attribute: string;
  object_class: string;
  name_attribute: string;
}

/** What a directory search uses when the provider leaves a field out. */
export const DIRECTORY_SEARCH_DEFAULTS: Record<
  DirectoryProvider['type'],
  { user: SearchSettings; group: SearchSettings }
> = {
  ldap: {
    user: { attribute: 'uid', object_class: 'person', name_attribute: 'cn' },
    group: { attribute: 'member', object_class: 'groupOfNames', name_attribute: 'cn' },
  },
  ad: {
    user: { attribute: 'sAMAccountName', object_class: 'person', name_attribute: 'displayName' },
    group: { attribute: 'member', object_class: 'group', name_attribute: 'cn' },
  },
};

/**
 * A provider as stored and shown: every server field present (answers carry them all:
 * docs/compatibility.md#authentication-providers), with the values the login uses when the payload left them
 * out.
 */
export function withProviderDefaults(p: AuthProvider): AuthProvider {
  if (p.type === 'oidc') return withOidcDefaults(p);
  const d = DIRECTORY_SEARCH_DEFAULTS[p.type];
  return {
    ...p,
    spec: {
      ...p.spec,
      servers: p.spec.servers.map((s) => {
        const security = s.security ?? 'tls';
        return {
          ...s,
          port: s.port ?? (security === 'tls' ? 636 : 389),
          security,
          insecure: s.insecure ?? false,
          trusted_ca_file: s.trusted_ca_file ?? '',
          client_cert_file: s.client_cert_file ?? '',
          client_key_file: s.client_key_file ?? '',
          default_upn_domain: s.default_upn_domain ?? '',
          group_search: { ...d.group, ...definedOnly(s.group_search) },
          user_search: { ...d.user, ...definedOnly(s.user_search) },
        };
      }),
    },
  };
}

const definedOnly = <T extends object>(o: T): T =>
  Object.fromEntries(Object.entries(o).filter(([, x]) => x !== undefined && x !== '')) as T;
