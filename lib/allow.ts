// The `Allow` header of a 405, one way for every HTTP server of ours (the REST API, its legacy
// views, the legacy API, the agent API): HEAD wherever GET is (each answers HEAD as GET without
// the body), methods in one fixed order.

const ORDER = ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE', 'OPTIONS'];

/** The methods a path is served under, completed and ordered for `Allow`: `GET, HEAD, POST`. */
export function allowHeader(methods: Iterable<string>): string {
  const set = new Set(methods);
  if (set.has('GET')) set.add('HEAD');
  const known = ORDER.filter((m) => set.has(m));
  const other = [...set].filter((m) => !ORDER.includes(m)).sort();
  return [...known, ...other].join(', ');
}

/** Whether a request's method is among those a path is served under (HEAD is served as GET). */
export const methodServed = (method: string, methods: readonly string[]): boolean =>
  methods.includes(method) || (method === 'HEAD' && methods.includes('GET'));
