import { Hono } from 'hono';
import { configKeys } from '../../../proto/names.ts';
import { AdhocRequest, HookList } from '../../../proto/schemas/resources/checks.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize, readJson, validate } from '../http.ts';

type Check = { check_hooks?: Array<{ type: string; hooks: string[] }> | null; [k: string]: unknown };

/** The check routes beyond CRUD: its hooks by status type, and ad hoc execution. */
export function checkExtraRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const load = (ns: string, name: string) => {
    const entry = svc.config.entry<Check>(configKeys.namespaced('checks', ns, name));
    if (!entry) throw new ApiError('not_found', `check "${name}" not found`);
    return entry;
  };

  app.put('/namespaces/:ns/checks/:name/hooks/:type', async (c) => {
    const { ns, name, type } = c.req.param();
    authorize(c, svc, { verb: 'update', resource: 'checks', namespace: ns, name });
    const body = await readJson(c);
    const list = validate(HookList, { type, ...body }, 'hook list');
    if (list.type !== type)
      throw new ApiError(
        'invalid_argument',
        `the hook type in the body ("${list.type}") differs from the URL ("${type}")`,
      );
    const { key, value, modRevision } = load(ns, name);
    const others = (value.check_hooks ?? []).filter((h) => h.type !== type);
    const current = (value.check_hooks ?? []).find((h) => h.type === type)?.hooks ?? [];
    const merged = [...current, ...list.hooks.filter((h) => !current.includes(h))];
    await svc.config.replace(
      key,
      { ...value, check_hooks: [...others, { type, hooks: merged }] },
      modRevision,
    );
    return c.body(null, 201);
  });

  app.delete('/namespaces/:ns/checks/:name/hooks/:type/hook/:hook', async (c) => {
    const { ns, name, type, hook } = c.req.param();
    authorize(c, svc, { verb: 'update', resource: 'checks', namespace: ns, name });
    const { key, value, modRevision } = load(ns, name);
    const group = (value.check_hooks ?? []).find((h) => h.type === type);
    if (!group?.hooks.includes(hook))
      throw new ApiError('not_found', `check "${name}" has no ${type} hook "${hook}"`);
    const check_hooks = (value.check_hooks ?? [])
      .map((h) => (h.type === type ? { type, hooks: h.hooks.filter((x) => x !== hook) } : h))
      .filter((h) => h.hooks.length > 0);
    await svc.config.replace(key, { ...value, check_hooks }, modRevision);
    return c.body(null, 204);
  });

  app.post('/namespaces/:ns/checks/:name/execute', async (c) => {
    const { ns, name } = c.req.param();
    authorize(c, svc, { verb: 'create', resource: 'checks', namespace: ns, name });
    // An empty body means "run it as configured"; anything else must be a valid request.
    const hasBody = (await c.req.text()).trim() !== '';
    const req = validate(AdhocRequest, hasBody ? await readJson(c) : {}, 'ad hoc request');
    if (req.check && req.check !== name)
      throw new ApiError(
        'invalid_argument',
        `the check in the body ("${req.check}") differs from the URL ("${name}")`,
      );
    load(ns, name);
    const issued = Math.floor(Date.now() / 1000);
    await svc.queueAdhoc({
      namespace: ns,
      check: name,
      subscriptions: req.subscriptions ?? [],
      creator: req.creator ?? c.get('subject').username,
      reason: req.reason ?? '',
      issued,
    });
    return c.json({ issued }, 202);
  });

  return app;
}
