/**
 * bench peer icinga (issue 17): Icinga 2 from Debian's package measured the way bench/rest
 * measures our own REST API, on the same machine: start-up with the full configuration, memory
 * per monitored object idle and after results, passive results per second by name.
 *
 *   1. the API's CA and certificate (icinga2 pki), once;
 *   2. an instance with the API alone (0 hosts): its RSS after a settle is the baseline;
 *   3. `startups` instances with `hosts` x `services` passive services, each in a fresh directory:
 *      spawn until the API answers (median), and `daemon -C` validation time (median);
 *   4. on the last of them: RSS after a settle (idle), the passive-result window, RSS after a
 *      settle again (with results); per object = (RSS - baseline RSS) / (hosts + services).
 *
 * Every instance is stopped before the next starts; everything it wrote is in a temporary
 * directory removed at the end. Figures only, no goals: they are the peer's, for comparison.
 */
import fs from 'node:fs';
import path from 'node:path';
import { tempDir } from '../../../test/harness/tmp.ts';
import { note } from '../../lib/format.ts';
import { Cleanup, sleep } from '../../lib/infra.ts';
import { median } from '../../lib/stats.ts';
import type { IcingaPeerConfig } from './config.ts';
import { startIcinga, validateMs, type IcingaInstance, type InstanceOptions } from './daemon.ts';
import { ensureIcinga, icingaPids, icingaVersion } from './ensure.ts';
import { makePki, type Pki } from './pki.ts';
import { RESULT_FORM, resultsWindow, type ResultsFigures } from './results.ts';

export interface IcingaFigures {
  version: string;
  hosts: number;
  /** Services in all (hosts x services per host). */
  services: number;
  startup: {
    /** Spawn until GET /v1/status answers, full configuration: each run and their median, ms. */
    runsMs: number[];
    medianMs: number;
    /** `icinga2 daemon -C` (load and validate, then exit) with the full configuration, median ms. */
    validateMs: number;
    /** The same spawn-to-API time with the empty configuration, ms. */
    emptyMs: number;
  };
  memory: {
    /** RSS summed over the instance's processes, MB: API only, full idle, full after the results. */
    emptyMb: number;
    idleMb: number;
    resultsMb: number;
    /** (RSS - empty RSS) / (hosts + services), KiB. */
    idleKibPerObject: number;
    resultsKibPerObject: number;
    /** How many processes the instance runs as. */
    processes: number;
  };
  results: ResultsFigures & { form: string; connections: number };
  /** icinga2 processes still running once the benchmark stopped its instances (should be none). */
  leftover: number[];
}

export async function runIcingaPeer(cfg: IcingaPeerConfig): Promise<IcingaFigures> {
  const bin = ensureIcinga();
  const before = new Set(icingaPids());
  if (before.size)
    note(`icinga2 already running (pids ${[...before].join(', ')}): not ours, left alone, not measured`);
  const cleanup = new Cleanup();
  const root = tempDir('bench-icinga');
  cleanup.add('temp dir', async () => fs.rmSync(root, { recursive: true, force: true }));
  const running = new Set<IcingaInstance>();
  cleanup.add('icinga2', async () => {
    for (const inst of running) await inst.stop();
  });
  let n = 0;
  let pki: Pki | undefined;
  const opts = (hosts: number): InstanceOptions => ({
    bin,
    root: path.join(root, `i${n++}`),
    pki: pki!,
    hosts,
    services: cfg.services,
  });
  const start = async (hosts: number) => {
    const inst = await startIcinga(opts(hosts));
    running.add(inst);
    return inst;
  };
  const stop = async (inst: IcingaInstance) => {
    running.delete(inst);
    await inst.stop();
    fs.rmSync(inst.dirs.root, { recursive: true, force: true });
  };

  try {
    note('icinga2 pki: CA and API certificate');
    pki = makePki(bin, path.join(root, 'pki'));
    const objects = cfg.hosts * (1 + cfg.services);
    const settleMs = cfg.settleSeconds * 1000;

    note(`icinga2 with the API alone: RSS after ${cfg.settleSeconds} s`);
    const empty = await start(0);
    await sleep(settleMs);
    const emptyMb = empty.rssMb();
    await stop(empty);

    const runsMs: number[] = [];
    const validations: number[] = [];
    let full: IcingaInstance | undefined;
    for (let i = 0; i < cfg.startups; i++) {
      validations.push(validateMs(opts(cfg.hosts)));
      const inst = await start(cfg.hosts);
      runsMs.push(inst.startupMs);
      note(
        `icinga2 with ${cfg.hosts} hosts x ${cfg.services} services: API up after ${Math.round(inst.startupMs)} ms`,
      );
      if (i < cfg.startups - 1) await stop(inst);
      else full = inst;
    }
    full = full!;

    await sleep(settleMs);
    const idleMb = full.rssMb();
    const processes = full.pids().length;

    note(
      `passive results: ${cfg.connections} connections, ${cfg.warmupSeconds} s warm-up + ${cfg.seconds} s`,
    );
    const results = await resultsWindow(full, {
      hosts: cfg.hosts,
      services: cfg.services,
      connections: cfg.connections,
      warmupMs: cfg.warmupSeconds * 1000,
      measureMs: cfg.seconds * 1000,
    });
    await sleep(settleMs);
    const resultsMb = full.rssMb();
    await stop(full);

    const perObject = (mb: number) => ((mb - emptyMb) * 1024) / objects;
    return {
      version: icingaVersion(bin),
      hosts: cfg.hosts,
      services: cfg.hosts * cfg.services,
      startup: {
        runsMs,
        medianMs: median(runsMs),
        validateMs: median(validations),
        emptyMs: empty.startupMs,
      },
      memory: {
        emptyMb,
        idleMb,
        resultsMb,
        idleKibPerObject: perObject(idleMb),
        resultsKibPerObject: perObject(resultsMb),
        processes,
      },
      results: { ...results, form: RESULT_FORM, connections: cfg.connections },
      leftover: icingaPids().filter((p) => !before.has(p)),
    };
  } finally {
    await cleanup.run();
  }
}
