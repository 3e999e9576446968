/**
 * A throwaway PKI made with the `openssl` CLI, for TLS tests:
 *   root CA ── server certificate (CN localhost, SAN 127.0.0.1 and localhost)
 *          └─ intermediate CA ── client certificate (CN given, default `agent`)
 * plus an unrelated root (`otherCa`) that trusts none of them. EC P-256 keys keep it fast.
 * All files live in a fresh tempDir, removed when the test process exits.
 */
import { execFileSync } from 'node:child_process';
import { readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { tempDir } from './tmp.ts';

export interface TestCerts {
  dir: string;
  /** Root CA certificate (trust this on both sides). */
  ca: string;
  /** A second root CA that signed nothing here. */
  otherCa: string;
  intermediate: string;
  serverCert: string;
  serverKey: string;
  /** The client's leaf certificate alone (signed by the intermediate). */
  clientLeaf: string;
  /** Leaf first, then the intermediate. */
  clientChain: string;
  /** Intermediate first, then the leaf: a chain in the wrong order. */
  clientChainReversed: string;
  clientKey: string;
}

const DAYS = '2';

function openssl(cwd: string, args: string[]): void {
  try {
    execFileSync('openssl', args, { cwd, stdio: ['ignore', 'pipe', 'pipe'] });
  } catch (err) {
    const e = err as { stderr?: Buffer; message: string };
    throw new Error(`openssl ${args.join(' ')} failed: ${e.stderr?.toString() || e.message}`);
  }
}

const newKey = (cwd: string, name: string) =>
  openssl(cwd, ['genpkey', '-algorithm', 'EC', '-pkeyopt', 'ec_paramgen_curve:P-256', '-out', name]);

function selfSignedCa(cwd: string, name: string, cn: string): void {
  newKey(cwd, `${name}.key`);
  openssl(cwd, [
    'req',
    '-x509',
    '-new',
    '-key',
    `${name}.key`,
    '-out',
    `${name}.crt`,
    '-days',
    DAYS,
    '-subj',
    `/CN=${cn}`,
    '-addext',
    'basicConstraints=critical,CA:TRUE',
    '-addext',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
}

/** Signs a new key's certificate with `issuer`; `ext` lines go into the certificate's v3 extensions. */
function issue(cwd: string, name: string, cn: string, issuer: string, ext: string[]): void {
  newKey(cwd, `${name}.key`);
  openssl(cwd, ['req', '-new', '-key', `${name}.key`, '-out', `${name}.csr`, '-subj', `/CN=${cn}`]);
  writeFileSync(path.join(cwd, `${name}.ext`), ext.join('\n') + '\n');
  openssl(cwd, [
    'x509',
    '-req',
    '-in',
    `${name}.csr`,
    '-CA',
    `${issuer}.crt`,
    '-CAkey',
    `${issuer}.key`,
    '-CAcreateserial',
    '-out',
    `${name}.crt`,
    '-days',
    DAYS,
    '-extfile',
    `${name}.ext`,
  ]);
}

/** Another client certificate from the same intermediate, for a different user; `chain` is leaf first. */
export function issueClientCert(certs: TestCerts, cn: string): { chain: string; key: string } {
  const name = `client-${cn.replace(/[^A-Za-z0-9_.-]/g, '_')}`;
  issue(certs.dir, name, cn, 'intermediate', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=clientAuth',
    `subjectAltName=DNS:${cn}`,
  ]);
  const chain = path.join(certs.dir, `${name}-chain.crt`);
  writeFileSync(
    chain,
    readFileSync(path.join(certs.dir, `${name}.crt`), 'utf8') + readFileSync(certs.intermediate, 'utf8'),
  );
  return { chain, key: path.join(certs.dir, `${name}.key`) };
}

export function makeTestCerts(opts: { clientCn?: string } = {}): TestCerts {
  const dir = tempDir('certs');
  selfSignedCa(dir, 'ca', 'Monitor Test Root CA');
  selfSignedCa(dir, 'other-ca', 'Monitor Other Root CA');
  issue(dir, 'intermediate', 'Monitor Test Intermediate CA', 'ca', [
    'basicConstraints=critical,CA:TRUE,pathlen:0',
    'keyUsage=critical,keyCertSign,cRLSign',
  ]);
  issue(dir, 'server', 'localhost', 'ca', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=serverAuth',
    'subjectAltName=IP:127.0.0.1,DNS:localhost',
  ]);
  const clientCn = opts.clientCn ?? 'agent';
  issue(dir, 'client', clientCn, 'intermediate', [
    'basicConstraints=CA:FALSE',
    'keyUsage=critical,digitalSignature',
    'extendedKeyUsage=clientAuth',
    `subjectAltName=DNS:${clientCn}`,
  ]);
  const file = (name: string) => path.join(dir, name);
  const leaf = readFileSync(file('client.crt'), 'utf8');
  const inter = readFileSync(file('intermediate.crt'), 'utf8');
  writeFileSync(file('client-chain.crt'), leaf + inter);
  writeFileSync(file('client-chain-reversed.crt'), inter + leaf);
  return {
    dir,
    ca: file('ca.crt'),
    otherCa: file('other-ca.crt'),
    intermediate: file('intermediate.crt'),
    serverCert: file('server.crt'),
    serverKey: file('server.key'),
    clientLeaf: file('client.crt'),
    clientChain: file('client-chain.crt'),
    clientChainReversed: file('client-chain-reversed.crt'),
    clientKey: file('client.key'),
  };
}
