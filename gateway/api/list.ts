import type { Context } from 'hono';
import type { ApiEnv, ApiServices } from './env.ts';
import { authorize } from './http.ts';
import { page, pagingOf } from './paginate.ts';
import type { FieldSet } from './selector-fields.ts';
import { selectorOf } from './selectors.ts';

/** How the list endpoints of one kind of resource read its items. */
export interface Listing<T> {
  /** The resource RBAC allows listing. */
  resource: string;
  /** The fields a field selector may name. */
  fields: FieldSet;
  /** The labels a label selector sees. */
  labelsOf: (obj: unknown) => Record<string, string> | undefined;
  /** Items are ordered by key, which places the continue token. */
  keyOf: (item: T) => string;
  /** What selectors are tested against. */
  valueOf: (item: T) => unknown;
  namespaceOf: (item: T) => string;
}

/** Items read from the continue position on (exclusive), ordered by key; lazy sources read only what a page needs. */
type ItemsAfter<T> = (after: string | undefined) => Iterable<T>;

function* filter<T>(items: Iterable<T>, keep: (t: T) => boolean): Generator<T> {
  for (const i of items) if (keep(i)) yield i;
}

/** One page of a list in namespace `ns` (undefined: a cluster-wide resource); 403 unless the subject may list there. */
export function listIn<T>(
  c: Context<ApiEnv>,
  svc: ApiServices,
  l: Listing<T>,
  ns: string | undefined,
  items: ItemsAfter<T>,
): T[] {
  authorize(c, svc, { verb: 'list', resource: l.resource, namespace: ns });
  return selectedPage(c, l, items);
}

/** One page of a list across namespaces: it holds only what is in namespaces the subject may list in, and never refuses. */
export function listAcross<T>(
  c: Context<ApiEnv>,
  svc: ApiServices,
  l: Listing<T>,
  items: ItemsAfter<T>,
): T[] {
  const s = c.get('subject');
  return selectedPage(c, l, (after) =>
    filter(items(after), (i) =>
      svc.authz.allowed(s, { verb: 'list', resource: l.resource, namespace: l.namespaceOf(i) }),
    ),
  );
}

function selectedPage<T>(c: Context<ApiEnv>, l: Listing<T>, items: ItemsAfter<T>): T[] {
  const paging = pagingOf(c);
  const match = selectorOf(c, l.fields, l.labelsOf);
  const all = items(paging.after);
  return page(c, match ? filter(all, (i) => match(l.valueOf(i))) : all, l.keyOf, paging);
}
