import type { Logger } from '../../lib/log.ts';
import type { Entity } from '../../proto/schemas/entity.ts';

// The `cloudvm` integration of legacy clients (docs/compatibility.md#legacy-client): when a client's
// keepalive fails and it names the `cloudvm` handler, the backend asks an instance-state endpoint
// (`--legacy-cloudvm-url`) about the client's instance and removes the client when the instance is
// not in an allowed state. The endpoint holds its own cloud credentials: the scope's are never sent
// nor logged.
//
// Protocol: `GET <url>/<region>/<instance_id>` (both URL-encoded) answers 200 `{"state":"<state>"}`,
// or 404 when there is no such instance (removed, as the legacy integration removed a client whose
// instance was gone). Anything else, an unreachable endpoint or the scope's `timeout` removes nothing.

const DEFAULTS = { region: 'us-east-1', allowed: ['running'], timeoutS: 10 } as const;

const CLOUDVM_HANDLER = 'cloudvm';

interface Lookup {
  path: string;
  allowed: string[];
  timeoutMs: number;
}

/** What to ask about a legacy client, when its keepalive handlers name `cloudvm` and it has the scope. */
export function cloudvmLookup(entity: Entity, keepaliveHandlers: readonly string[]): Lookup | undefined {
  const scope = entity.legacy?.cloudvm as Record<string, unknown> | undefined;
  if (!scope || typeof scope !== 'object' || !keepaliveHandlers.includes(CLOUDVM_HANDLER)) return undefined;
  const str = (x: unknown, d: string) => (typeof x === 'string' && x !== '' ? x : d);
  const instance = str(scope.instance_id, entity.metadata.name ?? '');
  const region = str(scope.region, DEFAULTS.region);
  const allowed =
    Array.isArray(scope.allowed_instance_states) && scope.allowed_instance_states.length > 0
      ? scope.allowed_instance_states.filter((s): s is string => typeof s === 'string')
      : [...DEFAULTS.allowed];
  const timeoutS = typeof scope.timeout === 'number' && scope.timeout > 0 ? scope.timeout : DEFAULTS.timeoutS;
  return {
    path: `${encodeURIComponent(region)}/${encodeURIComponent(instance)}`,
    allowed,
    timeoutMs: timeoutS * 1000,
  };
}

/** The instance's state, `absent` (404), or undefined when the endpoint said nothing usable. */
async function instanceState(url: string, l: Lookup, log: Logger, ctx: object): Promise<string | undefined> {
  const target = `${url.replace(/\/+$/, '')}/${l.path}`;
  try {
    const res = await fetch(target, { signal: AbortSignal.timeout(l.timeoutMs) });
    if (res.status === 404) {
      await res.body?.cancel();
      return 'absent';
    }
    const body = res.ok
      ? ((await res.json().catch(() => undefined)) as { state?: unknown } | undefined)
      : undefined;
    if (!res.ok) await res.body?.cancel();
    if (typeof body?.state === 'string') return body.state;
    log.warn('cloudvm: the instance-state endpoint gave no state: client kept', {
      ...ctx,
      status: res.status,
    });
  } catch (err) {
    const e = err as Error;
    const reason = e.name === 'TimeoutError' ? `no answer within ${l.timeoutMs / 1000} s` : e.message;
    log.warn('cloudvm: the instance-state endpoint is unreachable: client kept', { ...ctx, error: reason });
  }
  return undefined;
}

export type CloudvmCheck = (
  namespace: string,
  entity: Entity,
  lookup: Lookup,
  sinceMs: number,
) => Promise<void>;

/**
 * The check the entity actor runs after it stored a keepalive alert: asks the endpoint, then has the
 * client removed (`remove`, the actor's own `legacy-remove`) when its instance is not allowed.
 */
export function cloudvmCheck(o: {
  url: string;
  log: Logger;
  remove: (namespace: string, name: string, reason: string, sinceMs: number) => Promise<unknown>;
}): CloudvmCheck {
  return async (namespace, entity, lookup, sinceMs) => {
    const name = entity.metadata.name ?? '';
    const ctx = { namespace, entity: name, lookup: lookup.path };
    const state = await instanceState(o.url, lookup, o.log, ctx);
    if (state === undefined) return;
    if (lookup.allowed.includes(state)) {
      o.log.info('cloudvm: instance in an allowed state: client kept', { ...ctx, state });
      return;
    }
    o.log.info('cloudvm: instance not in an allowed state: removing the client', { ...ctx, state });
    await o
      .remove(namespace, name, `cloudvm instance ${state}`, sinceMs)
      .catch((err: Error) => o.log.warn('cloudvm: client not removed', { ...ctx, error: err.message }));
  };
}
