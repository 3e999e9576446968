// suite-timeout: 90
import { spawn, type ChildProcess } from 'node:child_process';
import { createServer, type Server } from 'node:http';
import { once } from 'node:events';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import type { Worker } from 'node:worker_threads';
import { createInterface } from 'node:readline';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { freePorts, tempDir, waitFor } from '../harness/index.ts';
import { EdgeThread, type Hello } from '../../gateway/agents/edge/thread.ts';
import type { EdgeSocket } from '../../gateway/agents/edge/socket.ts';

// The agent port's sockets live on the edge thread (docs/architecture.md#the-agent-edge-thread), so
// agents that connect while the main thread is busy are all heard of when it is free, not one per
// turn of its loop. Real sockets, a real worker thread, and real ws clients in a child process (the
// clients need a loop of their own: this one is blocked on purpose).

const AGENTS = 40;

/** Counts the turns of this thread's event loop. */
class Turns {
  n = 0;
  private timer: NodeJS.Immediate | undefined;
  start(): void {
    const tick = () => {
      this.n++;
      this.timer = setImmediate(tick);
    };
    this.timer = setImmediate(tick);
  }
  stop(): void {
    if (this.timer) clearImmediate(this.timer);
  }
}

function busy(ms: number): void {
  const end = performance.now() + ms;
  while (performance.now() < end) {
    /* the main thread at work */
  }
}

/**
 * ws clients in a child process: on each `go <port> <n>` line n of them connect; each adds a byte to
 * the file `progress` once connected, and prints what it sees.
 */
function clients(progress: string): { child: ChildProcess; lines: AsyncIterator<string> } {
  const script = `
    import WebSocket from 'ws';
    import { createInterface } from 'node:readline';
    console.log('ready');
    import { appendFileSync } from 'node:fs';
    const progress = process.argv[1];
    for await (const line of createInterface({ input: process.stdin })) {
      const [cmd, port, n] = line.split(' ');
      if (cmd !== 'go') continue;
      for (let i = 0; i < Number(n); i++) {
        const ws = new WebSocket('ws://127.0.0.1:' + port + '/', { headers: { 'monitor-agentname': 'a' + i } });
        ws.on('open', () => { console.log('open ' + port); ws.send(Buffer.from('hello from ' + i)); });
        ws.on('message', (d) => console.log('message ' + port + ' ' + d.toString()));
        ws.on('close', (code, reason) => console.log('close ' + port + ' ' + code + ' ' + reason.toString()));
        ws.on('unexpected-response', (_req, res) => console.log('refused ' + res.statusCode));
        ws.on('error', () => {});
        ws._req.on('socket', (s) => s.on('connect', () => appendFileSync(progress, 'x')));
      }
    }
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script, progress], {
    cwd: process.cwd(),
    stdio: ['pipe', 'pipe', 'inherit'],
  });
  return { child, lines: createInterface({ input: child.stdout! })[Symbol.asyncIterator]() };
}

let edge: EdgeThread | undefined;
let plain: Server | undefined;
let child: ChildProcess | undefined;
let lines: AsyncIterator<string>;
let edgePort: number;
const turns = new Turns();
const opened: EdgeSocket[] = [];
/** What each opened socket received from its agent. */
const received = new Map<EdgeSocket, string[]>();

test.after(async () => {
  turns.stop();
  child?.kill('SIGKILL');
  plain?.closeAllConnections();
  await Promise.allSettled([edge?.stop(), plain && new Promise((r) => plain!.close(r))]);
});

test('agents that connect while the main thread is busy all reach it within a turn or two, where a listener of its own takes one per turn', async () => {
  const ports = await freePorts(2);
  edgePort = ports[0]!;
  const plainPort = ports[1]!;
  const hellos: { hello: Hello; turn: number }[] = [];
  edge = new EdgeThread(
    { host: '127.0.0.1', port: edgePort, node: 'edge-test', closeGraceMs: 500 },
    {
      hello: (h) => {
        hellos.push({ hello: h, turn: turns.n });
        edge!.accept(h.id);
      },
      open: (s) => {
        opened.push(s);
        const got: string[] = [];
        received.set(s, got);
        s.on('message', (data, binary) => got.push(`${binary} ${data.toString()}`));
      },
      gone: () => {},
      log: () => {},
    },
  );
  await edge.start();
  // The control: the same upgrades to a listener on this thread.
  const plainTurns: number[] = [];
  plain = createServer();
  plain.on('upgrade', (_req, socket) => {
    plainTurns.push(turns.n);
    socket.destroy();
  });
  plain.listen(plainPort, '127.0.0.1');
  await once(plain, 'listening');

  const progress = path.join(tempDir('agent-edge'), 'connected');
  writeFileSync(progress, '');
  const c = clients(progress);
  child = c.child;
  lines = c.lines;
  assert.is((await lines.next()).value, 'ready');
  turns.start();
  child.stdin!.write(`go ${edgePort} ${AGENTS}\ngo ${plainPort} ${AGENTS}\n`);
  // Both listeners get their agents while this thread cannot run: until every client is connected
  // (its request goes out at once), and a while more for the edge to read the requests.
  const until = performance.now() + 15_000;
  while (readFileSync(progress, 'utf8').length < 2 * AGENTS && performance.now() < until) busy(10);
  busy(500);
  const blockedUntil = turns.n;
  await waitFor(() => hellos.length === AGENTS && plainTurns.length === AGENTS, {
    timeoutMs: 20_000,
    what: `${AGENTS} upgrade requests on each port (edge ${hellos.length}, plain ${plainTurns.length})`,
  });
  const edgeTurns = [...new Set(hellos.map((h) => h.turn))];
  assert.ok(
    Math.max(...edgeTurns) <= blockedUntil + 2,
    `the edge's requests came in turns ${edgeTurns.join(',')}; the block ended at turn ${blockedUntil}`,
  );
  const controlTurns = new Set(plainTurns).size;
  assert.ok(
    controlTurns >= AGENTS / 2,
    `the control listener took them in ${controlTurns} turns: Node accepts one connection per turn`,
  );
  assert.equal(
    hellos.map((h) => h.hello.headers['monitor-agentname']).sort(),
    Array.from({ length: AGENTS }, (_, i) => `a${i}`).sort(),
    'every request came with its own headers',
  );
  assert.is(hellos[0]!.hello.remote, '127.0.0.1');
  await waitFor(() => opened.length === AGENTS, { timeoutMs: 10_000, what: 'every accepted socket opened' });
});

