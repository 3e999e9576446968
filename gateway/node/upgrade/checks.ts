import { isDeepStrictEqual } from 'node:util';
import * as v from 'valibot';
import { configKeys } from '../../../proto/names.ts';
import { describeIssues } from '../../../proto/schemas/common.ts';
import { sandboxReady } from '../../../lib/sandbox/index.ts';
import type { EtcdRecord } from '../../../actors/runtime/etcd.ts';
import { checkSchema } from '../../api/resources.ts';
import type { Migration, MigrationContext, Refusal } from './migration.ts';

// Migration 1: every stored check configuration is validated again with the schema the API uses
// today and stored again in the form the API would store it (the spec's release 6.2.0 note:
// "the backend upgrades check configurations; checks referencing nonexistent namespaces make the
// upgrade fail"). Checks written by earlier versions may predate rules added since (JavaScript of
// `proxy_requests.entity_attributes` that compiles, cron expressions the scheduler parses), lack
// their namespace in `metadata`, or carry fields no longer known. A check the current schema
// refuses, or one whose namespace does not exist, refuses the whole migration before anything is
// written (docs/operations.md#upgrades).

const DEFAULTS = {
  /** Times a check written through the API while the migration runs is read and stored again. */
  attempts: 3,
} as const;

const CHECKS = configKeys.prefix('checks');
const NAMESPACES = configKeys.prefix('namespaces');

const NAMESPACE_REMEDY =
  'recreate the namespace, delete the check, then delete the namespace again (or keep it)';
const INVALID_REMEDY = 'replace the check through the API with a valid one, or delete it';

const isRecord = (x: unknown): x is Record<string, unknown> =>
  typeof x === 'object' && x !== null && !Array.isArray(x);

/**
 * The check stored at `<ns>/<name>` as the API would store it today, or why it cannot be. The key
 * names it (every route and list goes by the key), so `metadata.name` and `.namespace` are set
 * from it, as the API sets them from the URL.
 */
function normalizeCheck(text: string, ns: string, name: string): { value: unknown } | { problem: string } {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return { problem: 'is not JSON' };
  }
  if (!isRecord(raw)) return { problem: 'is not a JSON object' };
  const meta = raw.metadata ?? {};
  const placed = isRecord(meta) ? { ...raw, metadata: { ...meta, name, namespace: ns } } : raw;
  const r = v.safeParse(checkSchema, placed);
  return r.success ? { value: r.output } : { problem: `is not a valid check: ${describeIssues(r.issues)}` };
}

interface Change {
  record: EtcdRecord;
  ns: string;
  name: string;
  value: unknown;
}

/** What keeps a stored check from being carried over, if anything; else the change it needs (or none). */
function review(record: EtcdRecord, namespaces: Set<string>): Refusal | Change | undefined {
  const at = record.key.slice(CHECKS.length).split('/');
  if (at.length !== 2 || !at[0] || !at[1])
    return {
      message: `${record.key} is not the key of a check (${CHECKS}<namespace>/<name>)`,
      fields: { key: record.key },
      remedy: 'delete the key with etcdctl',
    };
  const [ns, name] = at as [string, string];
  if (!namespaces.has(ns))
    return {
      message: `check "${name}" references namespace "${ns}", which does not exist`,
      fields: { check: name, namespace: ns },
      remedy: NAMESPACE_REMEDY,
    };
  const n = normalizeCheck(record.value, ns, name);
  if ('problem' in n)
    return {
      message: `check "${name}" in namespace "${ns}" ${n.problem}`,
      fields: { check: name, namespace: ns },
      remedy: INVALID_REMEDY,
    };
  return isDeepStrictEqual(n.value, JSON.parse(record.value))
    ? undefined
    : { record, ns, name, value: n.value };
}

/** Stores one change; a check written meanwhile (through the API) is read and judged again. */
async function store(ctx: MigrationContext, change: Change): Promise<boolean> {
  let { record, value } = change;
  const where = `check "${change.name}" in namespace "${change.ns}"`;
  for (let attempt = 1; ; attempt++) {
    if (await ctx.replace(record.key, JSON.stringify(value), record.modRevision)) return true;
    if (attempt === DEFAULTS.attempts)
      throw new Error(`${where} changed ${attempt} times while the upgrade ran: run it again`);
    const now = await ctx.etcd.get(record.key);
    if (!now) return false;
    const n = normalizeCheck(now.value, change.ns, change.name);
    if ('problem' in n) throw new Error(`${where} was written while the upgrade ran and ${n.problem}`);
    if (isDeepStrictEqual(n.value, JSON.parse(now.value))) return false;
    record = now;
    value = n.value;
  }
}

export const checksRevalidated: Migration = {
  title: 'check configurations validated with the current schema and stored in its form',
  async run(ctx) {
    // The schema compiles proxy_requests.entity_attributes, in the sandbox (lib/sandbox/).
    await sandboxReady();
    const [checks, namespaces] = await Promise.all([ctx.etcd.list(CHECKS), ctx.etcd.list(NAMESPACES)]);
    const known = new Set(namespaces.records.map((r) => r.key.slice(NAMESPACES.length)));
    const refused: Refusal[] = [];
    const changes: Change[] = [];
    for (const record of checks.records) {
      const found = review(record, known);
      if (found && 'remedy' in found) refused.push(found);
      else if (found) changes.push(found);
    }
    if (refused.length) return { refused };
    let stored = 0;
    for (const change of changes) {
      if (await store(ctx, change)) {
        stored++;
        ctx.log.info('check stored in the current form', { check: change.name, namespace: change.ns });
      }
    }
    const n = checks.records.length;
    return { summary: `${n} check${n === 1 ? '' : 's'} validated, ${stored} stored again` };
  },
};
