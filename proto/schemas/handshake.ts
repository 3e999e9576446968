import * as v from 'valibot';
import { Name } from './common.ts';

/** Handshake headers an agent sends when it opens its WebSocket (lower-case, as Node hands them). */
export const handshakeHeaders = {
  namespace: 'monitor-namespace',
  agentName: 'monitor-agentname',
  user: 'monitor-user',
  subscriptions: 'monitor-subscriptions',
} as const;

const Subscriptions = v.pipe(
  v.optional(v.string(), ''),
  v.transform((s) => s.split(',').map((x) => x.trim()).filter(Boolean)),
  v.array(v.pipe(v.string(), v.maxLength(253, 'subscription names are at most 253 characters'))),
);

export const AgentHandshake = v.object({
  namespace: v.pipe(v.string('missing header Monitor-Namespace'), Name),
  agentName: v.pipe(v.string('missing header Monitor-AgentName'), Name),
  user: v.optional(v.string()),
  subscriptions: Subscriptions,
});
export type AgentHandshake = v.InferOutput<typeof AgentHandshake>;
