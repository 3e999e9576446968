// Names of the REST API that its clients rely on (monitorctl, docs/cli.md): the path prefixes of its
// API groups and the response header of paging.

/** Response header carrying the token of the next page; absent on the last page. */
export const CONTINUE_HEADER = 'Monitor-Continue';

/** Path prefix of each API group, by its `api_version`. */
export const API_PREFIXES = {
  'core/v2': '/api/core/v2',
  'authentication/v2': '/api/enterprise/authentication/v2',
} as const;
export type ApiVersion = keyof typeof API_PREFIXES;

/**
 * Path prefix of the dashboard's own read-only API (docs/compatibility.md#dashboard-events-api), a
 * monitor extension: sorted pages and counts the core lists do not give.
 */
export const DASHBOARD_API_PREFIX = '/api/dashboard/v1';
