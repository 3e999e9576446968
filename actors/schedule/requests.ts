import { configKeys, subjects } from '../../proto/names.ts';
import type { ConfigStore } from '../config/store.ts';
import type { StoredCheck } from './messages.ts';

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
export function buildRequest(config: ConfigStore, ns: string, check: StoredCheck, issuedSeconds: number): OutgoingRequest {
  const assets = resolve(config, 'assets', ns, check.runtime_assets ?? []);
  const hookNames = new Set((check.check_hooks ?? []).flatMap((l) => l.hooks));
  const hooks = resolve(config, 'hooks', ns, hookNames);
  const req: OutgoingRequest = { config: { ...check, metadata: { ...check.metadata, namespace: ns } }, assets, hooks, issued: issuedSeconds };
  for (const hook of hooks as Array<{ metadata?: { name?: string }; runtime_assets?: string[] | null }>) {
    const names = hook.runtime_assets ?? [];
    if (!names.length || !hook.metadata?.name) continue;
    (req.hook_assets ??= {})[hook.metadata.name] = { assets: resolve(config, 'assets', ns, names) };
  }
  return req;
}

/** The subjects a request goes to: every subscription, fan-out or to one agent each (round robin). */
export function requestSubjects(ns: string, check: StoredCheck, subscriptions?: string[]): string[] {
  const subs = [...new Set(subscriptions && subscriptions.length ? subscriptions : check.subscriptions ?? [])];
  return subs.map((s) => (check.round_robin ? subjects.roundRobin(ns, s) : subjects.subscription(ns, s)));
}
