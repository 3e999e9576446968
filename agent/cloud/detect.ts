import { readFile } from 'node:fs/promises';

// Which cloud the host runs in, for `entity.system.cloud_provider`. Every probe is bounded by a
// short timeout and all run at once, so a host outside any cloud (where the link-local address
// never answers) learns "" within one timeout; callers run this in the background anyway.

export type CloudProvider = 'aws' | 'gcp' | 'azure' | '';

export interface CloudProbeOptions {
  /** Per-probe timeout in milliseconds; default 500. */
  timeoutMs?: number;
  awsUrl?: string;
  gcpUrl?: string;
  azureUrl?: string;
  /** DMI files naming the machine's maker; tests point them elsewhere. */
  productNameFile?: string;
  sysVendorFile?: string;
}

const CLOUD_ENDPOINTS = {
  aws: 'http://169.254.169.254/latest/meta-data/',
  gcp: 'http://metadata.google.internal/computeMetadata/v1/',
  azure: 'http://169.254.169.254/metadata/instance?api-version=2021-02-01',
} as const;

/** Cloud named by the DMI strings the hypervisor sets; Azure's "Microsoft Corporation" is also plain Hyper-V, so it needs the metadata service. */
export function providerFromDmi(productName: string, sysVendor: string): CloudProvider {
  const text = `${productName} ${sysVendor}`.toLowerCase();
  if (text.includes('amazon ec2') || /\bamazon\b/.test(sysVendor.toLowerCase())) return 'aws';
  if (text.includes('google')) return 'gcp';
  return '';
}

async function readSmall(path: string): Promise<string> {
  try {
    return (await readFile(path, 'utf8')).trim();
  } catch {
    return '';
  }
}

async function get(
  url: string,
  headers: Record<string, string>,
  timeoutMs: number,
): Promise<Response | undefined> {
  try {
    const res = await fetch(url, { headers, signal: AbortSignal.timeout(timeoutMs), redirect: 'manual' });
    await res.body?.cancel().catch(() => {});
    return res;
  } catch {
    return undefined;
  }
}

export async function detectCloudProvider(o: CloudProbeOptions = {}): Promise<CloudProvider> {
  const timeout = o.timeoutMs ?? 500;
  const [product, vendor, aws, gcp, azure] = await Promise.all([
    readSmall(o.productNameFile ?? '/sys/class/dmi/id/product_name'),
    readSmall(o.sysVendorFile ?? '/sys/class/dmi/id/sys_vendor'),
    // 401 is EC2 with IMDSv2 enforced: the service exists, it only wants a session token.
    get(o.awsUrl ?? CLOUD_ENDPOINTS.aws, {}, timeout).then(
      (r) => r !== undefined && (r.ok || r.status === 401),
    ),
    get(o.gcpUrl ?? CLOUD_ENDPOINTS.gcp, { 'Metadata-Flavor': 'Google' }, timeout).then(
      (r) => r?.headers.get('metadata-flavor') === 'Google',
    ),
    get(o.azureUrl ?? CLOUD_ENDPOINTS.azure, { Metadata: 'true' }, timeout).then((r) => r?.ok === true),
  ]);
  const fromDmi = providerFromDmi(product, vendor);
  if (fromDmi) return fromDmi;
  // Azure answers on the same address as AWS; its own path with its header is the stronger sign.
  if (gcp) return 'gcp';
  if (azure) return 'azure';
  if (aws) return 'aws';
  return '';
}
