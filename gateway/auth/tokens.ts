import { createHash, randomBytes, randomUUID, timingSafeEqual } from 'node:crypto';
import { sign, verify } from 'hono/jwt';
import { etcdKeys } from '../../proto/names.ts';
import type { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import type { Subject } from './rbac.ts';

/** What an access token says: who, their groups, where they logged in, and their session. */
export interface AccessClaims {
  sub: string;
  groups: string[];
  /** The authentication provider of a directory user; absent for local users. */
  provider?: string;
  /** Session id: the refresh token's record. */
  sid: string;
  iat: number;
  exp: number;
}

interface TokenPair {
  access_token: string;
  expires_at: number;
  refresh_token: string;
}

/** A token refresh refused: `kind` is the API error it answers with. */
export class RefreshRefusedError extends Error {
  constructor(
    readonly kind: 'invalid_argument' | 'unauthenticated',
    message: string,
  ) {
    super(message);
    this.name = 'RefreshRefusedError';
  }
}

interface Session {
  sub: string;
  groups: string[];
  provider?: string;
  login?: string;
  refresh: string;
}

/** Who a session belongs to, as the login knew it; `current` re-checks it at each refresh. */
interface SessionSubject extends Subject {
  provider?: string;
  login?: string;
}

const digest = (s: string) => createHash('sha256').update(s).digest('base64url');
/** Digests compared in constant time, so a refresh's timing says nothing of the stored one. */
const sameDigest = (a: string, b: string) => {
  const [x, y] = [Buffer.from(a, 'base64url'), Buffer.from(b, 'base64url')];
  return x.length === y.length && timingSafeEqual(x, y);
};
const ALG = 'HS256';

/**
 * Access tokens are HS256 JWTs signed with a key kept in etcd, so every node accepts what any node
 * issued. Refresh tokens are opaque; each login is a session record in etcd (only a digest of the
 * refresh token is stored) that expires with a lease and that logout or a refresh deletes; a token
 * whose session is gone is refused on every node.
 */
export class TokenService {
  private secret = '';
  private readonly verified = new Map<string, AccessClaims>();
  /** Sessions alive in etcd, followed by a watch, so a logout on any node ends the session everywhere. */
  private readonly live = new Set<string>();
  private watch: { close(): Promise<void> } | undefined;

  constructor(
    private readonly etcd: EtcdAdapter,
    private readonly opts: { accessTtlSec: number; refreshTtlSec: number } = {
      accessTtlSec: 300,
      refreshTtlSec: 720 * 60,
    },
  ) {}

  /** Loads the signing key, creating it on the cluster's first start. */
  async start(): Promise<void> {
    await this.etcd.createIfAbsent(etcdKeys.jwtSecret, randomBytes(32).toString('base64url'));
    const rec = await this.etcd.get(etcdKeys.jwtSecret);
    if (!rec) throw new Error('token signing key missing from etcd');
    this.secret = rec.value;
    const prefix = etcdKeys.session('');
    await new Promise<void>((ready) => {
      this.watch = this.etcd.watchPrefix(prefix, {
        onSnapshot: (records) => {
          this.live.clear();
          for (const r of records) this.live.add(r.key.slice(prefix.length));
          ready();
        },
        onEvent: (ev) => {
          if (ev.type === 'put') this.live.add(ev.record.key.slice(prefix.length));
          else {
            const sid = ev.key.slice(prefix.length);
            this.live.delete(sid);
            this.forget(sid);
          }
        },
      });
    });
  }

  async stop(): Promise<void> {
    await this.watch?.close();
  }

  private forget(sid: string): void {
    for (const [t, c] of this.verified) if (c.sid === sid) this.verified.delete(t);
  }

  /** Whether a session is alive; asks etcd when this node has not seen it yet (issued elsewhere a moment ago). */
  private async sessionAlive(sid: string): Promise<boolean> {
    if (this.live.has(sid)) return true;
    if (await this.etcd.get(etcdKeys.session(sid))) {
      this.live.add(sid);
      return true;
    }
    return false;
  }

  async issue(subject: SessionSubject): Promise<TokenPair> {
    const now = Math.floor(Date.now() / 1000);
    const sid = randomUUID();
    const refresh = randomBytes(32).toString('base64url');
    const session: Session = {
      sub: subject.username,
      groups: subject.groups,
      provider: subject.provider,
      login: subject.login,
      refresh: digest(refresh),
    };
    await this.etcd.putWithLease(etcdKeys.session(sid), JSON.stringify(session), this.opts.refreshTtlSec);
    const claims: AccessClaims = {
      sub: subject.username,
      groups: subject.groups,
      ...(subject.provider ? { provider: subject.provider } : {}),
      sid,
      iat: now,
      exp: now + this.opts.accessTtlSec,
    };
    const access = await sign(claims as unknown as Record<string, unknown>, this.secret, ALG);
    return { access_token: access, expires_at: claims.exp, refresh_token: `${sid}.${refresh}` };
  }

  /** The claims of a valid, unexpired access token; undefined otherwise. Verified tokens are cached. */
  async verifyAccess(token: string): Promise<AccessClaims | undefined> {
    const now = Math.floor(Date.now() / 1000);
    const cached = this.verified.get(token);
    if (cached) {
      if (cached.exp > now) return cached;
      this.verified.delete(token);
      return undefined;
    }
    let claims: AccessClaims;
    try {
      claims = (await verify(token, this.secret, ALG)) as unknown as AccessClaims;
    } catch {
      return undefined;
    }
    if (!(await this.sessionAlive(claims.sid))) return undefined;
    if (this.verified.size > 20_000) this.verified.clear();
    this.verified.set(token, claims);
    return claims;
  }

  /**
   * New tokens for a session: the access token may have expired, its signature must hold. A refresh
   * token works once (the session record is deleted by exactly one refresh), and the user must still
   * be allowed in (`current`: enabled local user, or still found by its directory).
   */
  async refresh(
    accessToken: string,
    refreshToken: string,
    current: (s: SessionSubject) => Promise<SessionSubject | undefined>,
  ): Promise<TokenPair> {
    let claims: AccessClaims;
    try {
      claims = (await verify(accessToken, this.secret, { alg: ALG, exp: false })) as unknown as AccessClaims;
    } catch {
      throw new RefreshRefusedError('invalid_argument', 'invalid access token');
    }
    const [sid, secret] = refreshToken.split('.');
    if (!sid || !secret || sid !== claims.sid)
      throw new RefreshRefusedError('unauthenticated', 'invalid refresh token');
    const rec = await this.etcd.get(etcdKeys.session(sid));
    const session = rec ? (JSON.parse(rec.value) as Session) : undefined;
    if (!session || !sameDigest(session.refresh, digest(secret)) || session.sub !== claims.sub)
      throw new RefreshRefusedError('unauthenticated', 'invalid refresh token');
    const { deleted } = await this.etcd.deleteReporting(etcdKeys.session(sid));
    this.live.delete(sid);
    this.forget(sid);
    if (!deleted) throw new RefreshRefusedError('unauthenticated', 'invalid refresh token');
    const who = await current({
      username: session.sub,
      groups: session.groups,
      provider: session.provider,
      login: session.login,
    });
    if (!who) throw new RefreshRefusedError('unauthenticated', `user "${session.sub}" may no longer log in`);
    return this.issue(who);
  }

  /** Ends a session on every node: its access and refresh tokens stop working. */
  async logout(claims: AccessClaims): Promise<void> {
    await this.etcd.delete(etcdKeys.session(claims.sid));
    this.live.delete(claims.sid);
    this.forget(claims.sid);
  }
}
