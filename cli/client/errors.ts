import { CliError, type FailureKind } from '../errors.ts';

/** The failure kind of an HTTP status: 404 not found, 401/403 auth, anything else a failure. */
function kindOfStatus(status: number): FailureKind {
  if (status === 404) return 'not_found';
  if (status === 401 || status === 403) return 'auth';
  return 'failure';
}

/** The server's `message` from an error body `{"message", "code"}`, or a short text of the body. */
export function serverMessage(status: number, text: string): string {
  try {
    const body = JSON.parse(text) as { message?: unknown };
    if (typeof body?.message === 'string' && body.message !== '') return body.message;
  } catch {
    /* not JSON */
  }
  const plain = text.trim().split('\n')[0]?.slice(0, 200);
  return plain ? plain : `HTTP ${status}`;
}

/** An error answer of the API: its status, the server's message, and what was asked. */
export class ApiError extends CliError {
  constructor(
    readonly status: number,
    readonly serverMessage: string,
    /** `GET /api/core/v2/...`: what the message names when the caller gives no better subject. */
    readonly request: string,
  ) {
    super(kindOfStatus(status), `${serverMessage} (${status} from ${request})`);
    this.name = 'ApiError';
  }

  /** The same failure told about `subject` (`check "web"`): `check "web": resource not found`. */
  about(subject: string): CliError {
    return new CliError(this.kind, `${subject}: ${this.serverMessage}`);
  }
}
