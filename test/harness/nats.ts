/**
 * A single nats-server (JetStream enabled) for tests, on a free loopback port.
 */
import { writeFileSync } from 'node:fs';
import net from 'node:net';
import { join } from 'node:path';
import type { NatsTrust } from './nats-jwt.ts';
import { freePort } from './ports.ts';
import { Proc, findExecutable } from './proc.ts';
import { tempDir } from './tmp.ts';

interface NatsOptions {
  /** Reuse a port / store dir (restart); default fresh ones. */
  port?: number;
  storeDir?: string;
  extraArgs?: string[];
  /** Require this user and password of every client (a nats.conf `authorization` block). */
  auth?: { user: string; password: string };
  /**
   * Operator mode (decentralized JWT authentication): trust this operator, know its accounts from
   * a MEMORY resolver, and admit only users whose JWT one of them signed (./nats-jwt.ts).
   */
  jwt?: NatsTrust;
  /** Default 15000. */
  readyTimeoutMs?: number;
}

export interface NatsServer {
  /** nats://127.0.0.1:<port> */
  url: string;
  port: number;
  storeDir: string;
  proc: Proc;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

export function natsBinary(): string {
  return findExecutable('nats-server', {
    extraDirs: ['/usr/sbin', '/usr/local/sbin', '/usr/local/bin', '/usr/bin'],
  });
}

/** Connects to host:port and resolves true when the server greets with an INFO line. */
function greets(port: number, timeoutMs: number): Promise<boolean> {
  return new Promise((resolve) => {
    let data = '';
    const sock = net.connect({ host: '127.0.0.1', port });
    const finish = (ok: boolean) => {
      clearTimeout(timer);
      sock.destroy();
      resolve(ok);
    };
    const timer = setTimeout(() => finish(false), timeoutMs);
    sock.setEncoding('utf8');
    sock.on('data', (chunk: string) => {
      data += chunk;
      if (data.startsWith('INFO ') && data.includes('\n')) finish(true);
      else if (data.length > 4 && !'INFO '.startsWith(data.slice(0, 5))) finish(false);
    });
    sock.on('error', () => finish(false));
    sock.on('close', () => finish(false));
  });
}

export async function startNats(opts: NatsOptions = {}): Promise<NatsServer> {
  const port = opts.port ?? (await freePort());
  const storeDir = opts.storeDir ?? tempDir('nats');
  const args = ['-js', '-a', '127.0.0.1', '-p', String(port), '-sd', storeDir, ...(opts.extraArgs ?? [])];
  // A config file rather than --user/--pass, as an operator would run it; JSON strings are valid there.
  const conf: string[] = [];
  if (opts.auth) {
    const { user, password } = opts.auth;
    conf.push(`authorization {\n  user: ${JSON.stringify(user)}\n  password: ${JSON.stringify(password)}\n}`);
  }
  if (opts.jwt) {
    const { operatorJwt, systemAccount, preload } = opts.jwt;
    const preloads = Object.entries(preload).map(([k, v]) => `  ${JSON.stringify(k)}: ${JSON.stringify(v)}`);
    conf.push(
      `operator: ${JSON.stringify(operatorJwt)}`,
      `system_account: ${JSON.stringify(systemAccount)}`,
      'resolver: MEMORY',
      `resolver_preload: {\n${preloads.join('\n')}\n}`,
    );
  }
  if (conf.length > 0) {
    const file = join(tempDir('nats-conf'), 'nats.conf');
    writeFileSync(file, conf.join('\n') + '\n');
    args.push('-c', file);
  }
  const proc = Proc.start(`nats:${port}`, natsBinary(), args);
  const stop = async () => {
    await proc.stop(5000);
  };
  const timeoutMs = opts.readyTimeoutMs ?? 15_000;
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    if (!proc.running) {
      await proc.drained();
      throw new Error(
        `nats-server exited before accepting connections (code=${proc.exit?.code} signal=${proc.exit?.signal}); last lines:\n${proc.tail(40)}`,
      );
    }
    if (await greets(port, 1000)) break;
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`nats-server not ready after ${timeoutMs}ms; last lines:\n${proc.tail(40)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return { url: `nats://127.0.0.1:${port}`, port, storeDir, proc, stop };
}
