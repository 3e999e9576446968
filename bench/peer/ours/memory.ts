/**
 * Memory per monitored object, defined as the peer side defines its own: the RSS a cluster gains
 * idle with N objects over idle with none, divided by N. For us an object is a proxy entity or one
 * of its events (an event is a check's latest result), so N = entities + events, and the RSS is
 * that of backend + nats-server + etcd. Read three times on one cluster, each after a settle:
 * fresh and empty; after every event was written once; after a second write to every event (each
 * event's check history then holds 2 results).
 */
import { note } from '../../lib/format.ts';
import { instrumentation } from '../../lib/backend-ctl.ts';
import { Cleanup, sleep, startInfraAndBackend } from '../../lib/infra.ts';
import type { PeerOursConfig } from './config.ts';
import { footprint, type Footprint } from './footprint.ts';
import { kvState, type BucketState } from './kv-state.ts';
import { seedEvents, type SeedFigures } from './seed.ts';

export interface MemoryStage {
  label: string;
  rss: Footprint;
  kv: BucketState[];
}

/** KB per object of what a process gained over the empty cluster (plain RSS). */
export interface PerObject {
  totalKb: number;
  backendKb: number;
  natsKb: number;
  etcdKb: number;
  /** The backend's share read after a forced GC on both sides, for comparison only. */
  backendAfterGcKb: number;
}

export interface MemoryFigures {
  entities: number;
  events: number;
  /** entities + events: the divisor. */
  objects: number;
  settleSeconds: number;
  empty: MemoryStage;
  written: MemoryStage;
  rewritten: MemoryStage;
  seeds: SeedFigures[];
  /** After the first write of every event (the figure compared with the peer's). */
  perObject: PerObject;
  /** After the second write of every event. */
  perObjectRewritten: PerObject;
}

function perObject(base: Footprint, now: Footprint, objects: number): PerObject {
  const kb = (a: number, b: number) => ((b - a) * 1024) / objects;
  return {
    totalKb: kb(base.totalMb, now.totalMb),
    backendKb: kb(base.backendMb, now.backendMb),
    natsKb: kb(base.natsMb, now.natsMb),
    etcdKb: kb(base.etcdMb, now.etcdMb),
    backendAfterGcKb: kb(base.backendAfterGcMb, now.backendAfterGcMb),
  };
}

export async function measureMemoryPerObject(cfg: PeerOursConfig): Promise<MemoryFigures> {
  const cleanup = new Cleanup();
  try {
    note('peer memory: starting etcd, nats-server and the backend');
    // The preload is there for the forced GC; it is in the backend for all three readings alike.
    const ctl = instrumentation();
    const { infra, backend } = await startInfraAndBackend('bench-peer-mem', cleanup, ctl.env);
    const stage = async (label: string): Promise<MemoryStage> => {
      note(`peer memory: ${label}: settling ${cfg.settleSeconds} s`);
      await sleep(cfg.settleSeconds * 1000);
      return { label, rss: await footprint(infra, backend, ctl), kv: await kvState(infra.nats.url) };
    };
    const empty = await stage('empty');
    const seeds: SeedFigures[] = [];
    const write = async (round: number) => {
      const s = await seedEvents(backend.apiUrl, cfg.memEntities, cfg.memChecks, cfg.connections, round);
      note(`peer memory: round ${round}: ${s.events} events in ${s.seconds.toFixed(1)} s`);
      seeds.push(s);
    };
    await write(1);
    const written = await stage('written once');
    await write(2);
    const rewritten = await stage('written twice');
    const events = cfg.memEntities * cfg.memChecks;
    const objects = cfg.memEntities + events;
    return {
      entities: cfg.memEntities,
      events,
      objects,
      settleSeconds: cfg.settleSeconds,
      empty,
      written,
      rewritten,
      seeds,
      perObject: perObject(empty.rss, written.rss, objects),
      perObjectRewritten: perObject(empty.rss, rewritten.rss, objects),
    };
  } finally {
    await cleanup.run();
  }
}
