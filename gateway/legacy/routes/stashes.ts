import type { Context } from 'hono';
import { StashPost } from '../../../proto/legacy/stashes.ts';
import type { ListedStash } from '../../../actors/stash/read-model.ts';
import { stashRef } from '../../../actors/stash/ref.ts';
import type { LegacyEnv, LegacyServices } from '../env.ts';
import { LegacyError, empty, json, listed, readObject, readValid } from '../http.ts';
import { route, type LegacyRoute } from '../router.ts';

/**
 * A stash's path in the URL: everything after `/stash/` or `/stashes/`, slashes included (paths like
 * `silence/web-01/disk`), percent-decoded by the router.
 */
const PATH = '/stash(?:es)?/(.+)';

/**
 * A listed stash as the legacy API showed it: `expire` is the seconds left (rounded up, so a listed
 * stash never shows 0), or -1 for none.
 */
const view = ({ path, stash }: ListedStash, now: number) => ({
  path,
  content: stash.content,
  expire: stash.expires_at === undefined ? -1 : Math.ceil((stash.expires_at - now) / 1000),
});

/** The stash of a path route: its content only, or a bare 404. */
async function read(c: Context<LegacyEnv>, svc: LegacyServices, path: string): Promise<Response> {
  const stash = await svc.stashReads.get(path);
  if (!stash) throw new LegacyError(404);
  return json(c, 200, stash.content);
}

/** `/stashes` and `/stash(es)/:path`: stashes, each kept by its stash actor (actors/stash/). */
export function stashRoutes(svc: LegacyServices): LegacyRoute[] {
  const stash = (path: string) => stashRef(svc.actors, path);
  return [
    route('GET', '/stashes', (c) => {
      const now = Date.now();
      return json(
        c,
        200,
        listed(
          c,
          svc.stashes.list(now).map((s) => view(s, now)),
        ),
      );
    }),
    route('POST', '/stashes', async (c) => {
      const body = await readValid(c, StashPost);
      await stash(body.path).ask('put', { content: body.content, expire: body.expire ?? undefined });
      return json(c, 201, { path: body.path });
    }),
    route('GET', PATH, (c, [path]) => read(c, svc, path!)),
    // The whole body is the content, with no expiry: writing a stash this way clears the one it had.
    route('POST', PATH, async (c, [path]) => {
      const content = await readObject(c);
      await stash(path!).ask('put', { content });
      return json(c, 201, { path });
    }),
    route('DELETE', PATH, async (c, [path]) => {
      const { deleted } = await stash(path!).ask('delete', null);
      return deleted ? empty(c, 204) : empty(c, 404);
    }),
  ];
}
