import { DEFAULT_REDACT } from '../schemas/entity.ts';

// The keys the legacy generation hid in settings and clients when a client named no `redact` list of
// its own (that list replaces this one, it does not add to it): the current generation's nine, then
// thirteen of its own.
export const LEGACY_REDACT: readonly string[] = [
  ...DEFAULT_REDACT,
  'routing_key',
  'access_token_read',
  'access_token_write',
  'access_token_path',
  'webhook_url',
  'nickserv_password',
  'channel_password',
  'community',
  'keystore_password',
  'truststore_password',
  'proxy_password',
  'access_key_id',
  'secret_access_key',
];

/** The keys hidden in a client definition: its own `redact` list, which replaces the default, else the list above. */
export const legacyRedactFields = (def: { redact?: unknown }): readonly string[] =>
  Array.isArray(def.redact) ? (def.redact as string[]) : LEGACY_REDACT;
