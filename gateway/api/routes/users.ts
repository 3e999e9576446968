import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { ConfigConflictError } from '../../../actors/config/store.ts';
import { configKeys, etcdKeys } from '../../../proto/names.ts';
import { PasswordChange, User } from '../../../proto/schemas/resources/users.ts';
import { hashPassword, verifyPassword } from '../../auth/passwords.ts';
import type { Access } from '../../auth/rbac.ts';
import { StoredUser } from '../../auth/users.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { readJson, sendOne, unwrap, validate } from '../http.ts';
import { page, pagingOf } from '../paginate.ts';
import { USER_FIELDS } from '../selector-fields.ts';
import { selectItems } from '../selectors.ts';

type Stored = v.InferOutput<typeof StoredUser>;

/** What the API shows of a user: never the password or its hash. */
const userView = (u: Stored) => ({ username: u.username, groups: u.groups, disabled: u.disabled });

/**
 * Users (cluster-wide). DELETE disables rather than removes; the password and groups have routes of
 * their own. A user may read itself and change its own password (`localselfuser`).
 */
export function userRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const load = (name: string): Stored => {
    const r = v.safeParse(StoredUser, svc.config.get(etcdKeys.user(name)));
    if (!r.success) throw new ApiError('not_found', 'resource not found');
    return r.output;
  };
  const save = (u: Stored) => svc.config.put(etcdKeys.user(u.username), u);
  /** Allowed as an administrator of users, or on oneself through `localselfuser`. */
  const authorizeUser = (c: Context<ApiEnv>, verb: Access['verb'], name: string, selfAllowed: boolean) => {
    const s = c.get('subject');
    if (svc.authz.allowed(s, { verb, resource: 'users', name })) return;
    if (selfAllowed && s.username === name && svc.authz.allowed(s, { verb, resource: 'localselfuser', name }))
      return;
    throw new ApiError('permission_denied', `user "${s.username}" may not ${verb} users "${name}"`);
  };

  /**
   * `?include_secrets=true` (monitorctl dump --include-secrets) adds each user's password hash, so a
   * dump restores users who can log in as before. Only for a subject that may update every user: it
   * could set any password anyway (docs/compatibility.md#users).
   */
  const viewFor = (c: Context<ApiEnv>): ((u: Stored) => Record<string, unknown>) => {
    if (c.req.query('include_secrets') !== 'true') return userView;
    const s = c.get('subject');
    if (!svc.authz.allowed(s, { verb: 'update', resource: 'users', name: '' }))
      throw new ApiError(
        'permission_denied',
        `user "${s.username}" may not read password hashes: include_secrets needs update on every user`,
      );
    return (u) => ({ ...userView(u), password_hash: u.password_hash });
  };

  app.get('/users', (c) => {
    authorizeUser(c, 'list', '', false);
    const view = viewFor(c);
    const users = selectItems(c, USER_FIELDS, svc.config.entries<Stored>(configKeys.prefix('users')), (e) =>
      userView(e.value),
    );
    return c.json(page(c, users, (e) => e.key, pagingOf(c)).map((e) => view(e.value)));
  });

  app.get('/users/:name', (c) => {
    const name = c.req.param('name');
    authorizeUser(c, 'get', name, true);
    return sendOne(c, viewFor(c)(load(name)));
  });

  const fromBody = async (
    c: Context<ApiEnv>,
    urlName: string | undefined,
    existing: Stored | undefined,
  ): Promise<Stored> => {
    const u = validate(User, unwrap(await readJson(c), ['User']), 'user');
    const username = u.username ?? urlName;
    if (!username) throw new ApiError('invalid_argument', 'invalid user: username is required');
    if (urlName && username !== urlName)
      throw new ApiError(
        'invalid_argument',
        `the username in the body ("${username}") differs from the URL ("${urlName}")`,
      );
    const hash = u.password ? await hashPassword(u.password) : (u.password_hash ?? existing?.password_hash);
    if (!hash) throw new ApiError('invalid_argument', 'invalid user: password is required');
    return {
      username,
      password_hash: hash,
      groups: u.groups ?? existing?.groups ?? [],
      disabled: u.disabled ?? existing?.disabled ?? false,
    };
  };

  app.post('/users', async (c) => {
    const u = await fromBody(c, undefined, undefined);
    authorizeUser(c, 'create', u.username, false);
    try {
      await svc.config.create(etcdKeys.user(u.username), u);
    } catch (err) {
      if (err instanceof ConfigConflictError) throw new ApiError('already_exists', 'resource already exists');
      throw err;
    }
    return c.body(null, 201);
  });

  app.put('/users/:name', async (c) => {
    const name = c.req.param('name');
    authorizeUser(c, 'update', name, false);
    const existing = v.safeParse(StoredUser, svc.config.get(etcdKeys.user(name)));
    await save(await fromBody(c, name, existing.success ? existing.output : undefined));
    return c.body(null, 201);
  });

  app.delete('/users/:name', async (c) => {
    const name = c.req.param('name');
    authorizeUser(c, 'delete', name, false);
    await save({ ...load(name), disabled: true });
    return c.body(null, 204);
  });

  app.put('/users/:name/reinstate', async (c) => {
    const name = c.req.param('name');
    authorizeUser(c, 'update', name, false);
    await save({ ...load(name), disabled: false });
    return c.body(null, 201);
  });

  /** An administrator sets a password (clear text or a ready hash). */
  const setPassword = async (c: Context<ApiEnv>) => {
    const name = c.req.param('name')!;
    authorizeUser(c, 'update', name, false);
    const body = validate(PasswordChange, await readJson(c), 'password change');
    const pw = body.password_new ?? body.password;
    const hash = pw ? await hashPassword(pw) : body.password_hash;
    if (!hash) throw new ApiError('invalid_argument', 'a password or password_hash is required');
    await save({ ...load(name), password_hash: hash });
    return c.body(null, 201);
  };
  app.put('/users/:name/password', setPassword);
  app.put('/users/:name/reset_password', setPassword);

  /** A user changes its own password, proving it knows the current one. */
  app.put('/users/:name/change_password', async (c) => {
    const name = c.req.param('name');
    authorizeUser(c, 'update', name, true);
    const body = validate(PasswordChange, await readJson(c), 'password change');
    if (!body.password_new) throw new ApiError('invalid_argument', 'password_new is required');
    const user = load(name);
    if (!body.password || !(await verifyPassword(body.password, user.password_hash)))
      throw new ApiError('unauthenticated', 'the current password is wrong');
    await save({ ...user, password_hash: await hashPassword(body.password_new) });
    return c.body(null, 201);
  });

  app.put('/users/:name/groups/:group', async (c) => {
    const { name, group } = c.req.param();
    authorizeUser(c, 'update', name, false);
    const u = load(name);
    if (!u.groups.includes(group)) await save({ ...u, groups: [...u.groups, group] });
    return c.body(null, 201);
  });

  app.delete('/users/:name/groups/:group', async (c) => {
    const { name, group } = c.req.param();
    authorizeUser(c, 'update', name, false);
    const u = load(name);
    if (!u.groups.includes(group))
      throw new ApiError('not_found', `user "${name}" is not in group "${group}"`);
    await save({ ...u, groups: u.groups.filter((g) => g !== group) });
    return c.body(null, 204);
  });

  app.delete('/users/:name/groups', async (c) => {
    const name = c.req.param('name');
    authorizeUser(c, 'update', name, false);
    await save({ ...load(name), groups: [] });
    return c.body(null, 204);
  });

  return app;
}
