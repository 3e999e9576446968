import { buckets, configKeys } from '../../proto/names.ts';
import type { EntityReadModel } from '../entity/read-model.ts';
import type { ConfigStore } from '../config/store.ts';
import { ActorError, type ActorBehavior, type Turn } from '../runtime/types.ts';
import {
  SCHEDULE_KIND,
  TICK_TIMER,
  splitScheduleId,
  type ConfigureMsg,
  type ScheduleState,
  type StopMsg,
  type StoredCheck,
} from './messages.ts';
import { nextFire } from './next.ts';
import { buildRequest, expandProxy, requestSubjects, type OutgoingRequest } from './requests.ts';
import { subdued } from './subdue.ts';

interface ScheduleDeps {
  config: ConfigStore;
  /** Publishes a check request (JSON) on a NATS subject. */
  publish(subject: string, data: Uint8Array): void;
  /** The entity list of every namespace, for proxy_requests; absent: proxy requests publish nothing. */
  readModel?: EntityReadModel;
}

/**
 * The schedule actor of one check (docs/architecture.md#check-scheduling): the single owner in the cluster of
 * the check's timer. It holds the config version it schedules, keeps one durable `tick` deadline at the
 * check's next scheduled instant, and on each tick publishes the check request once the turn is durable.
 * `issued` is the tick's scheduled second, so a tick refired after a failover carries the same value and
 * agents drop it as a duplicate.
 */
export function scheduleBehavior(deps: ScheduleDeps): ActorBehavior<ScheduleState> {
  const arm = (t: Turn<ScheduleState>, check: StoredCheck, after: number) => {
    const at = nextFire(splitScheduleId(t.id)[1], check, after);
    if (at === undefined) t.clearTimer(TICK_TIMER);
    else t.setTimer(TICK_TIMER, at);
  };

  const configure = (t: Turn<ScheduleState>, body: ConfigureMsg) => {
    if (!body || typeof body !== 'object' || typeof body.revision !== 'number' || !body.config?.metadata)
      throw new ActorError('invalid', 'configure needs {config, revision}');
    const current = t.state;
    if (current && current.revision > body.revision) return { revision: current.revision };
    if (current && current.revision === body.revision) {
      // Same version: only make sure its deadline is armed (a start-up `ensure`).
      if (!t.timer(TICK_TIMER) && nextFire(splitScheduleId(t.id)[1], current.config, t.now) !== undefined)
        arm(t, current.config, t.now);
      return { revision: current.revision };
    }
    t.state = { config: body.config, revision: body.revision };
    // A tick already due (its turn queued behind this message) still fires, with the new version.
    const due = t.timer(TICK_TIMER);
    if (!(due && due.at <= t.now && body.config.publish !== false)) arm(t, body.config, t.now);
    return { revision: body.revision, next: t.timer(TICK_TIMER)?.at ?? null };
  };

  const publish = (subjects: string[], req: OutgoingRequest) => {
    const data = Buffer.from(JSON.stringify(req));
    for (const s of subjects) deps.publish(s, data);
  };

  return {
    kind: SCHEDULE_KIND,
    bucket: buckets.schedules,
    keyTokens: (id) => splitScheduleId(id),

    async receive(t, type, body) {
      switch (type) {
        case 'configure':
        case 'ensure':
          return configure(t, body as ConfigureMsg);
        case 'stop': {
          const rev = (body as StopMsg | undefined)?.revision ?? Infinity;
          if (t.state && t.state.revision > rev) return { stopped: false };
          t.clearTimer(TICK_TIMER);
          t.state = undefined;
          return { stopped: true };
        }
        case 'get':
          return t.state ? { revision: t.state.revision, next: t.timer(TICK_TIMER)?.at ?? null } : null;
        default:
          throw new ActorError('invalid', `unknown schedule message "${type}"`);
      }
    },

    async fire(t, timer, at) {
      if (timer !== TICK_TIMER || !t.state) return;
      const [ns, name] = splitScheduleId(t.id);
      // The node's configuration view is the truth: a check deleted while its `stop` was lost
      // stops here, and a newer version seen here is adopted (its `configure` is on its way).
      const entry = deps.config.entry<StoredCheck>(configKeys.namespaced('checks', ns, name));
      if (!entry) {
        t.state = undefined;
        return;
      }
      let state = t.state;
      if (entry.modRevision > state.revision) {
        state = { config: entry.value, revision: entry.modRevision };
        t.state = state;
      }
      const check = state.config;
      // Strictly after now: a node that was down across several ticks fires once, not a burst.
      arm(t, check, Math.max(at, t.now));
      if (check.publish === false) return;
      if (subdued(check.subdues, at)) {
        t.log.debug('check subdued', { namespace: ns, check: name });
        return;
      }
      const issued = Math.floor(at / 1000);
      const subjects = requestSubjects(ns, check);
      if (subjects.length === 0) return;
      const requests = expandProxy(deps.readModel, ns, buildRequest(deps.config, ns, check, issued), t.log);
      t.afterCommit(() => spreadPublish(name, subjects, requests, check, at, publish));
    },
  };
}

/**
 * Proxy requests with `splay: true` go out spread over `splay_coverage`% (default 90) of the time
 * to the next fire (at least 5 s), as in docs/compatibility.md#proxy-requests; everything else at once.
 */
function spreadPublish(
  name: string,
  subjects: string[],
  requests: OutgoingRequest[],
  check: StoredCheck,
  at: number,
  publish: (s: string[], r: OutgoingRequest) => void,
): void {
  const proxy = check.proxy_requests;
  if (!proxy?.splay || requests.length < 2) {
    for (const r of requests) publish(subjects, r);
    return;
  }
  const next = nextFire(name, check, at);
  const window = Math.max(5000, (next ?? at + 5000) - at) * ((proxy.splay_coverage || 90) / 100);
  const gap = window / requests.length;
  requests.forEach((r, i) => {
    if (i === 0) {
      publish(subjects, r);
      return;
    }
    setTimeout(() => publish(subjects, r), gap * i).unref();
  });
}
