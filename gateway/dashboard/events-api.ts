import { Hono, type Context } from 'hono';
import * as v from 'valibot';
import { SEP, type ReadItem } from '../../actors/entity/read-model.ts';
import { SilencedIndex } from '../../actors/config/silenced-index.ts';
import { silencedBy } from '../../actors/entity/silencing.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { SilencedEntry } from '../../proto/schemas/resources/silenced.ts';
import { describeIssues } from '../../proto/schemas/common.ts';
import {
  DashboardEventsQuery,
  STATUS_WORDS,
  type EventSort,
  type StatusFilter,
} from '../../proto/schemas/dashboard-events.ts';
import { redactEventEntity, redactJsonText } from '../../lib/redact.ts';
import type { ApiEnv, ApiServices } from '../api/env.ts';
import { ApiError } from '../api/errors.ts';
import { authorize } from '../api/http.ts';
import { EVENT_FIELDS } from '../api/selector-fields.ts';
import { eventLabels, selectorOf } from '../api/selectors.ts';
import { requireNamespace } from '../api/routes/config-resources.ts';

// The dashboard's read of events (docs/compatibility.md#dashboard-events-api): one sorted, filtered
// page and the status counts, worked out from the node's in-memory read model. The core lists page
// by key and count nothing; a page sorted by severity over 100,000 events, and the counts above the
// table, need every event's status at hand, which this module keeps per read-model item.

/** What the list needs of one stored event, read once per version of it (items are replaced on change). */
interface Summary {
  item: ReadItem;
  entity: string;
  check: string;
  status: number;
  /** 0 critical, 1 warning, 2 unknown, 3 passing: the order of `sort=severity`. */
  rank: number;
  flapping: boolean;
  /** Unix seconds of the last passing result; 0 for never. */
  lastOk: number;
  /** Unix seconds of the first result of the current run of equal statuses (within the history). */
  lastChange: number;
  /** The parts of the event and entity the silencing rule reads, for `silencedBy`. */
  event: Event;
  entityRef: Entity;
}

const summaries = new WeakMap<ReadItem, Summary>();
/** Redacted text per item, as the core list keeps it (most events have nothing to hide: same string). */
const shownText = new WeakMap<ReadItem, string>();

interface RawEvent {
  entity?: { metadata?: { name?: string }; subscriptions?: string[] | null };
  check?: {
    metadata?: { name?: string };
    status?: number;
    state?: string;
    last_ok?: number;
    executed?: number;
    history?: Array<{ status: number; executed: number }> | null;
    subscriptions?: string[] | null;
    proxy_entity_name?: string;
  };
  timestamp?: number;
}

const rankOf = (status: number) => (status === 2 ? 0 : status === 1 ? 1 : status === 0 ? 3 : 2);

/** When the current status began: the executed time of the oldest entry of the history's last run. */
function lastChangeOf(status: number, c: NonNullable<RawEvent['check']>): number {
  const h = c.history ?? [];
  let at = c.executed ?? 0;
  for (let i = h.length - 1; i >= 0 && h[i]!.status === status; i--) at = h[i]!.executed;
  return at;
}

function summaryOf(item: ReadItem): Summary {
  let s = summaries.get(item);
  if (s) return s;
  // A parse of our own (not item.value(), which would keep the whole parsed event on the item).
  let e: RawEvent = {};
  try {
    e = (JSON.parse(item.json) as RawEvent | null) ?? {};
  } catch {
    /* stored text is ours; a bad one lists with what its key says */
  }
  const [, keyEntity = '', keyCheck = ''] = item.key.split(SEP);
  const c = e.check ?? {};
  const status = typeof c.status === 'number' ? c.status : 0;
  s = {
    item,
    entity: keyEntity,
    check: keyCheck,
    status,
    rank: rankOf(status),
    flapping: c.state === 'flapping',
    lastOk: c.last_ok ?? 0,
    lastChange: lastChangeOf(status, c),
    event: {
      check: {
        metadata: { name: keyCheck },
        subscriptions: c.subscriptions ?? [],
        ...(c.proxy_entity_name ? { proxy_entity_name: c.proxy_entity_name } : {}),
      },
    } as Event,
    entityRef: { metadata: { name: keyEntity }, subscriptions: e.entity?.subscriptions ?? [] } as Entity,
  };
  summaries.set(item, s);
  return s;
}

