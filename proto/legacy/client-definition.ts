import * as v from 'valibot';
import { LEGACY_NAME } from './clients.ts';
import { checkDefinitionProblem } from './check-definition.ts';
import { isInt, isObject, isStrings } from './json.ts';

// A legacy client's own definition (`{"client": {...}, "checks": {...}}` in its conf.d), as
// `monitor-agent start --legacy-config` reads it (docs/compatibility.md#legacy-client): every attribute
// of the spec's client, socket, keepalive, registration and integration scopes checked in order, the
// first problem reported as one line naming the attribute; the defaults applied once it is valid.
// Custom attributes are kept as they are: they travel in keepalives and feed check tokens.

type Obj = Record<string, unknown>;

const isString = (x: unknown): x is string => typeof x === 'string';
const isBool = (x: unknown): x is boolean => typeof x === 'boolean';
const isPort = (x: unknown) => isInt(x) && x >= 0 && x <= 65535;

/** What an attribute must be, as the message says it. */
type Kind = 'string' | 'integer' | 'boolean' | 'hash' | 'array of strings' | 'port';
const KIND: Record<Kind, (x: unknown) => boolean> = {
  string: isString,
  integer: isInt,
  boolean: isBool,
  hash: isObject,
  'array of strings': isStrings,
  port: isPort,
};
const article = (k: Kind) => (k === 'integer' || k === 'array of strings' ? 'an' : 'a');
const mustBe = (path: string, k: Kind) =>
  k === 'port' ? `${path} must be an integer from 0 to 65535` : `${path} must be ${article(k)} ${k}`;

/** A scope's attributes: the kind of each, which are required, and allowed values where the spec lists them. */
interface Scope {
  attrs: Record<string, Kind>;
  required?: string[];
  allowed?: Record<string, readonly string[]>;
}

const INSTANCE_STATES = [
  'pending',
  'running',
  'rebooting',
  'stopping',
  'stopped',
  'shutting-down',
  'terminated',
];

/** The integration scopes of spec 2.6, under the neutral names. */
const INTEGRATIONS: Record<string, Scope> = {
  cloudvm: {
    attrs: {
      instance_id: 'string',
      allowed_instance_states: 'array of strings',
      region: 'string',
      access_key_id: 'string',
      secret_access_key: 'string',
      timeout: 'integer',
      account: 'string',
    },
    required: ['access_key_id', 'secret_access_key'],
    allowed: { allowed_instance_states: INSTANCE_STATES },
  },
  cfgmgr_a: {
    attrs: {
      node_name: 'string',
      endpoint: 'string',
      flavor: 'string',
      client: 'string',
      key: 'string',
      ssl_pem_file: 'string',
      ssl_verify: 'boolean',
      proxy_address: 'string',
      proxy_port: 'port',
      proxy_username: 'string',
      proxy_password: 'string',
      timeout: 'integer',
    },
    required: ['endpoint', 'client', 'key'],
    allowed: { flavor: ['enterprise', 'open_source'] },
  },
  cfgmgr_b: { attrs: { node_name: 'string' } },
  cmdb: { attrs: { configuration_item: 'hash', incident: 'hash' } },
  tsdb: { attrs: { tags: 'hash' } },
  alerting: { attrs: { tags: 'array of strings' } },
};

/** The first problem of a scope's attributes, or undefined. */
function scopeProblem(path: string, value: unknown, scope: Scope): string | undefined {
  if (!isObject(value)) return mustBe(path, 'hash');
  for (const name of scope.required ?? [])
    if (value[name] === undefined || value[name] === null) return `${path}.${name} is required`;
  for (const [name, kind] of Object.entries(scope.attrs)) {
    const x = value[name];
    if (x === undefined || x === null) continue;
    if (!KIND[kind](x)) return mustBe(`${path}.${name}`, kind);
    const allowed = scope.allowed?.[name];
    const bad = allowed && (Array.isArray(x) ? x : [x]).find((s) => !allowed.includes(s as string));
    if (bad !== undefined && allowed)
      return `${path}.${name} must be one of ${allowed.join(', ')} (got "${String(bad)}")`;
  }
  return undefined;
}

