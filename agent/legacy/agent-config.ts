import type { AgentConfig } from '../../proto/schemas/agent-config.ts';
import { LEGACY_DEFAULTS, type LegacyClient } from '../../proto/legacy/client-definition.ts';
import { fromLegacySubscription } from '../../proto/legacy/subscriptions.ts';
import { legacyRedactFields } from '../../proto/legacy/redact.ts';
import { definitionExtras } from '../../proto/legacy/clients.ts';
import { redactValue } from '../../lib/redact.ts';

// What a legacy client definition decides of the agent (docs/compatibility.md#legacy-client): its
// name, subscriptions, keepalive timing and handlers, deregistration and redaction. The flags keep
// the rest (backend URLs, credentials, cache dir, TLS, limits). The agent's own HTTP API and TCP/UDP
// sockets give way to the legacy client's sockets (it had no StatsD listener), and it speaks JSON:
// the protobuf schema cannot carry a free-form client definition.

/** Our keepalive deadline's floor (proto/schemas/event.ts): a shorter legacy threshold is raised to it. */
const MIN_THRESHOLD = 5;

export function legacyAgentConfig(config: AgentConfig, client: LegacyClient): AgentConfig {
  const thresholds = client.keepalive.thresholds;
  const warning = Math.max(MIN_THRESHOLD, thresholds.warning);
  const critical = Math.max(MIN_THRESHOLD, thresholds.critical);
  const handlers = [
    ...(client.keepalive.handler !== undefined ? [client.keepalive.handler] : []),
    ...(client.keepalive.handlers ?? []),
  ];
  return {
    ...config,
    name: client.name,
    subscriptions: [...new Set(client.subscriptions.map(fromLegacySubscription))],
    // The legacy default (the spec's nine keys and the thirteen the last legacy release added, such as
    // `secret_access_key` of the cloudvm scope) is a superset of the spec's: nothing it hides shows.
    redact: [...legacyRedactFields(client)],
    'keepalive-interval': client.keepalive.interval ?? LEGACY_DEFAULTS.keepaliveInterval,
    'keepalive-warning-timeout': warning,
    'keepalive-critical-timeout': critical,
    'keepalive-handlers': [...new Set(handlers)],
    deregister: client.deregister,
    'deregistration-handler': client.deregistration?.handler ?? '',
    protobuf: false,
    'disable-api': true,
    'disable-sockets': true,
    'statsd-disable': true,
  };
}

/**
 * The definition as the entity's `legacy` object carries it in keepalives and events: without what
 * the entity models and without the signature (a credential), redacted with the client's list.
 */
export function entityLegacy(client: LegacyClient): Record<string, unknown> {
  const { signature: _signature, ...extras } = definitionExtras(client);
  return redactValue(extras, legacyRedactFields(client));
}
