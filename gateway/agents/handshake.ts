import * as v from 'valibot';
import { etcdKeys } from '../../proto/names.ts';
import { describeIssues } from '../../proto/schemas/common.ts';
import { AgentHandshake, handshakeHeaders } from '../../proto/schemas/handshake.ts';
import type { ConfigStore } from '../../actors/config/store.ts';
import { StoredUser } from '../auth/users.ts';
import { verifyNothing, type VerifiedCache } from '../auth/passwords.ts';
import { LoginBlockedError, type LoginLimits } from '../auth/login-limits.ts';
import type { Authorizer } from '../auth/rbac.ts';
import { withUsersGroup } from '../auth/login.ts';

export interface AgentIdentity extends AgentHandshake {
  user: string;
}

/** A refused handshake: the HTTP status and the JSON error body the agent logs. */
export class HandshakeError extends Error {
  constructor(
    readonly status: number,
    message: string,
    /** 429: seconds until the agent may try again (the answer's `Retry-After`). */
    readonly retryAfterSec?: number,
  ) {
    super(message);
    this.name = 'HandshakeError';
  }
}

/** An upgrade request as the edge thread passes it on: its headers and where it came from. */
interface HandshakeRequest {
  headers: Record<string, string | string[] | undefined>;
  remote: string | undefined;
}

const header = (req: HandshakeRequest, name: string): string | undefined => {
  const h = req.headers[name];
  return Array.isArray(h) ? h[0] : h;
};

function basicCredentials(req: HandshakeRequest): { user: string; password: string } | undefined {
  const auth = header(req, 'authorization');
  if (!auth || !/^basic /i.test(auth)) return undefined;
  const decoded = Buffer.from(auth.slice(6).trim(), 'base64').toString('utf8');
  const i = decoded.indexOf(':');
  if (i < 0) return undefined;
  return { user: decoded.slice(0, i), password: decoded.slice(i + 1) };
}

/**
 * Checks an agent's upgrade request in the reference's order: credentials (401, or 429 while the
 * user name or address is blocked after failures), permission (403), namespace (404). Headers are parsed once here; the session trusts the identity it returns.
 */
export async function authenticateAgent(
  req: HandshakeRequest,
  config: ConfigStore,
  passwords: VerifiedCache,
  authz: Authorizer,
  limits: LoginLimits,
  certUser?: string,
): Promise<AgentIdentity> {
  const parsed = v.safeParse(AgentHandshake, {
    namespace: header(req, handshakeHeaders.namespace),
    agentName: header(req, handshakeHeaders.agentName),
    user: header(req, handshakeHeaders.user),
    subscriptions: header(req, handshakeHeaders.subscriptions),
    capabilities: header(req, handshakeHeaders.capabilities),
  });
  if (!parsed.success) throw new HandshakeError(400, `bad handshake: ${describeIssues(parsed.issues)}`);

  // A verified client certificate (checked by the caller) stands for the user named by its CN.
  const creds = certUser !== undefined ? { user: certUser, password: undefined } : basicCredentials(req);
  if (!creds) throw new HandshakeError(401, 'missing credentials');
  const stored = v.safeParse(StoredUser, config.get(etcdKeys.user(creds.user)));
  if (creds.password !== undefined) {
    const password = creds.password;
    // Failed passwords count per user name and address; an unknown user costs a hash like a known
    // one (docs/compatibility.md#authentication). A certificate cannot be guessed: no limit there.
    const ok = await limits
      .check({ user: creds.user, address: req.remote }, async () => {
        const good = stored.success
          ? await passwords.verify(password, stored.output.password_hash)
          : await verifyNothing(password);
        return good && stored.success && !stored.output.disabled ? true : undefined;
      })
      .catch((err: unknown) => {
        if (err instanceof LoginBlockedError) throw new HandshakeError(429, err.message, err.retryAfterSec);
        throw err;
      });
    if (!ok) throw new HandshakeError(401, 'bad credentials');
  }
  if (!stored.success || stored.output.disabled) {
    throw new HandshakeError(401, `bad credentials: no enabled user "${creds.user}" (client certificate CN)`);
  }
  // The reference's rule: the user may create events named after the agent in its namespace.
  const subject = { username: creds.user, groups: withUsersGroup(stored.output.groups) };
  if (
    !authz.allowed(subject, {
      verb: 'create',
      resource: 'events',
      namespace: parsed.output.namespace,
      name: parsed.output.agentName,
    })
  ) {
    throw new HandshakeError(
      403,
      `user "${creds.user}" may not create events in namespace "${parsed.output.namespace}"`,
    );
  }
  if (config.get(etcdKeys.namespace(parsed.output.namespace)) === undefined) {
    throw new HandshakeError(404, `namespace "${parsed.output.namespace}" not found`);
  }
  return { ...parsed.output, user: creds.user };
}
