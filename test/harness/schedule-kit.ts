import { connect, type NatsConnection } from 'nats';
import { created, type Body, type coreApi } from './api.ts';

/** A check request the scheduler published, as a NATS client listening to it saw it. */
interface SeenRequest {
  subject: string;
  at: number;
  req: Body;
}

/**
 * For the scheduler suites (e2e/schedule, e2e/schedule-sandbox): a NATS client that records every
 * check request published on a subscription or round-robin subject (ad hoc queue messages left out),
 * and the API calls they make around checks.
 */
export async function scheduleKit(api: ReturnType<typeof coreApi>, natsServers: string) {
  const nc: NatsConnection = await connect({ servers: natsServers });
  const seen: SeenRequest[] = [];
  const sub = nc.subscribe('monitor.>');
  void (async () => {
    for await (const m of sub) {
      if (!m.subject.startsWith('monitor.sub.') && !m.subject.startsWith('monitor.rr.')) continue;
      try {
        seen.push({ subject: m.subject, at: Date.now(), req: JSON.parse(Buffer.from(m.data).toString()) });
      } catch {
        /* not ours */
      }
    }
  })();

  const requestsFor = (check: string) => seen.filter((s) => s.req.config?.metadata?.name === check);
  const eventOf = async (entity: string, check: string): Promise<Body | undefined> => {
    const r = await api<Body>(`/namespaces/default/events/${entity}/${check}`);
    return r.status === 200 ? r.body : undefined;
  };
  const createCheck = async (name: string, body: Body) =>
    created(
      await api('/namespaces/default/checks', 'POST', { metadata: { name, namespace: 'default' }, ...body }),
      `create ${name}`,
    );
  const close = async () => {
    sub.unsubscribe();
    await nc.close().catch(() => {});
  };
  return { nc, requestsFor, eventOf, createCheck, close };
}
