import type { Context } from 'hono';
import type { ContentfulStatusCode } from 'hono/utils/http-status';
import { ERROR_KINDS, errorBody, type ErrorKind } from '../../proto/errors.ts';

/** An API failure with its error kind; the app's error handler turns it into `{message, code}`. */
export class ApiError extends Error {
  constructor(readonly kind: ErrorKind, message: string) { super(message); this.name = 'ApiError'; }
}

export const sendError = (c: Context, kind: ErrorKind, message: string) =>
  c.json(errorBody(kind, message), ERROR_KINDS[kind].status as ContentfulStatusCode);
