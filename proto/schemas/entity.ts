import * as v from 'valibot';
import { ObjectMeta, UInt } from './common.ts';

const ENTITY_CLASSES = ['agent', 'proxy', 'backend'] as const;

/** The fields an entity's secrets are hidden in when it names none itself; logs hide them too. */
export const DEFAULT_REDACT = [
  'password',
  'passwd',
  'pass',
  'api_key',
  'api_token',
  'access_key',
  'secret_key',
  'private_key',
  'secret',
];

const NetworkInterface = v.object({
  name: v.string(),
  mac: v.optional(v.string()),
  addresses: v.optional(v.array(v.string())),
});

/** Host facts the agent reports; unknown keys are kept so newer agents can add facts. */
export const System = v.looseObject({
  hostname: v.optional(v.string()),
  os: v.optional(v.string()),
  platform: v.optional(v.string()),
  platform_family: v.optional(v.string()),
  platform_version: v.optional(v.string()),
  arch: v.optional(v.string()),
  network: v.optional(v.object({ interfaces: v.optional(v.array(NetworkInterface)) })),
});

/** core/v2 Entity as the API shows it and as agents send it inside keepalives and events. */
export const Entity = v.object({
  metadata: ObjectMeta,
  entity_class: v.optional(v.picklist(ENTITY_CLASSES)),
  system: v.optional(System),
  subscriptions: v.optional(v.nullable(v.array(v.string()))),
  last_seen: v.optional(UInt),
  deregister: v.optional(v.boolean()),
  deregistration: v.optional(v.object({ handler: v.optional(v.string()) })),
  user: v.optional(v.string()),
  redact: v.optional(v.nullable(v.array(v.string()))),
  monitor_agent_version: v.optional(v.string()),
  keepalive_handlers: v.optional(v.nullable(v.array(v.string()))),
  /**
   * The legacy (Classic) client definition beyond what an entity models: `address`, `keepalive`,
   * `safe_mode`, custom attributes... Kept as given and shown by the legacy API's client view
   * (proto/legacy/clients.ts); the current generation ignores it.
   */
  legacy: v.optional(v.looseObject({})),
});
export type Entity = v.InferOutput<typeof Entity>;
