/**
 * The steady load of the chaos suite: simulated agents connected through HAProxy's agent frontend
 * (keepalives, events, check requests) and REST writers through its REST frontend, paced by one
 * timer. The load can be paused and drained ("quiesced") so the checker reads a store that no
 * longer moves, then resumed.
 */
import { sleep, waitFor } from '../../harness/index.ts';
import type { History } from '../checker/history.ts';
import { RestWriter } from './rest-writer.ts';
import { SimAgent, type KeepaliveSettings } from './sim-agent.ts';

interface LoadOptions {
  agentUrl: string;
  apiUrl: string;
  agents: number;
  /** How many of the agents also subscribe to `tickSubscription`. */
  tickAgents: number;
  tickSubscription: string;
  restWriters: number;
  /** Events per second over all agents, and over all REST writers. */
  agentRate: number;
  restRate: number;
  keepalive: KeepaliveSettings;
}

export interface Load {
  agents: SimAgent[];
  writers: RestWriter[];
  /** Stops making new events (keepalives go on). */
  pause(): void;
  resume(): void;
  /** Pauses and waits until every event is answered, or `timeoutMs`; resolves to what is left. */
  quiesce(timeoutMs: number): Promise<number>;
  /** Stops the load and closes every agent. */
  stop(): Promise<void>;
}

const TICK_MS = 50;

export async function startLoad(o: LoadOptions, history: History): Promise<Load> {
  const agents = Array.from(
    { length: o.agents },
    (_, i) =>
      new SimAgent(
        `chaos-${String(i).padStart(3, '0')}`,
        o.agentUrl,
        i < o.tickAgents ? ['chaos', o.tickSubscription] : ['chaos'],
        o.keepalive,
        history,
      ),
  );
  const writers = Array.from(
    { length: o.restWriters },
    (_, i) => new RestWriter(`chaos-rest-${i}`, o.apiUrl, history),
  );
  // Connect a few at a time, as a fleet comes up, rather than 200 handshakes in one go.
  for (let i = 0; i < agents.length; i += 20) {
    for (const a of agents.slice(i, i + 20)) a.start();
    await sleep(100);
  }
  await waitFor(() => agents.every((a) => a.connected), {
    timeoutMs: 60_000,
    intervalMs: 250,
    what: `${agents.length} simulated agents connected through haproxy`,
  });

  let running = true;
  // Fractional credit per client, so low per-client rates still come out right on average.
  let agentCredit = 0;
  let restCredit = 0;
  let nextAgent = 0;
  let nextWriter = 0;
  let last = Date.now();
  const timer = setInterval(() => {
    const now = Date.now();
    // A stalled event loop must not turn into a burst: at most one second is caught up.
    const dt = Math.min(1000, now - last) / 1000;
    last = now;
    if (!running) return;
    agentCredit += o.agentRate * dt;
    restCredit += o.restRate * dt;
    for (; agentCredit >= 1; agentCredit--) {
      // Round robin over the live agents: a dead one sends nothing.
      for (let tries = 0; tries < agents.length; tries++) {
        const a = agents[nextAgent++ % agents.length]!;
        if (!a.dead) {
          a.submit();
          break;
        }
      }
    }
    for (; restCredit >= 1 && writers.length > 0; restCredit--)
      writers[nextWriter++ % writers.length]!.submit();
  }, TICK_MS);

  const outstanding = () =>
    agents.reduce((n, a) => n + (a.dead ? 0 : a.outstanding), 0) +
    writers.reduce((n, w) => n + w.outstanding, 0);

  return {
    agents,
    writers,
    pause: () => {
      running = false;
    },
    resume: () => {
      running = true;
      last = Date.now();
    },
    async quiesce(timeoutMs) {
      running = false;
      const deadline = Date.now() + timeoutMs;
      while (outstanding() > 0 && Date.now() < deadline) await sleep(200);
      return outstanding();
    },
    async stop() {
      running = false;
      clearInterval(timer);
      for (const a of agents) a.kill();
    },
  };
}
