/**
 * The resident memory of the three processes of a one-node cluster at one moment, read the way the
 * peer side reads its own (VmRSS), then the backend's again after a forced full GC: the plain figure
 * is the one compared, the GC'd one shows how much of the backend's RSS is garbage not yet collected.
 */
import type { Backend } from '../../../test/harness/index.ts';
import { memoryAfterGc, type Instrumentation } from '../../lib/backend-ctl.ts';
import { rssMb } from '../../lib/procstat.ts';
import type { Infra } from '../../lib/infra.ts';

export interface Footprint {
  backendMb: number;
  natsMb: number;
  etcdMb: number;
  /** backend + nats + etcd, plain RSS. */
  totalMb: number;
  /** The backend's RSS right after a forced full GC (NaN when the preload did not answer). */
  backendAfterGcMb: number;
  /** Its V8 heap in use after that GC. */
  backendHeapAfterGcMb: number;
}

export async function footprint(infra: Infra, backend: Backend, ctl: Instrumentation): Promise<Footprint> {
  const backendMb = rssMb(backend.proc.pid) ?? NaN;
  const natsMb = rssMb(infra.nats.proc.pid) ?? NaN;
  const etcdMb = rssMb(infra.etcd.proc.pid) ?? NaN;
  const gc = await memoryAfterGc(backend, ctl);
  return {
    backendMb,
    natsMb,
    etcdMb,
    totalMb: backendMb + natsMb + etcdMb,
    backendAfterGcMb: gc ? (rssMb(backend.proc.pid) ?? gc.rss_mb) : NaN,
    backendHeapAfterGcMb: gc?.heap_used_mb ?? NaN,
  };
}
