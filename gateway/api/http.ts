import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import * as v from 'valibot';
import { describeIssues } from '../../proto/schemas/common.ts';
import type { Access } from '../auth/rbac.ts';
import type { ApiEnv, ApiServices } from './env.ts';
import { ApiError } from './errors.ts';

// Small pieces every route uses: body parsing at the edge, the wrapped resource form, RBAC checks.

/** The request body as JSON: 400 for anything that is not a JSON object. */
export async function readJson(c: Context): Promise<Record<string, unknown>> {
  let text: string;
  try {
    text = await c.req.text();
  } catch {
    throw new ApiError('invalid_argument', 'could not read the request body');
  }
  if (!text.trim()) throw new ApiError('invalid_argument', 'the request body is empty');
  let body: unknown;
  try {
    body = JSON.parse(text);
  } catch (err) {
    throw new ApiError('invalid_argument', `malformed JSON: ${(err as Error).message}`);
  }
  if (body === null || typeof body !== 'object' || Array.isArray(body))
    throw new ApiError('invalid_argument', 'the request body must be a JSON object');
  return body as Record<string, unknown>;
}

/** `CheckConfig`, `check_config` and `checkconfig` are one type, as Sensu resolves them. */
const typeKey = (t: string) => t.toLowerCase().replace(/_/g, '');

/**
 * Accepts the wrapped form `{type, api_version, metadata, spec}` (as files for `monitorctl create`
 * hold them) wherever a flat core/v2 body is expected. Its `type` must be one the route takes
 * (`types`: the type, then any other name of it), else a 400 naming both: a Handler posted to the
 * checks is never stored as a check (docs/compatibility.md#rest-edges).
 */
export function unwrap(
  body: Record<string, unknown>,
  types: readonly [string, ...string[]],
): Record<string, unknown> {
  const spec = body.spec;
  if (
    spec &&
    typeof spec === 'object' &&
    !Array.isArray(spec) &&
    (typeof body.type === 'string' || typeof body.api_version === 'string')
  ) {
    if (typeof body.type === 'string' && !types.some((t) => typeKey(t) === typeKey(body.type as string)))
      throw new ApiError(
        'invalid_argument',
        `the body is a wrapped ${JSON.stringify(body.type)}, but this route takes ${JSON.stringify(types[0])}`,
      );
    const inner = spec as Record<string, unknown>;
    return { ...inner, metadata: body.metadata ?? inner.metadata };
  }
  return body;
}

/** Validates with the resource's schema: 400 naming the first problems. */
export function validate<S extends v.GenericSchema>(
  schema: S,
  body: unknown,
  what: string,
): v.InferOutput<S> {
  const r = v.safeParse(schema, body);
  if (!r.success) throw new ApiError('invalid_argument', `invalid ${what}: ${describeIssues(r.issues)}`);
  return r.output;
}

/** Refuses with 403 unless the subject may do this. */
export function authorize(c: Context<ApiEnv>, svc: ApiServices, access: Access): void {
  const s = c.get('subject');
  if (svc.authz.allowed(s, access)) return;
  const where = access.namespace ? ` in namespace "${access.namespace}"` : '';
  throw new ApiError(
    'permission_denied',
    `user "${s.username}" may not ${access.verb} ${access.resource}${access.name ? ` "${access.name}"` : ''}${where}`,
  );
}

/** A strong ETag of a JSON body. */
const etagOf = (json: string) => `"${createHash('sha1').update(json).digest('base64url')}"`;

/** Answers one resource with its ETag (304 when the client has it). */
export function sendOne(c: Context, value: unknown): Response {
  const json = JSON.stringify(value);
  const etag = etagOf(json);
  if (c.req.header('If-None-Match') === etag) return c.body(null, 304, { ETag: etag });
  return c.body(json, 200, { 'Content-Type': 'application/json', ETag: etag });
}

/** PATCH preconditions: If-Match must name the current version, If-None-Match must not. */
export function checkPreconditions(c: Context, current: unknown): void {
  const etag = etagOf(JSON.stringify(current));
  const ifMatch = c.req.header('If-Match');
  if (
    ifMatch &&
    ifMatch !== '*' &&
    !ifMatch
      .split(',')
      .map((s) => s.trim())
      .includes(etag)
  )
    throw new ApiError('precondition_failed', 'the resource changed (If-Match)');
  const ifNone = c.req.header('If-None-Match');
  if (
    ifNone &&
    (ifNone === '*' ||
      ifNone
        .split(',')
        .map((s) => s.trim())
        .includes(etag))
  )
    throw new ApiError('precondition_failed', 'the resource matches If-None-Match');
}
