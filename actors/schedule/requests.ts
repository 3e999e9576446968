import { configKeys, subjects } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import type { ConfigStore } from '../config/store.ts';
import { SEP, type EntityReadModel } from '../entity/read-model.ts';
import type { StoredCheck } from './messages.ts';
import { matchEntities } from './proxy.ts';
import { roundRobinOnly } from '../../proto/legacy/subscriptions.ts';

/** What the scheduler hands to agents: core/v2 CheckRequest (see proto/schemas/check-request.ts). */
export interface OutgoingRequest {
  config: StoredCheck;
  assets: unknown[];
  hooks: unknown[];
  issued: number;
  hook_assets?: Record<string, { assets: unknown[] }>;
}

const resolve = (config: ConfigStore, resource: string, ns: string, names: Iterable<string>): unknown[] => {
  const out: unknown[] = [];
  for (const name of names) {
    const value = config.get(configKeys.namespaced(resource, ns, name));
    if (value !== undefined) out.push(value);
  }
  return out;
};

/**
 * Builds a check's request from the node's configuration cache: the assets named in
 * `runtime_assets`, the hooks named in `check_hooks` and their own assets, as stored. A name that
 * resolves to nothing is left out; the agent runs what it is given.
 */
export function buildRequest(
  config: ConfigStore,
  ns: string,
  check: StoredCheck,
  issuedSeconds: number,
): OutgoingRequest {
  const assets = resolve(config, 'assets', ns, check.runtime_assets ?? []);
  const hookNames = new Set((check.check_hooks ?? []).flatMap((l) => l.hooks));
  const hooks = resolve(config, 'hooks', ns, hookNames);
  const req: OutgoingRequest = {
    config: { ...check, metadata: { ...check.metadata, namespace: ns } },
    assets,
    hooks,
    issued: issuedSeconds,
  };
  for (const hook of hooks as Array<{ metadata?: { name?: string }; runtime_assets?: string[] | null }>) {
    const names = hook.runtime_assets ?? [];
    if (!names.length || !hook.metadata?.name) continue;
    (req.hook_assets ??= {})[hook.metadata.name] = { assets: resolve(config, 'assets', ns, names) };
  }
  return req;
}

/**
 * The subjects a request goes to: every subscription, fan-out or to one agent each (round robin). A
 * subscription written the legacy way, `roundrobin:<x>` or `direct:<x>`, goes to the round-robin group of
 * `<x>` whatever `round_robin` says (docs/compatibility.md#legacy-client).
 */
export function requestSubjects(ns: string, check: StoredCheck, subscriptions?: string[]): string[] {
  const subs = subscriptions && subscriptions.length ? subscriptions : (check.subscriptions ?? []);
  const out = new Set<string>();
  for (const s of subs) {
    const group = roundRobinOnly(s);
    if (group !== undefined) out.add(subjects.roundRobin(ns, group));
    else out.add(check.round_robin ? subjects.roundRobin(ns, s) : subjects.subscription(ns, s));
  }
  return [...out];
}

/**
 * The requests of one fire: for a check with `proxy_requests`, one per entity of the namespace that
 * matches every expression, each naming it in `proxy_entity_name`; otherwise the request itself.
 */
export function expandProxy(
  readModel: EntityReadModel | undefined,
  ns: string,
  base: OutgoingRequest,
  log: Logger,
): OutgoingRequest[] {
  const proxy = base.config.proxy_requests;
  if (!proxy || !(proxy.entity_attributes ?? []).length) return [base];
  const entities = readModel
    ? [...readModel.entities.range(ns + SEP)]
        .map((i) => i.value<{ metadata?: { name?: string } }>())
        .filter(Boolean)
    : [];
  const names = matchEntities(proxy.entity_attributes ?? [], entities, log);
  if (names.length === 0)
    log.info('no matching entities, check will not be published', {
      namespace: ns,
      check: base.config.metadata.name,
    });
  return names.map((name) => ({ ...base, config: { ...base.config, proxy_entity_name: name } }));
}
