/**
 * The real path of the agent checks suites (agent-checks.test.ts, agent-checks-options.test.ts): a
 * real backend schedules each check and stores its result. A check is created through the REST API
 * for a subscription only its agent has, with `publish: false`; `POST .../execute` has the backend
 * send it once (the answer says which `issued`); the agent's event is then read back through the API
 * (`/events/<agent>/<check>`) once it carries that `issued`. Hooks and assets are resources of the
 * backend too, which puts them in the request.
 */
import * as assert from 'uvu/assert';
import { startAgent, waitFor, type AgentProc, type Backend } from '../../harness/index.ts';
import { coreApi, fresh, type Body } from '../../harness/api.ts';

export interface CheckAgent {
  agent: AgentProc;
  /** The subscription only this agent has: every check created by `run` names it. */
  subscription: string;
}

/** Agents connected to a real backend; `stopAll()` in the suite's after hook. */
export function backendAgents(backend: () => Backend) {
  const api = coreApi(backend);
  const agents: AgentProc[] = [];

  /**
   * An agent (with these extra arguments) connected to the backend, registered as an entity; `url`
   * replaces the backend's agent URL (`wss://` for a backend with agent TLS).
   */
  async function agentOn(extraArgs: string[] = [], url?: string): Promise<CheckAgent> {
    const subscription = fresh('checks');
    const agent = await startAgent({
      name: fresh('checks'),
      backendUrls: url ?? backend().agentUrl,
      subscriptions: [subscription],
      extraArgs,
    });
    agents.push(agent);
    await waitFor(async () => (await api(`/namespaces/default/entities/${agent.name}`)).status === 200, {
      timeoutMs: 20000,
      what: `entity ${agent.name}`,
    });
    return { agent, subscription };
  }

  /** Creates (or replaces) a namespaced resource of the default namespace: a hook, an asset, a handler. */
  async function put(kind: string, name: string, body: Body): Promise<void> {
    const r = await api(`/namespaces/default/${kind}/${name}`, 'PUT', {
      metadata: { name, namespace: 'default' },
      ...body,
    });
    assert.ok(r.status === 200 || r.status === 201, `${kind} ${name}: ${r.status} ${JSON.stringify(r.body)}`);
  }

  /**
   * Creates the check for the agent's subscription (interval 60, handler `default`, not published),
   * has the backend execute it once and returns the event the API then serves for it. `config` may
   * carry `metadata` (annotations) besides the check's fields.
   */
  async function execute(target: CheckAgent, name: string, config: Body): Promise<number> {
    const { metadata, ...fields } = config;
    await put('checks', name, {
      interval: 60,
      handlers: ['default'],
      publish: false,
      subscriptions: [target.subscription],
      ...fields,
      metadata: { ...metadata, name, namespace: 'default' },
    });
    // The backend's executor looks the check up in its configuration cache, which the etcd watch fills
    // a moment after the write: a request that came too early is dropped with a warning naming the
    // check, and is asked for again. Otherwise the agent logs that it accepted (or refused) the request.
    const refusals: string[] = [];
    for (let attempt = 1; ; attempt++) {
      const fromBackend = backend().proc.lineCount;
      const fromAgent = target.agent.proc.lineCount;
      const r = await api<Body>(`/namespaces/default/checks/${name}/execute`, 'POST', {});
      assert.is(r.status, 202, `execute ${name}: ${r.status} ${JSON.stringify(r.body)}`);
      const issued = r.body.issued as number;
      const outcome = await waitFor(
        () => {
          const accepted = target.agent.proc
            .lines()
            .slice(fromAgent)
            .some(
              (l) =>
                l.includes('check request accepted') && l.includes(`"${name}"`) && l.includes(`${issued}`),
            );
          if (accepted) return 'accepted';
          // The agent refuses a request while the check's previous run is in progress, or one it takes
          // for a duplicate or a stale one (docs/compatibility.md#check-request-dedupe): asked again.
          const refused = target.agent.proc
            .lines()
            .slice(fromAgent)
            .find((l) => l.includes('check request refused') && l.includes(`"${name}"`));
          if (refused) {
            refusals.push(refused);
            return 'refused';
          }
          const dropped = backend()
            .proc.lines()
            .slice(fromBackend)
            .some((l) => l.includes('for a check that does not exist') && l.includes(`"${name}"`));
          return dropped ? 'dropped' : undefined;
        },
        { timeoutMs: 15000, intervalMs: 50, what: `the agent to accept ${name}` },
      );
      if (outcome === 'accepted') return issued;
      assert.ok(
        attempt < 5,
        `check ${name} was not run in five attempts${refusals.length ? `; the agent said: ${refusals.join(' | ')}` : ' (the backend did not find it)'}`,
      );
      if (outcome === 'refused') await new Promise((r) => setTimeout(r, 1000));
    }
  }

  /** The event of check `name` on the agent that carries `issued`, once the API serves it. */
  function eventOf(target: CheckAgent, name: string, issued: number, timeoutMs = 15000): Promise<Body> {
    return waitFor(
      async () => {
        const r = await api<Body>(`/namespaces/default/events/${target.agent.name}/${name}`);
        return r.status === 200 && r.body.check?.issued === issued ? r.body : undefined;
      },
      { timeoutMs, intervalMs: 100, what: `event of ${name} issued at ${issued}` },
    );
  }

  /** Creates check `name`, has the backend run it once on the agent, and returns its event. */
  async function run(target: CheckAgent, name: string, config: Body, timeoutMs = 15000): Promise<Body> {
    const issued = await execute(target, name, config);
    return eventOf(target, name, issued, timeoutMs);
  }

  async function stopAll(): Promise<void> {
    for (const a of agents) await a.stop().catch(() => {});
  }

  return { agentOn, put, execute, eventOf, run, stopAll, api };
}
