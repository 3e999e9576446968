/**
 * Helpers of the REST API suites: calls as the administrator, authorization headers, fresh names,
 * and the checks every answer gets (an error is exactly `{message, code}` with the code of its
 * status; a 201 is empty).
 */
import * as assert from 'uvu/assert';
import type { Backend } from './backend.ts';
import type { JsonResponse } from './http.ts';

export type Body = Record<string, any>;

/** A call to `/api/core/v2<path>` as the administrator (the backend's default credential). */
export const coreApi =
  (backend: () => Backend) =>
  <B = any>(
    path: string,
    method = 'GET',
    body?: unknown,
    headers?: Record<string, string>,
  ): Promise<JsonResponse<B>> =>
    backend().get<B>(`/api/core/v2${path}`, {
      method,
      headers,
      ...(body === undefined ? {} : { body: body as object }),
    });

/** Authorization headers: a user's password, a token, an API key. */
export const basic = (user: string, password: string) => ({
  Authorization: `Basic ${Buffer.from(`${user}:${password}`).toString('base64')}`,
});
export const bearer = (token: string) => ({ Authorization: `Bearer ${token}` });
export const keyAuth = (key: string) => ({ Authorization: `Key ${key}` });

let counter = 0;
/** A name no other test uses. */
export const fresh = (prefix: string) => `${prefix}-${++counter}-${Math.random().toString(36).slice(2, 7)}`;

/** The error codes (proto/errors.ts kinds) each HTTP status may carry. */
const ERROR_CODES: Record<number, number[]> = {
  400: [1],
  401: [5],
  403: [4],
  404: [2],
  405: [13],
  409: [3, 11],
  412: [8],
  413: [9],
};

export function isError(r: JsonResponse, status: number, what: string): void {
  assert.is(r.status, status, `${what}: expected ${status}, got ${r.status} ${JSON.stringify(r.body)}`);
  assert.type(r.body, 'object', `${what}: JSON error body, got ${JSON.stringify(r.body)}`);
  assert.equal(
    Object.keys(r.body).sort(),
    ['code', 'message'],
    `${what}: error body keys of ${JSON.stringify(r.body)}`,
  );
  assert.type(r.body.message, 'string');
  assert.ok(r.body.message.length > 0, `${what}: empty message`);
  assert.type(r.body.code, 'number');
  const codes = ERROR_CODES[status];
  if (codes)
    assert.ok(
      codes.includes(r.body.code),
      `${what}: code ${r.body.code} for HTTP ${status} (expected one of ${codes})`,
    );
}

/**
 * A fuzz case's answer: true for a 2xx; a refusal must be a 4xx `{message, code}` (never a 5xx).
 */
export function answered(r: JsonResponse, what: string): boolean {
  if (r.status >= 200 && r.status < 300) return true;
  assert.ok(r.status >= 400 && r.status < 500, `${what}: 4xx, got ${r.status} ${JSON.stringify(r.body)}`);
  isError(r, r.status, what);
  return false;
}

export function created(r: JsonResponse, what: string): void {
  assert.is(r.status, 201, `${what}: expected 201, got ${r.status} ${JSON.stringify(r.body)}`);
  assert.is(r.body, '', `${what}: 201 with an empty body`);
}