const SOCKET: Scope = { attrs: { enabled: 'boolean', bind: 'string', port: 'port' } };
const HTTP_SOCKET: Scope = {
  attrs: {
    enabled: 'boolean',
    bind: 'string',
    port: 'port',
    user: 'string',
    password: 'string',
    protect_all_endpoints: 'boolean',
  },
};
const KEEPALIVE: Scope = {
  attrs: { handler: 'string', handlers: 'array of strings', thresholds: 'hash', interval: 'integer' },
};
const THRESHOLDS: Scope = { attrs: { warning: 'integer', critical: 'integer' } };
const HANDLER_SCOPE: Scope = { attrs: { handler: 'string' } };

/** The first problem of a client scope (before defaults), or undefined. */
function clientProblem(c: unknown): string | undefined {
  if (!isObject(c)) return mustBe('client', 'hash');
  if (!isString(c.name)) return mustBe('client.name', 'string');
  if (!LEGACY_NAME.test(c.name)) return 'client.name cannot contain spaces or special characters';
  if (c.address !== undefined && !isString(c.address)) return mustBe('client.address', 'string');
  if (!Array.isArray(c.subscriptions)) return mustBe('client.subscriptions', 'array of strings');
  const badSub = c.subscriptions.find((s) => !isString(s) || s === '');
  if (badSub !== undefined) return 'client.subscriptions must each be a non-empty string';
  for (const [name, kind] of [
    ['safe_mode', 'boolean'],
    ['redact', 'array of strings'],
    ['keepalives', 'boolean'],
    ['signature', 'string'],
    ['deregister', 'boolean'],
  ] as const) {
    const x = c[name];
    if (x !== undefined && x !== null && !KIND[kind](x)) return mustBe(`client.${name}`, kind);
  }
  const scopes: [string, Scope][] = [
    ['socket', SOCKET],
    ['http_socket', HTTP_SOCKET],
    ['keepalive', KEEPALIVE],
    ['registration', HANDLER_SCOPE],
    ['deregistration', HANDLER_SCOPE],
    ...Object.entries(INTEGRATIONS),
  ];
  for (const [name, scope] of scopes) {
    if (c[name] === undefined || c[name] === null) continue;
    const problem = scopeProblem(`client.${name}`, c[name], scope);
    if (problem) return problem;
  }
  const thresholds = isObject(c.keepalive) ? c.keepalive.thresholds : undefined;
  if (thresholds !== undefined && thresholds !== null) {
    const problem = scopeProblem('client.keepalive.thresholds', thresholds, THRESHOLDS);
    if (problem) return problem;
    for (const k of ['warning', 'critical'] as const) {
      const t = (thresholds as Obj)[k];
      if (isInt(t) && t <= 0) return `client.keepalive.thresholds.${k} must be greater than 0`;
    }
  }
  const interval = isObject(c.keepalive) ? c.keepalive.interval : undefined;
  if (isInt(interval) && interval < 1) return 'client.keepalive.interval must be at least 1';
  return undefined;
}

const SocketScope = v.object({ enabled: v.boolean(), bind: v.string(), port: v.number() });

/** A valid client with its defaults (spec 2.1-2.5): what the agent runs on. Custom attributes kept. */
export const LegacyClient = v.looseObject({
  name: v.string(),
  address: v.string(),
  subscriptions: v.array(v.string()),
  safe_mode: v.boolean(),
  redact: v.optional(v.array(v.string())),
  socket: SocketScope,
  http_socket: v.looseObject({
    ...SocketScope.entries,
    user: v.optional(v.string()),
    password: v.optional(v.string()),
    protect_all_endpoints: v.boolean(),
  }),
  keepalives: v.boolean(),
  keepalive: v.looseObject({
    handler: v.optional(v.string()),
    handlers: v.optional(v.array(v.string())),
    thresholds: v.object({ warning: v.number(), critical: v.number() }),
    interval: v.optional(v.number()),
  }),
  signature: v.optional(v.string()),
  registration: v.optional(v.looseObject({ handler: v.optional(v.string()) })),
  deregister: v.boolean(),
  deregistration: v.optional(v.looseObject({ handler: v.optional(v.string()) })),
});
export type LegacyClient = v.InferOutput<typeof LegacyClient>;

