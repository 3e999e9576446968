/**
 * A single-member etcd for tests, on free loopback ports, data in a temp dir.
 */
import { readFileSync } from 'node:fs';
import https from 'node:https';
import { Etcd3, type IOptions } from 'etcd3';
import type { TestCerts } from './certs.ts';
import { freePort } from './ports.ts';
import { Proc, findExecutable } from './proc.ts';
import { tempDir } from './tmp.ts';

interface EtcdOptions {
  /** Member name (default "etcd-test"). */
  name?: string;
  /** Reuse a data dir (restart); default a fresh tempDir. */
  dataDir?: string;
  /** Reuse ports (restart); default fresh free ports. */
  clientPort?: number;
  peerPort?: number;
  extraArgs?: string[];
  /** Enable authentication once healthy, with a `root` user of this password (etcdctl user add, auth enable). */
  rootPassword?: string;
  /** Default 20000. */
  readyTimeoutMs?: number;
  /**
   * Clients over TLS only (https:// URLs), with the server certificate of these; with clientCertAuth
   * every client must present a certificate chaining to their root CA (the harness presents their
   * client chain for its own calls).
   */
  tls?: TestCerts;
  clientCertAuth?: boolean;
}

export interface EtcdServer {
  /** http://127.0.0.1:<clientPort>, https:// with the tls option. */
  url: string;
  clientPort: number;
  peerPort: number;
  dataDir: string;
  name: string;
  proc: Proc;
  /** SIGTERM, then SIGKILL after 5 s. */
  stop(): Promise<void>;
}

let counter = 0;

export function etcdBinary(): string {
  return findExecutable('etcd', { candidates: ['/usr/bin/etcd'], extraDirs: ['/usr/local/bin'] });
}

export async function startEtcd(opts: EtcdOptions = {}): Promise<EtcdServer> {
  const name = opts.name ?? 'etcd-test';
  const clientPort = opts.clientPort ?? (await freePort());
  const peerPort = opts.peerPort ?? (await freePort());
  const dataDir = opts.dataDir ?? tempDir('etcd');
  const url = `${opts.tls ? 'https' : 'http'}://127.0.0.1:${clientPort}`;
  const peerUrl = `http://127.0.0.1:${peerPort}`;
  const args = [
    '--name',
    name,
    '--data-dir',
    dataDir,
    '--listen-client-urls',
    url,
    '--advertise-client-urls',
    url,
    '--listen-peer-urls',
    peerUrl,
    '--initial-advertise-peer-urls',
    peerUrl,
    '--initial-cluster',
    `${name}=${peerUrl}`,
    '--initial-cluster-state',
    'new',
    '--initial-cluster-token',
    `monitor-test-${process.pid}-${++counter}`,
    '--log-level',
    'error',
    '--logger',
    'zap',
    ...(opts.tls
      ? [
          '--cert-file',
          opts.tls.serverCert,
          '--key-file',
          opts.tls.serverKey,
          ...(opts.clientCertAuth ? ['--client-cert-auth', '--trusted-ca-file', opts.tls.ca] : []),
        ]
      : []),
    ...(opts.extraArgs ?? []),
  ];
  // ETCD_* variables from the environment would silently change the flags above
  const env: Record<string, string | undefined> = {};
  for (const k of Object.keys(process.env)) if (k.startsWith('ETCD_')) env[k] = undefined;
  const proc = Proc.start(`etcd:${clientPort}`, etcdBinary(), args, { env });
  const stop = async () => {
    await proc.stop(5000);
  };

  const timeoutMs = opts.readyTimeoutMs ?? 20_000;
  const deadline = Date.now() + timeoutMs;
  let lastErr = '';
  for (;;) {
    if (!proc.running) {
      await proc.drained();
      throw new Error(
        `etcd exited before becoming healthy (code=${proc.exit?.code} signal=${proc.exit?.signal}); last lines:\n${proc.tail(40)}`,
      );
    }
    try {
      const body = (await getHealth(url, opts.tls)) as { health?: string };
      if (body.health === 'true') break;
      lastErr = `health=${JSON.stringify(body)}`;
    } catch (err) {
      lastErr = (err as Error).message;
    }
    if (Date.now() > deadline) {
      await proc.kill();
      throw new Error(`etcd not healthy after ${timeoutMs}ms (${lastErr}); last lines:\n${proc.tail(40)}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  if (opts.rootPassword !== undefined) await enableAuth(url, opts.rootPassword, opts.tls);
  return { url, clientPort, peerPort, dataDir, name, proc, stop };
}

/** What `etcdctl user add root`, `user grant-role root root` and `auth enable` do. */
async function enableAuth(url: string, password: string, tls: TestCerts | undefined): Promise<void> {
  const credentials: IOptions['credentials'] = tls && {
    rootCertificate: readFileSync(tls.ca),
    certChain: readFileSync(tls.clientChain),
    privateKey: readFileSync(tls.clientKey),
  };
  const client = new Etcd3({ hosts: [url], ...(credentials ? { credentials } : {}) });
  try {
    await client.role('root').create();
    await client.user('root').create(password);
    await client.user('root').addRole('root');
    await client.auth.authEnable();
  } finally {
    client.close();
  }
}

/** GET /health, over TLS with the test PKI's root and client certificate when given. */
async function getHealth(url: string, tls: TestCerts | undefined): Promise<unknown> {
  if (!tls) {
    const res = await fetch(`${url}/health`, { signal: AbortSignal.timeout(2000) });
    return res.json();
  }
  // fetch takes no CA or client certificate.
  return new Promise((resolve, reject) => {
    const req = https.get(
      `${url}/health`,
      {
        ca: readFileSync(tls.ca),
        cert: readFileSync(tls.clientChain),
        key: readFileSync(tls.clientKey),
        timeout: 2000,
      },
      (res) => {
        let data = '';
        res.setEncoding('utf8');
        res.on('data', (c: string) => (data += c));
        res.on('end', () => {
          try {
            resolve(JSON.parse(data));
          } catch (err) {
            reject(err as Error);
          }
        });
        res.on('error', reject);
      },
    );
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
  });
}
