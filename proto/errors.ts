// Error bodies of every HTTP answer the backend gives: `{"message": "...", "code": <number>}`.
// The numbers follow the reference's error kinds (docs/compatibility.md#error-format); the HTTP status is
// derived from the kind.

export const ERROR_KINDS = {
  internal: { code: 0, status: 500 },
  invalid_argument: { code: 1, status: 400 },
  not_found: { code: 2, status: 404 },
  already_exists: { code: 3, status: 409 },
  permission_denied: { code: 4, status: 403 },
  unauthenticated: { code: 5, status: 401 },
  deadline_exceeded: { code: 6, status: 504 },
  payment_required: { code: 7, status: 402 },
  precondition_failed: { code: 8, status: 412 },
  payload_too_large: { code: 9, status: 413 },
  unavailable: { code: 10, status: 503 },
  conflict: { code: 11, status: 409 },
  too_many_requests: { code: 12, status: 429 },
  method_not_allowed: { code: 13, status: 405 },
} as const;
export type ErrorKind = keyof typeof ERROR_KINDS;

interface ErrorBody {
  message: string;
  code: number;
}

export const errorBody = (kind: ErrorKind, message: string): ErrorBody => ({
  message,
  code: ERROR_KINDS[kind].code,
});

const byStatus = new Map<number, ErrorKind>(
  Object.entries(ERROR_KINDS)
    .reverse()
    .map(([k, v]) => [v.status, k as ErrorKind]),
);

/** The error kind of an HTTP status (for answers produced outside the API's own handlers). */
export const kindOfStatus = (status: number): ErrorKind =>
  byStatus.get(status) ?? (status >= 500 ? 'internal' : 'invalid_argument');
