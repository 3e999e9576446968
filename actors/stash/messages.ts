// Messages of the stash actor: `stash/<path>`, one per stash of the legacy API. Stashes are
// cluster-wide, so the id is the path itself (any text: slashes, spaces, anything; the runtime
// encodes it for subjects and keys). Bodies were validated at the edge.

export const STASH_KIND = 'stash';
/** The durable deadline of a stash with an expiry: when it comes, the stash is deleted. */
export const EXPIRE_TIMER = 'expire';

/** What the stash actor keeps in its record. */
export interface StashState {
  content: Record<string, unknown>;
  /** Epoch ms the stash ends at; absent: it never does. The same instant as its `expire` timer. */
  expires_at?: number;
}

/**
 * Store `content` under the path, replacing what was there. `expire` in seconds from now sets the
 * deadline; without it, or with zero or less, there is none (a write replaces the whole stash,
 * an earlier deadline included).
 */
export interface PutStashMsg {
  content: Record<string, unknown>;
  expire?: number;
}

/** Every message of the stash actor, with its body and its reply (see actors/entity/messages.ts). */
export interface StashProtocol {
  /** `stored` is always true (kept in the reply for senders that log it). */
  put: { body: PutStashMsg; reply: { stored: boolean } };
  /** `deleted`: false when there was no stash. */
  delete: { body: null; reply: { deleted: boolean } };
}

export type StashMessage = keyof StashProtocol;
