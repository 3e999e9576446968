// What the runtime remembers of the messages it applied, so that a retried message is applied once
// and answered what its first attempt was answered (docs/architecture.md, "Atomic turns").
//
// An actor's record keeps the last SEEN_LIMIT of them (`seen`); every side record a turn writes keeps
// the last SIDE_APPLIED_LIMIT of the messages that wrote it, in a header of the KV entry, so that a
// turn whose only write is that side record needs no record write to be recognised on retry.

import { RECOGNISED_WRITES_PER_CHECK } from '../../proto/frames.ts';

/** A message applied by a turn: its id and the reply it got (absent: the reply was undefined). */
export type Applied = [id: string, reply?: unknown];

export const SEEN_LIMIT = 16;
// An event's check record is a side record of its entity's turn: agents size their per-check window by it.
export const SIDE_APPLIED_LIMIT = RECOGNISED_WRITES_PER_CHECK;
/** Replies are kept up to this size; a larger one is answered `{duplicate: true}` on retry. */
const MAX_KEPT_REPLY_BYTES = 512;
const DUPLICATE = { duplicate: true };

export const APPLIED_HEADER = 'Monitor-Applied';
/** The revision of the actor's record the writer of a side record had committed when it wrote. */
export const BASE_HEADER = 'Monitor-Base';

/** The JSON of each entry's reply, made once: headers are written on every side write. */
const replyText = new WeakMap<Applied, string>();

export function applied(id: string, reply: unknown): Applied {
  if (reply === undefined) return [id];
  const json = JSON.stringify(reply);
  if (json === undefined || json.length > MAX_KEPT_REPLY_BYTES) return [id, DUPLICATE];
  const a: Applied = [id, reply];
  replyText.set(a, json);
  return a;
}

/** The reply a retried message gets: what the first attempt got. */
export const replyOf = (a: Applied): unknown => a[1];

export function findApplied(list: readonly Applied[], id: string | undefined): Applied | undefined {
  if (id === undefined) return undefined;
  for (let i = list.length - 1; i >= 0; i--) if (list[i]![0] === id) return list[i];
  return undefined;
}

export function appendApplied(list: readonly Applied[], more: readonly Applied[], limit: number): Applied[] {
  if (more.length === 0) return list as Applied[];
  const out =
    list.length + more.length > limit ? list.slice(list.length + more.length - limit) : list.slice();
  for (const a of more) out.push(a);
  return out.length > limit ? out.slice(out.length - limit) : out;
}

const textOfReply = (a: Applied): string | undefined => {
  if (a.length < 2) return undefined;
  let t = replyText.get(a);
  if (t === undefined) {
    t = JSON.stringify(a[1]);
    replyText.set(a, t);
  }
  return t;
};

/**
 * The stored form of a list (a record's `seen`, a side record's header): a JSON array whose entries are
 * `["id", reply]`, `["id"]` (no reply), or just `"id"` when the reply is the same as the entry before's (most
 * are: `{"stored":true}`).
 */
export function encodeAppliedList(list: readonly Applied[]): string {
  let out = '[';
  let prev: string | undefined | null = null;
  for (let i = 0; i < list.length; i++) {
    const a = list[i]!;
    const r = textOfReply(a);
    const id = JSON.stringify(a[0]);
    if (i > 0) out += ',';
    if (r === prev && r !== undefined) out += id;
    else out += r === undefined ? `[${id}]` : `[${id},${r}]`;
    prev = r;
  }
  return `${out}]`;
}

/** Reads the list from a record (`seen`) or header, tolerating the older plain-string form. */
export function normalizeApplied(raw: unknown): Applied[] {
  if (!Array.isArray(raw)) return [];
  const out: Applied[] = [];
  let prev: Applied | undefined;
  for (const e of raw) {
    let a: Applied | undefined;
    if (typeof e === 'string') a = prev && prev.length > 1 ? [e, prev[1]] : [e, DUPLICATE];
    else if (Array.isArray(e) && typeof e[0] === 'string') a = e.length > 1 ? [e[0], e[1]] : [e[0]];
    if (a) {
      out.push(a);
      prev = a;
    }
  }
  return out;
}

export function decodeAppliedList(value: string | undefined): Applied[] {
  if (!value) return [];
  try {
    return normalizeApplied(JSON.parse(value));
  } catch {
    return [];
  }
}
