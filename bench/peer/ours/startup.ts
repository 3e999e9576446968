/**
 * Start-up to a ready API with data stored: on one etcd + nats-server, a backend is restarted
 * several times with an empty store (reference), then the store is seeded with proxy entities x
 * checks through the REST API and the backend is restarted several times again. etcd and
 * nats-server keep running throughout, so their data stays and only the backend process is new.
 */
import { type Backend } from '../../../test/harness/index.ts';
import { note } from '../../lib/format.ts';
import { Cleanup, startInfraAndBackend } from '../../lib/infra.ts';
import { summarizeProfile } from '../../lib/cpuprofile.ts';
import { REPO_ROOT } from '../../lib/infra.ts';
import { median } from '../../lib/stats.ts';
import type { PeerOursConfig } from './config.ts';
import { kvState, type BucketState } from './kv-state.ts';
import { MILESTONES, type Milestones } from './milestones.ts';
import { timedRestart, type StartRun } from './restart.ts';
import { seedEvents, type SeedFigures } from './seed.ts';

export interface StartSet {
  entities: number;
  events: number;
  runs: StartRun[];
  /** Per milestone, the median over the runs that started (a failed start is in `runs` with its reason). */
  median: Milestones;
}

interface StartProfile {
  file: string;
  summary: ReturnType<typeof summarizeProfile>;
  run: StartRun;
}

export interface StartupFigures {
  /** Restarts with nothing stored but what `monitor-backend init` writes (absent when skipped). */
  empty?: StartSet;
  stored: StartSet;
  seed: SeedFigures;
  kv: BucketState[];
  /** `--cluster-lease-ttl` of the timed backends. */
  leaseTtlSeconds: number;
  profile?: StartProfile;
}

/** Per milestone, the median of the starts that succeeded (NaN when none did). */
function medianOf(runs: StartRun[]): Milestones {
  const ok = runs.flatMap((r) => (r.milestones ? [r.milestones] : []));
  const m = {} as Milestones;
  for (const k of MILESTONES) m[k] = ok.length ? median(ok.map((x) => x[k])) : NaN;
  return m;
}

export async function measureStartup(cfg: PeerOursConfig): Promise<StartupFigures> {
  const cleanup = new Cleanup();
  let current: Backend | undefined;
  try {
    note('peer start-up: starting etcd, nats-server and the backend');
    const started = await startInfraAndBackend('bench-peer-start', cleanup);
    const { infra } = started;
    current = started.backend;
    // The backend of the moment, whichever restart made it.
    cleanup.add('restarted backend', () => current!.stop(20_000));
    const timeoutMs = cfg.startTimeoutSeconds * 1000;

    const restarts = async (label: string, n: number, expectEvents: number): Promise<StartRun[]> => {
      const runs: StartRun[] = [];
      for (let i = 1; i <= n; i++) {
        const r = await timedRestart(current!, {
          expectEvents,
          timeoutMs,
          leaseTtlSeconds: cfg.leaseTtlSeconds,
        });
        current = r.backend;
        const m = r.run.milestones;
        note(
          m
            ? `peer start-up: ${label} #${i}: health ${m.healthMs.toFixed(0)} ms, list with data ${m.listWithDataMs.toFixed(0)} ms, shards ${m.shardsOwnedMs.toFixed(0)} ms, ready ${m.readyMs.toFixed(0)} ms (stop took ${r.run.stopMs.toFixed(0)} ms)`
            : `peer start-up: ${label} #${i}: FAILED: ${r.run.failed}`,
        );
        runs.push(r.run);
      }
      return runs;
    };

    let empty: StartSet | undefined;
    if (cfg.emptyRestarts > 0) {
      const runs = await restarts('empty store', cfg.emptyRestarts, 0);
      empty = { entities: 0, events: 0, runs, median: medianOf(runs) };
    }

    const events = cfg.startEntities * cfg.startChecks;
    note(`peer start-up: seeding ${cfg.startEntities} proxy entities x ${cfg.startChecks} checks`);
    const seed = await seedEvents(current.apiUrl, cfg.startEntities, cfg.startChecks, cfg.connections, 1);
    note(`peer start-up: ${seed.events} events written in ${seed.seconds.toFixed(1)} s`);
    const kv = await kvState(infra.nats.url);
    const runs = await restarts(`${events} events`, cfg.restarts, events);
    const stored: StartSet = { entities: cfg.startEntities, events, runs, median: medianOf(runs) };

    let profile: StartProfile | undefined;
    if (cfg.profile) {
      // Profiled, a start with much stored can fail (a NATS request timing out): try up to 3 times,
      // keeping the profile of the last try, whether it started or not.
      for (let attempt = 1; attempt <= 3 && !profile?.run.milestones; attempt++) {
        const r = await timedRestart(current, {
          expectEvents: events,
          timeoutMs,
          leaseTtlSeconds: cfg.leaseTtlSeconds,
          profile: true,
        });
        current = r.backend;
        if (r.run.failed) note(`peer start-up: profiled start #${attempt} FAILED: ${r.run.failed}`);
        if (r.run.profileFile)
          profile = {
            file: r.run.profileFile,
            summary: summarizeProfile(r.run.profileFile, REPO_ROOT, 30),
            run: r.run,
          };
        else note('peer start-up: the profiled backend wrote no .cpuprofile');
      }
    }
    return { empty, stored, seed, kv, leaseTtlSeconds: cfg.leaseTtlSeconds, profile };
  } finally {
    await cleanup.run();
  }
}