function shownJson(item: ReadItem): string {
  let json = shownText.get(item);
  if (json === undefined) {
    json = redactJsonText(item.json, 'event', () => JSON.parse(item.json));
    shownText.set(item, json);
  }
  return json;
}

/** The event's text with `silenced_by` added as its last field. */
const withSilencedBy = (json: string, names: readonly string[]) =>
  `${json.slice(0, -1)},"silenced_by":${JSON.stringify(names)}}`;

type Counts = Record<
  'total' | 'critical' | 'warning' | 'unknown' | 'passing' | 'silenced' | 'flapping',
  number
>;
const STATUS_COUNT = ['critical', 'warning', 'unknown', 'passing'] as const;

function statusMatches(status: number, filters: readonly StatusFilter[]): boolean {
  for (const f of filters) {
    if ('status' in f) {
      if (f.status === status) return true;
    } else if (f.word === 'unknown') {
      if (status !== 0 && status !== 1 && status !== 2) return true;
    } else if (STATUS_WORDS[f.word] === status) return true;
  }
  return false;
}

type Order = (a: Summary, b: Summary) => number;
const byKey: Order = (a, b) => (a.item.key < b.item.key ? -1 : a.item.key > b.item.key ? 1 : 0);
/** Every order ends on the key, so a page at an offset is the same page twice. */
const ORDERS: Record<EventSort, Order | undefined> = {
  severity: (a, b) => a.rank - b.rank || b.lastChange - a.lastChange || byKey(a, b),
  last_change: (a, b) => b.lastChange - a.lastChange || byKey(a, b),
  // Never passing first, then the longest without a passing result.
  last_ok: (a, b) => a.lastOk - b.lastOk || byKey(a, b),
  // The read model's own order.
  entity: undefined,
};

const NONE: readonly string[] = [];

/**
 * Rows `offset` to `offset + limit` in `order`. The first pages (what is nearly always asked) are
 * taken with a bounded selection rather than sorting every row.
 */
function pageOf(rows: Summary[], order: Order | undefined, offset: number, limit: number): Summary[] {
  if (!order) return rows.slice(offset, offset + limit);
  const want = offset + limit;
  if (want * 8 >= rows.length) return rows.sort(order).slice(offset, want);
  // The `want` smallest rows, kept sorted; a row past the last kept one is skipped with one comparison.
  const top: Summary[] = [];
  for (const r of rows) {
    if (top.length === want && order(r, top[want - 1]!) >= 0) continue;
    let lo = 0,
      hi = top.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (order(top[mid]!, r) <= 0) lo = mid + 1;
      else hi = mid;
    }
    top.splice(lo, 0, r);
    if (top.length > want) top.pop();
  }
  return top.slice(offset);
}

/**
 * `GET /api/dashboard/v1/namespaces/:ns/events`, `GET /api/dashboard/v1/events` (every namespace the
 * subject may list events in) and `GET /api/dashboard/v1/namespaces/:ns/events/:entity/:check`.
 * Mounted behind authentication; RBAC is the core lists' (`list` events, `get` for one event).
 */