/** A check of the `checks` scope (validated by proto/legacy/check-definition.ts); custom attributes kept. */
export const LegacyCheck = v.looseObject({
  command: v.optional(v.string()),
  interval: v.optional(v.number()),
  cron: v.optional(v.string()),
  standalone: v.optional(v.boolean()),
  publish: v.optional(v.boolean()),
  subscribers: v.optional(v.array(v.string())),
  timeout: v.optional(v.number()),
  stdin: v.optional(v.boolean()),
  hooks: v.optional(v.record(v.string(), v.looseObject({ command: v.string() }))),
  source: v.optional(v.string()),
});
export type LegacyCheck = v.InferOutput<typeof LegacyCheck>;

export interface LegacySettings {
  client: LegacyClient;
  checks: Record<string, LegacyCheck>;
}

/** The spec's defaults. */
export const LEGACY_DEFAULTS = {
  socket: { enabled: true, bind: '127.0.0.1', port: 3030 },
  http_socket: { enabled: true, bind: '127.0.0.1', port: 3031, protect_all_endpoints: false },
  thresholds: { warning: 120, critical: 180 },
  /** Seconds between keepalives (spec 8); `client.keepalive.interval` is our addition for tests and labs. */
  keepaliveInterval: 20,
} as const;

const withDefaults = (defaults: object, given: unknown): Obj => ({
  ...defaults,
  ...(isObject(given) ? given : {}),
});

/**
 * Validates a merged settings document (`client` and `checks` scopes; others are ignored: they
 * configured Classic's server) with `name` and `address` already defaulted: the settings with
 * defaults and `client:<name>` subscribed, or the first problem as one line.
 */
export function legacySettings(
  doc: unknown,
): { ok: true; settings: LegacySettings } | { ok: false; message: string } {
  if (!isObject(doc)) return { ok: false, message: 'the legacy configuration must be a JSON object' };
  const problem = clientProblem(doc.client);
  if (problem) return { ok: false, message: problem };
  const checks = doc.checks ?? {};
  if (!isObject(checks)) return { ok: false, message: mustBe('checks', 'hash') };
  for (const [name, check] of Object.entries(checks)) {
    const p = checkDefinitionProblem(name, check);
    if (p) return { ok: false, message: p };
  }
  const c = doc.client as Obj;
  const keepalive = isObject(c.keepalive) ? c.keepalive : {};
  const client: Obj = {
    ...c,
    subscriptions: [...new Set([...(c.subscriptions as string[]), `client:${c.name as string}`])],
    safe_mode: c.safe_mode ?? false,
    socket: withDefaults(LEGACY_DEFAULTS.socket, c.socket),
    http_socket: withDefaults(LEGACY_DEFAULTS.http_socket, c.http_socket),
    keepalives: c.keepalives ?? true,
    keepalive: { ...keepalive, thresholds: withDefaults(LEGACY_DEFAULTS.thresholds, keepalive.thresholds) },
    deregister: c.deregister ?? false,
  };
  // A null optional attribute is an absent one.
  for (const k of ['redact', 'signature', 'registration', 'deregistration'])
    if (client[k] === null) delete client[k];
  const parsed = v.safeParse(LegacyClient, client);
  if (!parsed.success) return { ok: false, message: `client: ${parsed.issues[0].message}` };
  return { ok: true, settings: { client: parsed.output, checks: checks as Record<string, LegacyCheck> } };
}
