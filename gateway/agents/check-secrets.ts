import type { CheckRequest } from '../../proto/schemas/check-request.ts';
import type { Logger } from '../../lib/log.ts';
import { resolveEnvSecrets, type SecretRef } from '../../lib/secrets.ts';

// A check's `secrets` (docs/compatibility.md#secrets): resolved by the node that sends the request to
// the agent, from its own environment, just before the frame is written, so the values never cross
// NATS, are never stored, and exist only in the frame. They go only to agents connected over TLS
// (wss); a plain agent gets the request without the values, and the node warns once in a while naming
// the check. A secret that cannot be resolved goes as `secret_errors` (names, never values): the agent
// fails the check with status 3 saying why, instead of running it without the variable.

const DEFAULTS = {
  /** One warning per check and node in this window about sending it to plain agents without its secrets. */
  warnEveryMs: 10 * 60_000,
  /** Checks remembered for that warning. */
  maxWarned: 1000,
};

/** The request as it goes to one agent: per check request and transport, made once for every session. */
const derived = new WeakMap<CheckRequest, { secure?: CheckRequest; plain?: CheckRequest }>();
const warned = new Map<string, number>();

export function requestForAgent(
  req: CheckRequest,
  secure: boolean,
  log: Logger,
  env: NodeJS.ProcessEnv = process.env,
): CheckRequest {
  const refs = (req.config as { secrets?: SecretRef[] | null }).secrets;
  if (!refs?.length) return req;
  let variants = derived.get(req);
  if (!variants) derived.set(req, (variants = {}));
  const kind = secure ? 'secure' : 'plain';
  const known = variants[kind];
  if (known) return known;
  const resolved = resolveEnvSecrets(refs, env);
  let out: CheckRequest;
  if (!resolved.ok) out = { ...req, secret_errors: resolved.errors };
  else if (secure)
    out = {
      ...req,
      secrets: [
        ...stringSecrets(req.secrets),
        ...Object.entries(resolved.values).map(([k, val]) => `${k}=${val}`),
      ],
    };
  else {
    out = req;
    warnPlain(req, log);
  }
  variants[kind] = out;
  return out;
}

/** Whatever the request already carried as `KEY=value` entries (none from our schedulers). */
function stringSecrets(s: CheckRequest['secrets']): string[] {
  return Array.isArray(s) ? s.filter((x): x is string => typeof x === 'string') : [];
}

function warnPlain(req: CheckRequest, log: Logger): void {
  const key = `${req.config.metadata.namespace ?? ''}/${req.config.metadata.name}`;
  const now = Date.now();
  const last = warned.get(key);
  if (last !== undefined && now - last < DEFAULTS.warnEveryMs) return;
  if (warned.size >= DEFAULTS.maxWarned) warned.clear();
  warned.set(key, now);
  log.warn('check secrets are sent to agents only over TLS: agents on ws get this check without them', {
    namespace: req.config.metadata.namespace,
    check: req.config.metadata.name,
  });
}
