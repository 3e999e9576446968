/**
 * The backend stand-in of the agent checks suites (agent-checks.test.ts, agent-checks-options.test.ts):
 * a WebSocket server that sends check_request frames to a real agent, receives its events and
 * acknowledges them; and the agents connected to such stand-ins (or started some other way), stopped
 * together in a suite's after hook.
 *
 * Those suites run their checks on a real backend (./backend.ts). The stand-in stays only for the
 * requests a real backend never sends: the same request twice or an older one than the last,
 * secrets over plain ws (a real backend sends them only over wss, e2e/secrets.test.ts), malformed requests, and asset definitions the API
 * refuses to store; each use says which at the top of its suite. */
import { WebSocketServer, type WebSocket } from 'ws';
import {
  CONTENT_PROTOBUF,
  decodeFrame,
  encodeFrame,
  jsonCodec,
  messageBytes,
} from '../../../proto/frames.ts';
import { protobufCodec } from '../../../proto/wire/codec.ts';
import { freePort, startAgent, waitFor, type AgentProc } from '../../harness/index.ts';
import { fresh } from '../../harness/api.ts';

/** The Nagios plugins of monitoring-plugins-basic (make test-binaries installs them). */
export const PLUGINS = '/usr/lib/nagios/plugins';

export interface StandIn {
  url: string;
  events: any[];
  socket(): WebSocket | undefined;
  request(req: unknown): void;
  raw(payload: string | Buffer): void;
  close(): void;
}

async function standIn(protobuf = false): Promise<StandIn> {
  const port = await freePort();
  const wss = new WebSocketServer({ port, host: '127.0.0.1' });
  const codec = protobuf ? protobufCodec : jsonCodec;
  if (protobuf)
    wss.on('headers', (headers) => {
      headers.push(`Content-Type: ${CONTENT_PROTOBUF}`);
    });
  const events: any[] = [];
  let current: WebSocket | undefined;
  wss.on('connection', (ws) => {
    current = ws;
    ws.on('message', (data) => {
      const frame = decodeFrame(messageBytes(data as Buffer));
      if (frame.type !== 'event') return;
      const event = codec.decode(frame.payload, 'event') as any;
      events.push(event);
      ws.send(encodeFrame('ack', codec.encode({ id: event.id, ok: true }, 'ack')));
    });
  });
  return {
    url: `ws://127.0.0.1:${port}`,
    events,
    socket: () => current,
    request: (req) => current!.send(encodeFrame('check_request', codec.encode(req, 'check_request'))),
    raw: (payload) => current!.send(encodeFrame('check_request', payload)),
    close: () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}

/** Stand-ins and the agents connected to them; `stopAll()` in the suite's after hook. */
export function checkAgents() {
  const servers: StandIn[] = [];
  const agents: AgentProc[] = [];

  /** A stand-in, and an agent (with these extra arguments) connected to it. */
  async function agentWith(
    extraArgs: string[] = [],
    protobuf = false,
  ): Promise<{ s: StandIn; agent: AgentProc }> {
    const s = await standIn(protobuf);
    servers.push(s);
    const agent = await startAgent({ name: fresh('checks'), backendUrls: s.url, extraArgs });
    agents.push(agent);
    await agent.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
    return { s, agent };
  }

  /** An agent started some other way, stopped with the others. */
  const track = (agent: AgentProc) => agents.push(agent);

  async function stopAll(): Promise<void> {
    for (const a of agents) await a.stop().catch(() => {});
    for (const s of servers) s.close();
  }

  return { agentWith, track, stopAll };
}

let issuedSeq = Math.floor(Date.now() / 1000);
export function request(name: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    config: { metadata: { name, namespace: 'default' }, interval: 60, handlers: ['default'], ...config },
    issued: ++issuedSeq,
    ...extra,
  };
}

/** Sends a request and waits for the event of that check. */
export async function run(
  target: { s: StandIn },
  name: string,
  config: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  timeoutMs = 15000,
): Promise<any> {
  const req = request(name, config, extra);
  target.s.request(req);
  return waitFor(
    () => target.s.events.find((e) => e.check?.metadata?.name === name && e.check.issued === req.issued),
    { timeoutMs, what: `event of ${name}` },
  );
}
