import { createServer, type IncomingMessage, type Server, type ServerResponse } from 'node:http';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { detectCloudProvider, providerFromDmi, type CloudProbeOptions } from '../../agent/cloud/detect.ts';
import { freePort } from '../harness/ports.ts';

// Real HTTP servers on loopback stand in for the metadata services; each answers the way its cloud does.

const dir = mkdtempSync(join(tmpdir(), 'cloud-'));
const servers: Server[] = [];
const file = (name: string, text: string) => {
  const p = join(dir, name);
  writeFileSync(p, text);
  return p;
};
const NONE = join(dir, 'absent');

async function serve(handler: (req: IncomingMessage, res: ServerResponse) => void): Promise<string> {
  const port = await freePort();
  const s = createServer(handler);
  servers.push(s);
  await new Promise<void>((r) => s.listen(port, '127.0.0.1', r));
  return `http://127.0.0.1:${port}`;
}

let notFound: string;
let silent: string;

test.before(async () => {
  notFound = await serve((_q, res) => {
    res.statusCode = 404;
    res.end();
  });
  // Accepts and never answers, like a link-local address that routes nowhere useful.
  silent = await serve(() => {});
});

test.after(async () => {
  for (const s of servers) {
    s.closeAllConnections();
    await new Promise((r) => s.close(r));
  }
  rmSync(dir, { recursive: true, force: true });
});

const base = (): CloudProbeOptions => ({
  timeoutMs: 300,
  awsUrl: notFound,
  gcpUrl: notFound,
  azureUrl: notFound,
  productNameFile: NONE,
  sysVendorFile: NONE,
});

test('DMI strings', () => {
  assert.is(providerFromDmi('c5.large', 'Amazon EC2'), 'aws');
  assert.is(providerFromDmi('Google Compute Engine', 'Google'), 'gcp');
  assert.is(providerFromDmi('Virtual Machine', 'Microsoft Corporation'), '');
  assert.is(providerFromDmi('', ''), '');
});

test('no cloud: "" from 404s, and silent endpoints give up at the timeout', async () => {
  assert.is(await detectCloudProvider(base()), '');
  assert.is(await detectCloudProvider({ ...base(), awsUrl: silent, gcpUrl: silent, azureUrl: silent }), '');
  assert.is(await detectCloudProvider({ ...base(), awsUrl: 'http://127.0.0.1:1/' }), '');
});

test('AWS: the metadata service answers, or asks for an IMDSv2 token; or DMI says so', async () => {
  const ok = await serve((_q, res) => res.end('ami-id\nhostname\n'));
  assert.is(await detectCloudProvider({ ...base(), awsUrl: ok }), 'aws');
  const v2 = await serve((_q, res) => {
    res.statusCode = 401;
    res.end();
  });
  assert.is(await detectCloudProvider({ ...base(), awsUrl: v2 }), 'aws');
  assert.is(await detectCloudProvider({ ...base(), sysVendorFile: file('vendor', 'Amazon EC2\n') }), 'aws');
});

test('GCP: only with the Metadata-Flavor header both ways', async () => {
  const gcp = await serve((q, res) => {
    if (q.headers['metadata-flavor'] !== 'Google') {
      res.statusCode = 403;
      res.end();
      return;
    }
    res.setHeader('Metadata-Flavor', 'Google');
    res.end('instance/\n');
  });
  assert.is(await detectCloudProvider({ ...base(), gcpUrl: gcp }), 'gcp');
  const impostor = await serve((_q, res) => res.end('hello'));
  assert.is(await detectCloudProvider({ ...base(), gcpUrl: impostor }), '');
  assert.is(
    await detectCloudProvider({ ...base(), productNameFile: file('product', 'Google Compute Engine\n') }),
    'gcp',
  );
});

test('Azure: instance metadata with the Metadata header wins over the shared AWS address', async () => {
  const azure = await serve((q, res) => {
    if (q.headers.metadata !== 'true') {
      res.statusCode = 400;
      res.end();
      return;
    }
    res.setHeader('Content-Type', 'application/json');
    res.end('{"compute":{"azEnvironment":"AzurePublicCloud"}}');
  });
  const anything = await serve((_q, res) => res.end('ok'));
  assert.is(await detectCloudProvider({ ...base(), azureUrl: azure, awsUrl: anything }), 'azure');
});

test.run();
