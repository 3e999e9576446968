/**
 * HAProxy in front of a test cluster: the configuration `make cluster` uses
 * (deploy/local/cluster/haproxy-config.ts, REST and agent WebSocket frontends balanced over every
 * backend, `/ready` health checks), on free loopback ports, in the foreground (`-db`) so it is a
 * child the harness owns and stops like any other (the process registry of proc.ts kills it at
 * exit whatever happens).
 */
import fs from 'node:fs';
import path from 'node:path';
import { haproxyConfig, type HaproxyBackend } from '../../deploy/local/cluster/haproxy-config.ts';
import { waitFor } from './http.ts';
import { freePort } from './ports.ts';
import { findExecutable, Proc } from './proc.ts';
import { tempDir } from './tmp.ts';

interface HaproxyOptions {
  backends: HaproxyBackend[];
  /** Health check period; default 500 ms, so a dead or frozen node leaves the rotation in about a second. */
  checkIntervalMs?: number;
}

export interface Haproxy {
  /** http://127.0.0.1:<port>: the REST frontend. */
  apiUrl: string;
  /** ws://127.0.0.1:<port>: the agent frontend. */
  agentUrl: string;
  /** http://127.0.0.1:<port>/stats */
  statsUrl: string;
  configFile: string;
  proc: Proc;
  /** Servers of a backend section (`be_api` or `be_agents`) that HAProxy counts as up. */
  upServers(section?: 'be_api' | 'be_agents'): Promise<string[]>;
  /** SIGTERM (HAProxy's hard stop), SIGKILL after 5 s. */
  stop(): Promise<void>;
}

function haproxyBinary(): string {
  return findExecutable('haproxy', { extraDirs: ['/usr/sbin', '/usr/local/sbin'] });
}

/** Starts HAProxy and waits until its REST frontend reaches some backend (`/ready` 200 through it). */
export async function startHaproxy(o: HaproxyOptions): Promise<Haproxy> {
  const [apiPort, agentPort, statsPort] = [await freePort(), await freePort(), await freePort()];
  const dir = tempDir('haproxy');
  const configFile = path.join(dir, 'haproxy.cfg');
  fs.writeFileSync(
    configFile,
    haproxyConfig({
      apiPort,
      agentPort,
      statsPort,
      backends: o.backends,
      checkIntervalMs: o.checkIntervalMs ?? 500,
      // Its log (server state changes, one line per request) for a post-mortem: costs CPU under load.
      logToStderr: process.env.MONITOR_TEST_HAPROXY_LOG === '1',
    }),
  );
  const proc = Proc.start(`haproxy:${apiPort}`, haproxyBinary(), ['-db', '-f', configFile]);
  const statsUrl = `http://127.0.0.1:${statsPort}/stats`;
  const h: Haproxy = {
    apiUrl: `http://127.0.0.1:${apiPort}`,
    agentUrl: `ws://127.0.0.1:${agentPort}`,
    statsUrl,
    configFile,
    proc,
    async upServers(section = 'be_api') {
      // The stats page as CSV: pxname,svname,...,status at column 18 (HAProxy's documented layout).
      const res = await fetch(`${statsUrl};csv`, { signal: AbortSignal.timeout(2000) });
      const rows = (await res.text()).split('\n').map((l) => l.split(','));
      return rows
        .filter((r) => r[0] === section && r[1] !== 'BACKEND' && r[1] !== 'FRONTEND' && r[17] === 'UP')
        .map((r) => r[1]!);
    },
    async stop() {
      await proc.stop(5000);
    },
  };
  try {
    await waitFor(
      async () => {
        if (!proc.running) throw new Error(`haproxy exited: ${proc.tail(20)}`);
        const res = await fetch(`${h.apiUrl}/ready`, { signal: AbortSignal.timeout(2000) });
        return res.status === 200;
      },
      { timeoutMs: 20_000, intervalMs: 200, what: 'haproxy to reach a ready backend' },
    );
  } catch (err) {
    await proc.kill();
    throw err;
  }
  return h;
}
