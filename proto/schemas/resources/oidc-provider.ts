import * as v from 'valibot';
import { ProviderApiVersion, ProviderMetadata } from './provider-envelope.ts';

// The `oidc` kind of authentication provider (docs/compatibility.md#oidc): Sensu's field names. The
// client secret is stored but never shown (docs/compatibility.md#oidc).

/** Hosts a provider may be reached on without TLS: this machine only (development and tests). */
const LOOPBACK = new Set(['127.0.0.1', '[::1]', 'localhost']);

/** Whether a URL is one the backend may talk to or send browsers to: https, or http on loopback. */
export const isSafeUrl = (s: string): boolean => {
  let u: URL;
  try {
    u = new URL(s);
  } catch {
    return false;
  }
  return u.protocol === 'https:' || (u.protocol === 'http:' && LOOPBACK.has(u.hostname));
};

const SafeUrl = (field: string, orEmpty = false) =>
  v.pipe(
    v.string(`${field} must be a URL`),
    v.check(
      (s) => (orEmpty && s === '') || isSafeUrl(s),
      `${field} must be an https URL (http only on 127.0.0.1, [::1] or localhost)`,
    ),
  );

const Words = (field: string) =>
  v.array(
    v.pipe(v.string(), v.regex(/^[\x21\x23-\x5b\x5d-\x7e]+$/, `${field} holds scope names without spaces`)),
    `${field} must be a list of strings`,
  );

const Claim = (field: string) =>
  v.pipe(v.string(`${field} must be a string`), v.minLength(1, `${field} must not be empty`));

export const OidcProvider = v.object({
  type: v.literal('oidc'),
  api_version: ProviderApiVersion,
  metadata: ProviderMetadata,
  spec: v.object({
    client_id: v.pipe(
      v.string('spec.client_id is required and must be a string'),
      v.minLength(1, 'spec.client_id must not be empty'),
    ),
    /** Optional in a PUT that replaces a provider: the stored secret is kept. */
    client_secret: v.optional(v.string('spec.client_secret must be a string')),
    server: SafeUrl('spec.server'),
    redirect_uri: v.optional(SafeUrl('spec.redirect_uri', true)),
    scopes: v.optional(Words('spec.scopes')),
    additional_scopes: v.optional(Words('spec.additional_scopes')),
    username_claim: v.optional(Claim('spec.username_claim')),
    groups_claim: v.optional(v.string('spec.groups_claim must be a string')),
    username_prefix: v.optional(v.string()),
    groups_prefix: v.optional(v.string()),
    disable_offline_access: v.optional(v.boolean('spec.disable_offline_access must be true or false')),
  }),
});
export type OidcProvider = v.InferOutput<typeof OidcProvider>;

/** What a login uses when the provider leaves a field out (docs/compatibility.md#oidc). */
export const OIDC_DEFAULTS = {
  scopes: ['openid'],
  username_claim: 'sub',
} as const;

/** A provider as stored: every field present, with the values the login uses. */
export function withOidcDefaults(p: OidcProvider): OidcProvider {
  const s = p.spec;
  return {
    ...p,
    spec: {
      ...s,
      redirect_uri: s.redirect_uri ?? '',
      scopes: s.scopes ?? [...OIDC_DEFAULTS.scopes],
      additional_scopes: s.additional_scopes ?? [],
      username_claim: s.username_claim ?? OIDC_DEFAULTS.username_claim,
      groups_claim: s.groups_claim ?? '',
      username_prefix: s.username_prefix ?? '',
      groups_prefix: s.groups_prefix ?? '',
      disable_offline_access: s.disable_offline_access ?? false,
    },
  };
}

/** A provider as the API shows it: the client secret left out (docs/compatibility.md#oidc). */
export function withoutClientSecret(p: OidcProvider): OidcProvider {
  const { client_secret: _secret, ...spec } = p.spec;
  return { ...p, spec };
}