export function dashboardEventRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  const silenced = new SilencedIndex(svc.config);

  const list = (c: Context<ApiEnv>, ns: string | undefined) => {
    // One value per parameter here; the selectors, which may repeat, are read whole by selectorOf.
    const parsed = v.safeParse(DashboardEventsQuery, c.req.query());
    if (!parsed.success)
      throw new ApiError('invalid_argument', `invalid query: ${describeIssues(parsed.issues)}`);
    const q = parsed.output;
    // Repeated selectors are ANDed, as in the core lists; a bad one is a 400 here.
    const selected = selectorOf(c, EVENT_FIELDS, eventLabels);
    const subject = c.get('subject');
    const mayList = new Map<string, boolean>();
    const allowed = (n: string) => {
      let ok = mayList.get(n);
      if (ok === undefined) {
        ok = svc.authz.allowed(subject, { verb: 'list', resource: 'events', namespace: n });
        mayList.set(n, ok);
      }
      return ok;
    };
    const entityQ = q.entity?.toLowerCase() || undefined;
    const checkQ = q.check?.toLowerCase() || undefined;
    const now = Math.floor(Date.now() / 1000);
    const counts: Counts = {
      total: 0,
      critical: 0,
      warning: 0,
      unknown: 0,
      passing: 0,
      silenced: 0,
      flapping: 0,
    };
    const rows: Summary[] = [];
    // Only events some entry silences have names: most requests allocate nothing per event.
    const silencedOf = new Map<Summary, readonly string[]>();
    let entriesNs: string | undefined;
    let entries: readonly SilencedEntry[] = [];
    for (const item of svc.readModel.events.range(ns === undefined ? '' : ns + SEP)) {
      const itemNs = ns ?? item.key.slice(0, item.key.indexOf(SEP));
      if (ns === undefined && !allowed(itemNs)) continue;
      const s = summaryOf(item);
      if (entityQ && !s.entity.toLowerCase().includes(entityQ)) continue;
      if (checkQ && !s.check.toLowerCase().includes(checkQ)) continue;
      if (selected && !selected(item.value())) continue;
      if (itemNs !== entriesNs) {
        entriesNs = itemNs;
        entries = silenced.forNamespace(itemNs);
      }
      const by: readonly string[] =
        entries.length === 0 ? NONE : silencedBy(entries, s.event, s.entityRef, now);
      counts.total++;
      counts[STATUS_COUNT[s.rank]!]++;
      if (by.length > 0) counts.silenced++;
      if (s.flapping) counts.flapping++;
      if (q.status && !statusMatches(s.status, q.status)) continue;
      if (q.silenced !== undefined && q.silenced !== by.length > 0) continue;
      if (q.flapping !== undefined && q.flapping !== s.flapping) continue;
      if (by.length > 0) silencedOf.set(s, by);
      rows.push(s);
    }
    const order = ORDERS[q.sort];
    const pageRows = q.limit === 0 ? [] : pageOf(rows, order, q.offset, q.limit);
    const items = pageRows.map((r) => withSilencedBy(shownJson(r.item), silencedOf.get(r) ?? NONE));
    const body = `{"total":${rows.length},"offset":${q.offset},"limit":${q.limit},"sort":"${q.sort}","counts":${JSON.stringify(counts)},"items":[${items.join(',')}]}`;
    return c.body(body, 200, { 'Content-Type': 'application/json', 'Cache-Control': 'no-store' });
  };

  app.get('/namespaces/:ns/events', (c) => {
    const ns = c.req.param('ns');
    authorize(c, svc, { verb: 'list', resource: 'events', namespace: ns });
    requireNamespace(svc, ns);
    return list(c, ns);
  });

  app.get('/events', (c) => list(c, undefined));

  app.get('/namespaces/:ns/events/:entity/:check', async (c) => {
    const { ns, entity, check } = c.req.param();
    authorize(c, svc, { verb: 'get', resource: 'events', namespace: ns, name: check });
    const event = await svc.reads.event(ns, entity, check);
    if (!event) throw new ApiError('not_found', `event "${entity}/${check}" not found in namespace "${ns}"`);
    const entries = silenced.forNamespace(ns);
    const by =
      entries.length === 0 ? [] : silencedBy(entries, event, event.entity, Math.floor(Date.now() / 1000));
    return c.json({ ...redactEventEntity(event), silenced_by: by }, 200, { 'Cache-Control': 'no-store' });
  });

  return app;
}
