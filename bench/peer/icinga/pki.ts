/**
 * The API's TLS material, made once per benchmark run with Icinga's own `pki` commands: a CA
 * (`new-ca` writes it to DataDir/ca), a key and CSR for the node (`new-cert`), the CSR signed by
 * that CA (`sign-csr`). Every instance then gets a copy in DataDir/certs, where the ApiListener
 * looks for `<NodeName>.crt`, `<NodeName>.key` and `ca.crt`.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { defines, instanceDirs, NODE_NAME, type InstanceDirs } from './paths.ts';

export interface Pki {
  caCrt: string;
  nodeCrt: string;
  nodeKey: string;
}

/** Runs the three pki commands in a work directory below `root`. */
export function makePki(bin: string, root: string): Pki {
  const d = instanceDirs(root);
  const run = (args: string[]) => {
    try {
      execFileSync(bin, [...args, ...defines(d)], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'pipe'] });
    } catch (err) {
      const e = err as { stdout?: string; stderr?: string; message: string };
      throw new Error(`icinga2 ${args.slice(0, 2).join(' ')} failed: ${e.stderr || e.stdout || e.message}`);
    }
  };
  const nodeKey = path.join(root, `${NODE_NAME}.key`);
  const nodeCsr = path.join(root, `${NODE_NAME}.csr`);
  const nodeCrt = path.join(root, `${NODE_NAME}.crt`);
  run(['pki', 'new-ca']);
  run(['pki', 'new-cert', '--cn', NODE_NAME, '--key', nodeKey, '--csr', nodeCsr]);
  run(['pki', 'sign-csr', '--csr', nodeCsr, '--cert', nodeCrt]);
  return { caCrt: path.join(d.data, 'ca', 'ca.crt'), nodeCrt, nodeKey };
}

/** Copies the certificates to where an instance's ApiListener reads them. */
export function installCerts(pki: Pki, d: InstanceDirs): void {
  const certs = path.join(d.data, 'certs');
  fs.mkdirSync(certs, { recursive: true });
  fs.copyFileSync(pki.caCrt, path.join(certs, 'ca.crt'));
  fs.copyFileSync(pki.nodeCrt, path.join(certs, `${NODE_NAME}.crt`));
  fs.copyFileSync(pki.nodeKey, path.join(certs, `${NODE_NAME}.key`));
}