test('frames cross both ways whole, and a close from the main thread reaches the agent with its code and reason', async () => {
  await waitFor(() => [...received.values()].every((got) => got.length === 1), {
    timeoutMs: 10_000,
    what: "each agent's first frame",
  });
  const firsts = [...received.values()].map((got) => got[0]).sort();
  assert.equal(firsts, Array.from({ length: AGENTS }, (_, i) => `true hello from ${i}`).sort());
  const socket = opened[0]!;
  const closes: [number, string][] = [];
  socket.on('close', (code, reason) => closes.push([code, reason]));
  socket.send(Buffer.from('check_request {"x":1}'));
  socket.close(4004, 'entity deleted');
  const seen: string[] = [];
  while (!seen.some((l) => l.startsWith(`close ${edgePort} `)))
    seen.push((await lines.next()).value as string);
  assert.ok(seen.includes(`message ${edgePort} check_request {"x":1}`), seen.slice(-3).join(' | '));
  assert.ok(seen.includes(`close ${edgePort} 4004 entity deleted`), seen.slice(-3).join(' | '));
  await waitFor(() => closes.length === 1, { timeoutMs: 5000, what: 'the session saw its socket close' });
  assert.equal(closes[0], [4004, 'entity deleted']);
});

test('a failed edge thread: its sockets close as lost connections, and a new one takes the port', async () => {
  const closes: number[] = [];
  const open = opened.filter((s) => s.readyState === s.OPEN);
  for (const s of open) s.on('close', (code) => closes.push(code));
  const before = opened.length;
  // The thread's crash, as from an uncaught exception in it: there is no input that makes one.
  await (edge as unknown as { worker: Worker }).worker.terminate();
  await waitFor(() => closes.length === open.length, {
    timeoutMs: 5000,
    what: 'every session saw its socket lost',
  });
  assert.ok(
    closes.every((c) => c === 1006),
    closes.join(','),
  );
  // An agent tries again until the new thread listens (a second after the failure).
  await waitFor(
    () => {
      if (opened.length > before) return true;
      child!.stdin!.write(`go ${edgePort} 1\n`);
      return false;
    },
    { timeoutMs: 15_000, intervalMs: 500, what: 'an agent connected to the restarted edge thread' },
  );
});

test.run();
