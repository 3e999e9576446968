/**
 * The cells of the RBAC matrix (a principal, a family, a verb, and the request that exercises
 * them), how an answer reads (allowed, denied, or anything else), and the run that collects every
 * cell whose answer differs from the seeded roles.
 */
import type { JsonResponse } from '../../harness/index.ts';
import {
  CLUSTER_FAMILIES,
  expected,
  NS_FAMILIES,
  PRINCIPALS,
  VERBS,
  who,
  type Principal,
  type Verb,
} from './principals.ts';
import { brief, clusterRequests, extraRequests, nsRequests, type Req } from './requests.ts';

/** A request as one principal (its Authorization headers). */
type Call = (
  auth: Record<string, string>,
  method: string,
  path: string,
  body?: object,
) => Promise<JsonResponse>;

/** allowed (2xx, or 404 of a real route), denied (403), or a description of anything else. */
function outcome(res: JsonResponse, req: Req): string {
  if (res.status === 403) return 'denied';
  if (req.visible && res.status === 200) return req.visible(res.body) ? 'allowed' : 'denied';
  if (res.status === 404 && /no route/.test(String(res.body?.message))) return `no route (${brief(res)})`;
  if ((res.status >= 200 && res.status < 300) || res.status === 404) return 'allowed';
  return `HTTP ${brief(res)}`;
}

interface Cell {
  p: Principal;
  family: string;
  verb: Verb;
  ns: string | undefined;
  req: Req;
}

/**
 * In namespace `default`: every principal × namespaced family × verb, then × cluster-wide family ×
 * verb (`keyFor` holds the API key each principal's apikeys cells are about).
 */
export function defaultCells(keyFor: Map<string, string>): Cell[] {
  const cells: Cell[] = [];
  for (const p of PRINCIPALS) {
    for (const family of NS_FAMILIES) {
      const reqs = nsRequests(family, 'default', p.tag);
      for (const verb of VERBS) cells.push({ p, family, verb, ns: 'default', req: reqs[verb] });
    }
    for (const family of CLUSTER_FAMILIES) {
      const reqs = clusterRequests(family, p.tag, { key: keyFor.get(p.tag) });
      for (const verb of VERBS) {
        const req = reqs[verb];
        if (req)
          cells.push({
            p,
            family,
            verb,
            ns: family === 'namespaces' && (verb === 'get' || verb === 'list') ? 'default' : undefined,
            req,
          });
      }
    }
  }
  return cells;
}

/** In namespace `other`: every principal × namespaced family × verb, and get/list of `other` itself. */
export function otherCells(): Cell[] {
  const cells: Cell[] = [];
  for (const p of PRINCIPALS) {
    for (const family of NS_FAMILIES) {
      const reqs = nsRequests(family, 'other', p.tag);
      for (const verb of VERBS) cells.push({ p, family, verb, ns: 'other', req: reqs[verb] });
    }
    const nsReqs = clusterRequests('namespaces', p.tag, { ns: 'other' });
    cells.push({ p, family: 'namespaces', verb: 'get', ns: 'other', req: nsReqs.get! });
    cells.push({ p, family: 'namespaces', verb: 'list', ns: 'other', req: nsReqs.list! });
  }
  return cells;
}

/** Every principal × the other routes (PATCH, sub-resources, actions). */
export function extraCells(): Cell[] {
  const cells: Cell[] = [];
  for (const p of PRINCIPALS)
    for (const x of extraRequests(p.tag))
      cells.push({ p, family: x.family, verb: x.verb, ns: x.ns, req: x.req });
  return cells;
}

/** Runs the cells in order and returns one line per cell whose answer differs from the seeded roles. */
export async function runCells(call: Call, cells: Cell[]): Promise<string[]> {
  const wrong: string[] = [];
  for (const c of cells) {
    const res = await call(c.p.auth, c.req.method, c.req.path, c.req.body);
    const got = outcome(res, c.req);
    const want = expected(c.p, c.family, c.verb, c.ns) ? 'allowed' : 'denied';
    if (got !== want)
      wrong.push(
        `${who(c.p)} ${c.verb} ${c.family}${c.ns ? ` in ${c.ns}` : ''}: want ${want}, got ${got} [${c.req.method} ${c.req.path} -> ${brief(res)}]`,
      );
  }
  return wrong;
}

export const report = (wrong: string[], total: number) =>
  `${wrong.length} of ${total} cells wrong:\n  ${wrong.join('\n  ')}`;
