// Comparing a file's resource with the server's, and the stable form of a dump
// (docs/cli.md#files): what the server sets by itself (created_by) never counts, nor do empty values
// (the defaults the server fills in: false, 0, "", [], {}, null), and object keys are sorted so that
// two dumps of the same configuration are byte for byte the same.

import { MANAGED_LABEL } from './documents.ts';

type Item = Record<string, unknown>;

const isObject = (x: unknown): x is Item => x !== null && typeof x === 'object' && !Array.isArray(x);

const isEmpty = (x: unknown): boolean =>
  x === null ||
  x === undefined ||
  x === false ||
  x === 0 ||
  x === '' ||
  (Array.isArray(x) && x.length === 0) ||
  (isObject(x) && Object.keys(x).length === 0);

/** `x` with sorted keys, without empty values (at any depth) and without metadata.created_by. */
export function canonical(x: unknown, dropEmpty = true): unknown {
  if (Array.isArray(x)) return x.map((e) => canonical(e, dropEmpty));
  if (!isObject(x)) return x;
  const out: Item = {};
  for (const k of Object.keys(x).sort()) {
    if (k === 'metadata' && isObject(x[k])) {
      const { created_by: _c, ...meta } = x[k] as Item;
      const m = canonical(meta, dropEmpty);
      if (!dropEmpty || !isEmpty(m)) out[k] = m;
      continue;
    }
    const v = canonical(x[k], dropEmpty);
    if (dropEmpty && isEmpty(v)) continue;
    out[k] = v;
  }
  return out;
}

/** Whether `have` holds everything `want` says: objects by their keys, arrays item by item. */
function covers(want: unknown, have: unknown): boolean {
  if (Array.isArray(want))
    return Array.isArray(have) && want.length === have.length && want.every((w, i) => covers(w, have[i]));
  if (isObject(want)) return isObject(have) && Object.entries(want).every(([k, w]) => covers(w, have[k]));
  return want === have;
}

/**
 * Whether the server's `current` already is what `desired` asks for: every field the file sets has
 * that value on the server. Fields the file leaves out are not compared, since the server fills in
 * its defaults (an LDAP server's port, a mutator's type); empty values and created_by never count.
 */
export const sameResource = (desired: unknown, current: unknown): boolean =>
  covers(canonical(desired), canonical(current));

/**
 * A wrapped resource as a dump writes it: `type, api_version, metadata, spec` in that order, keys
 * sorted within, no created_by nor the managed-by label, and for core/v2 no empty metadata inside the spec.
 */
export function dumpForm(wrapped: Item): Item {
  const { type, api_version, metadata, spec, ...rest } = wrapped;
  const meta = isObject(metadata) ? { ...metadata } : {};
  delete meta.created_by;
  // Who wrote it is not configuration either: a restore by create -f marks everything it writes.
  if (isObject(meta.labels)) {
    const { [MANAGED_LABEL]: _m, ...labels } = meta.labels;
    if (Object.keys(labels).length) meta.labels = labels;
    else delete meta.labels;
  }
  return {
    type,
    api_version,
    metadata: canonical(meta, false),
    spec: canonical(spec, false),
    ...(canonical(rest, false) as Item),
  };
}
