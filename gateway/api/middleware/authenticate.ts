import type { MiddlewareHandler } from 'hono';
import { ApiKeyIndex } from '../../auth/api-keys.ts';
import type { Subject } from '../../auth/rbac.ts';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';

/**
 * Every API route needs `Authorization: Bearer <access token>` or `Authorization: Key <API key>`.
 * A local user's groups and standing are read at each request (a disabled user is out at once); a
 * directory user's groups are those its token carries.
 */
export function authenticate(svc: ApiServices): MiddlewareHandler<ApiEnv> {
  const apiKeys = new ApiKeyIndex(svc.config);
  return async (c, next) => {
    const header = c.req.header('Authorization') ?? '';
    const space = header.indexOf(' ');
    const scheme = space > 0 ? header.slice(0, space).toLowerCase() : '';
    const credential = space > 0 ? header.slice(space + 1).trim() : '';
    let subject: Subject | undefined;
    if (scheme === 'bearer' && credential) {
      const claims = await svc.tokens.verifyAccess(credential);
      if (!claims) throw new ApiError('unauthenticated', 'the access token is invalid or expired');
      subject = claims.provider
        ? { username: claims.sub, groups: claims.groups }
        : svc.auth.localSubject(claims.sub);
      if (!subject) throw new ApiError('unauthenticated', `user "${claims.sub}" is disabled or gone`);
      c.set('claims', claims);
    } else if (scheme === 'key' && credential) {
      const username = apiKeys.username(credential);
      subject = username ? svc.auth.localSubject(username) : undefined;
      if (!subject) throw new ApiError('unauthenticated', 'the API key is invalid');
    } else if (scheme === 'basic') {
      // Sensu takes a password only at /auth; saying so spares a user guessing why it was refused.
      throw new ApiError(
        'unauthenticated',
        'Basic authentication is accepted only at /auth: get an access token there and send Authorization: Bearer <token>, or send Key <api key>',
      );
    } else {
      throw new ApiError(
        'unauthenticated',
        'missing credentials: send Authorization: Bearer <token> or Key <api key>',
      );
    }
    c.set('subject', subject);
    await next();
  };
}
