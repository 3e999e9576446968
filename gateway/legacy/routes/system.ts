import { createHash } from 'node:crypto';
import type { Context } from 'hono';
import { VERSION } from '../../../proto/version.ts';
import { LEGACY_REDACT } from '../../../proto/legacy/redact.ts';
import { redactValue } from '../../../lib/redact.ts';
import type { LegacyEnv, LegacyServices } from '../env.ts';
import { empty, json } from '../http.ts';
import { route, type LegacyRoute } from '../router.ts';

const DIGITS = /^[0-9]+$/;

/**
 * `/health`: 204 while the transport is connected and, when asked, enough backends consume and few
 * enough jobs wait; else 412 with one sentence per failed condition.
 */
async function health(c: Context<LegacyEnv>, svc: LegacyServices): Promise<Response> {
  const t = await svc.transport();
  const problems: string[] = [];
  if (!t.connected) problems.push('not connected to transport');
  const consumers = c.req.query('consumers');
  if (consumers !== undefined && DIGITS.test(consumers)) {
    const min = Number(consumers);
    if (t.consumers < min) {
      problems.push(`keepalive consumers (${t.consumers}) less than min_consumers (${min})`);
      problems.push(`result consumers (${t.consumers}) less than min_consumers (${min})`);
    }
  }
  const messages = c.req.query('messages');
  if (messages !== undefined && DIGITS.test(messages)) {
    const max = Number(messages);
    if (t.messages > max) {
      problems.push(`keepalive messages (${t.messages}) greater than max_messages (${max})`);
      problems.push(`result messages (${t.messages}) greater than max_messages (${max})`);
    }
  }
  return problems.length ? json(c, 412, problems) : empty(c, 204);
}

/**
 * `/health`, `/info` and `/settings`: the node and its transport, answered even while the stores are
 * not. The settings do not change while the node runs: redacted and digested once.
 */
export function systemRoutes(svc: LegacyServices, protectedApi: boolean): LegacyRoute[] {
  const redacted = redactValue(svc.settings, LEGACY_REDACT);
  const hexdigest = createHash('sha256').update(JSON.stringify(redacted)).digest('hex');
  return [
    route('GET', '/health', (c) => health(c, svc)),
    route('GET', '/info', async (c) => {
      const t = await svc.transport();
      const queue = { messages: t.messages, consumers: t.consumers };
      const about = { version: VERSION, settings: { hexdigest } };
      return json(c, 200, {
        monitor: about,
        // The key dashboards written for the legacy API read the version from (docs/compatibility.md#legacy-api).
        sensu: about,
        transport: { name: 'nats', keepalives: queue, results: queue, connected: t.connected },
        redis: { connected: t.connected },
        servers: svc.servers(),
      });
    }),
    // Unredacted only on request, and only when the API has credentials of its own.
    route('GET', '/settings', (c) =>
      json(c, 200, protectedApi && c.req.query('redacted') === 'false' ? svc.settings : redacted),
    ),
  ];
}
