import { Hono } from 'hono';
import { configKeys, etcdKeys } from '../../../proto/names.ts';
import { mergePatch } from '../../../proto/merge-patch.ts';
import { ApiKey } from '../../../proto/schemas/resources/users.ts';
import { newApiKey } from '../../auth/seed.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize, readJson, sendOne, unwrap, validate } from '../http.ts';
import { page, pagingOf } from '../paginate.ts';
import { APIKEY_FIELDS } from '../selector-fields.ts';
import { selectItems } from '../selectors.ts';

interface StoredKey {
  metadata: { name: string; created_by?: string };
  username: string;
  created_at: number;
}

/**
 * API keys (cluster-wide): the key is the resource's name, a random UUID made by the backend. It
 * authenticates as its user (`Authorization: Key <key>`) for as long as the key and the user exist.
 */
export function apiKeyRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const get = (key: string) => {
    const k = svc.config.get<StoredKey>(configKeys.cluster('apikeys', key));
    if (!k) throw new ApiError('not_found', 'resource not found');
    return k;
  };

  app.get('/apikeys', (c) => {
    authorize(c, svc, { verb: 'list', resource: 'apikeys' });
    return c.json(
      page(
        c,
        selectItems(
          c,
          APIKEY_FIELDS,
          svc.config.entries<StoredKey>(configKeys.prefix('apikeys')),
          (e) => e.value,
        ),
        (e) => e.key,
        pagingOf(c),
      ).map((e) => e.value),
    );
  });

  app.get('/apikeys/:key', (c) => {
    const key = c.req.param('key');
    authorize(c, svc, { verb: 'get', resource: 'apikeys', name: key });
    return sendOne(c, get(key));
  });

  app.post('/apikeys', async (c) => {
    const body = validate(ApiKey, unwrap(await readJson(c), ['APIKey']), 'API key');
    authorize(c, svc, { verb: 'create', resource: 'apikeys' });
    if (svc.config.get(etcdKeys.user(body.username)) === undefined)
      throw new ApiError('invalid_argument', `user "${body.username}" does not exist`);
    const key = newApiKey();
    const stored: StoredKey = {
      metadata: { name: key, created_by: c.get('subject').username },
      username: body.username,
      created_at: Math.floor(Date.now() / 1000),
    };
    await svc.config.create(configKeys.cluster('apikeys', key), stored);
    return c.body(null, 201, { Location: `/api/core/v2/apikeys/${key}` });
  });

  app.patch('/apikeys/:key', async (c) => {
    const key = c.req.param('key');
    authorize(c, svc, { verb: 'update', resource: 'apikeys', name: key });
    const patched = mergePatch(get(key), unwrap(await readJson(c), ['APIKey'])) as StoredKey;
    const body = validate(ApiKey, patched, 'API key');
    if (svc.config.get(etcdKeys.user(body.username)) === undefined)
      throw new ApiError('invalid_argument', `user "${body.username}" does not exist`);
    const stored: StoredKey = {
      ...patched,
      metadata: { ...patched.metadata, name: key },
      username: body.username,
    };
    await svc.config.put(configKeys.cluster('apikeys', key), stored);
    return sendOne(c, stored);
  });

  app.delete('/apikeys/:key', async (c) => {
    const key = c.req.param('key');
    authorize(c, svc, { verb: 'delete', resource: 'apikeys', name: key });
    if (!(await svc.config.remove(configKeys.cluster('apikeys', key))))
      throw new ApiError('not_found', 'resource not found');
    return c.body(null, 204);
  });

  return app;
}
