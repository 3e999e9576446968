import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ERROR_KINDS, errorBody, type ErrorKind } from '../../proto/errors.ts';
import type { ActorError } from '../../actors/runtime/types.ts';
import { allowHeader } from '../../lib/allow.ts';

/** An API failure with its error kind; the app's error handler turns it into `{message, code}`. */
export class ApiError extends Error {
  constructor(
    readonly kind: ErrorKind,
    message: string,
    /** Headers of the answer besides the body, e.g. a 429's `Retry-After`. */
    readonly headers: Record<string, string> = {},
  ) {
    super(message);
    this.name = 'ApiError';
  }
}

/** A 405 for a path served under other methods, with the `Allow` header naming them. */
export function methodNotAllowed(method: string, path: string, methods: Iterable<string>): ApiError {
  const allow = allowHeader(methods);
  return new ApiError('method_not_allowed', `${method} is not allowed on ${path} (it takes ${allow})`, {
    Allow: allow,
  });
}

/** Answers an ApiError: its headers, then its `{message, code}` body. */
export function sendApiError(c: Context, err: ApiError): Response {
  for (const [name, value] of Object.entries(err.headers)) c.header(name, value);
  return sendError(c, err.kind, err.message);
}

export const sendError = (c: Context, kind: ErrorKind, message: string) =>
  c.json(errorBody(kind, message), ERROR_KINDS[kind].status as ContentfulStatusCode);

/**
 * The API error kind of an actor's refusal. Routes let ActorError through, and the app's error
 * handler answers it with this kind and the actor's message.
 */
export function kindOfActorError(err: ActorError): ErrorKind {
  // The code came over the wire, so it may be one this node does not know.
  switch (err.code as string) {
    case 'not_found':
      return 'not_found';
    case 'invalid':
      return 'invalid_argument';
    case 'conflict':
      return 'already_exists';
    case 'unavailable':
      return 'unavailable';
    default:
      return 'internal';
  }
}
