import * as v from 'valibot';
import { Name } from './common.ts';

/** Handshake headers an agent sends when it opens its WebSocket (lower-case, as Node hands them). */
export const handshakeHeaders = {
  namespace: 'monitor-namespace',
  agentName: 'monitor-agentname',
  user: 'monitor-user',
  subscriptions: 'monitor-subscriptions',
  /** Comma-separated features the agent understands (see AGENT_CAPABILITIES); absent for older agents. */
  capabilities: 'monitor-capabilities',
} as const;

/**
 * Features an agent announces in `Monitor-Capabilities`. `ack-retry`: the agent keeps an event that
 * is answered `ack` with `ok: false` and a retryable code (RETRYABLE_ACK_CODES) and resends it with
 * backoff; an agent without it drops every refused event, so it is never sent a retryable refusal.
 */
export const AGENT_CAPABILITIES = { ackRetry: 'ack-retry' } as const;

const Subscriptions = v.pipe(
  v.optional(v.string(), ''),
  v.transform((s) =>
    s
      .split(',')
      .map((x) => x.trim())
      .filter(Boolean),
  ),
  v.array(v.pipe(v.string(), v.maxLength(253, 'subscription names are at most 253 characters'))),
);

export const AgentHandshake = v.object({
  namespace: v.pipe(v.string('missing header Monitor-Namespace'), Name),
  agentName: v.pipe(v.string('missing header Monitor-AgentName'), Name),
  user: v.optional(v.string()),
  subscriptions: Subscriptions,
  capabilities: v.pipe(
    v.optional(v.string(), ''),
    v.maxLength(1024, 'Monitor-Capabilities is at most 1024 characters'),
    v.transform((s) =>
      s
        .split(',')
        .map((x) => x.trim())
        .filter(Boolean),
    ),
  ),
});
export type AgentHandshake = v.InferOutput<typeof AgentHandshake>;
