import * as v from 'valibot';
import { Name } from '../common.ts';

// What every authentication provider kind (LDAP, AD, OIDC) wraps its spec in.

export const ProviderApiVersion = v.literal('authentication/v2', 'api_version must be authentication/v2');

export const ProviderMetadata = v.object({
  name: Name,
  labels: v.optional(v.record(v.string(), v.string())),
  annotations: v.optional(v.record(v.string(), v.string())),
  created_by: v.optional(v.string()),
});
