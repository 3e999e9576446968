import * as v from 'valibot';
import { AckPolicy, type ConsumerMessages } from 'nats';
import { configKeys, streams, subjects } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import { QueuedAdhoc } from '../../proto/schemas/resources/checks.ts';
import type { ConfigStore } from '../config/store.ts';
import type { NatsAdapter } from '../runtime/nats.ts';
import type { StoredCheck } from './messages.ts';
import { buildRequest, expandProxy, requestSubjects } from './requests.ts';
import type { EntityReadModel } from '../entity/read-model.ts';

/** Every node pulls from the same durable consumer, so each queued request is taken by one node. */
const ADHOC_CONSUMER = 'monitor-scheduler';
const ACK_WAIT_NS = 30_000_000_000;

/**
 * Takes ad hoc check requests off the MONITOR_ADHOC work queue and publishes them to the check's
 * subscriptions (or those the request names), acknowledging each once published. A request for a
 * check that no longer exists, or that does not parse, is dropped with a warning.
 */
export async function startAdhocExecutor(
  nats: NatsAdapter,
  config: ConfigStore,
  log: Logger,
  readModel?: EntityReadModel,
): Promise<{ stop(): Promise<void> }> {
  const consumer = await nats.durableConsumer(streams.adhoc, ADHOC_CONSUMER, {
    ack_policy: AckPolicy.Explicit,
    ack_wait: ACK_WAIT_NS,
    filter_subject: `${subjects.adhocPrefix}.>`,
    max_deliver: 5,
  });
  let messages: ConsumerMessages | undefined;
  let stopped = false;
  const run = async () => {
    while (!stopped) {
      try {
        messages = await consumer.consume({ max_messages: 32 });
        for await (const m of messages) {
          let parsed: v.InferOutput<typeof QueuedAdhoc>;
          try {
            parsed = v.parse(QueuedAdhoc, m.json());
          } catch (err) {
            log.warn('dropping a malformed ad hoc request', { error: (err as Error).message });
            m.term();
            continue;
          }
          const check = config.get<StoredCheck>(
            configKeys.namespaced('checks', parsed.namespace, parsed.check),
          );
          if (!check) {
            log.warn('ad hoc request for a check that does not exist', {
              namespace: parsed.namespace,
              check: parsed.check,
            });
            m.ack();
            continue;
          }
          const targets = requestSubjects(parsed.namespace, check, parsed.subscriptions ?? undefined);
          for (const req of expandProxy(
            readModel,
            parsed.namespace,
            buildRequest(config, parsed.namespace, check, parsed.issued),
            log,
          )) {
            const data = Buffer.from(JSON.stringify(req));
            for (const s of targets) nats.publish(s, data);
          }
          m.ack();
          log.info('ad hoc check request published', {
            namespace: parsed.namespace,
            check: parsed.check,
            issued: parsed.issued,
            creator: parsed.creator,
          });
        }
      } catch (err) {
        if (!stopped) log.warn('ad hoc consumer failed, restarting', { error: (err as Error).message });
      }
      if (!stopped) await new Promise((r) => setTimeout(r, 500));
    }
  };
  void run();
  return {
    stop: async () => {
      stopped = true;
      await messages?.close().catch(() => {});
    },
  };
}
