/** bench peer icinga: its figures as a block of lines and summary lines (bench/lib/result.ts). */
import { fix, int, mb, ms, pct } from '../../lib/format.ts';
import type { BenchResult } from '../../lib/result.ts';
import type { IcingaFigures } from './index.ts';

export function icingaReport(f: IcingaFigures): BenchResult {
  const r = f.results;
  const d = r.drive;
  const objects = f.hosts + f.services;
  const statuses = Object.entries(r.statuses)
    .map(([k, v]) => `${k}: ${int(v)}`)
    .join(', ');
  const lines = [
    `Icinga 2 ${f.version} (Debian package), ${int(f.hosts)} hosts x ${int(f.services / f.hosts)} passive services ` +
      `(${int(objects)} objects), API on 127.0.0.1 over HTTPS, no checker, no notifications`,
    `start-up, full configuration: ${ms(f.startup.medianMs)} median (${f.startup.runsMs.map(ms).join(', ')}); ` +
      `validation alone (daemon -C) ${ms(f.startup.validateMs)}; API alone ${ms(f.startup.emptyMs)}`,
    `memory (RSS of its ${f.memory.processes} processes): API alone ${mb(f.memory.emptyMb)}, ` +
      `full idle ${mb(f.memory.idleMb)}, after the results ${mb(f.memory.resultsMb)}`,
    `memory per object: ${fix(f.memory.idleKibPerObject, 1)} KiB idle, ${fix(f.memory.resultsKibPerObject, 1)} KiB with results`,
    `passive results by name (${r.form}), ${r.connections} keep-alive connections, ${fix(d.seconds, 0)} s window: ` +
      `${int(d.rate)}/s, p50 ${ms(d.latency.p50)}, p99 ${ms(d.latency.p99)}, max ${ms(d.latency.max)}`,
    `  icinga2 CPU ${pct(r.icingaCpuPct)}, load generator ${pct(r.clientCpuPct)}, others ${pct(d.window.othersPct)}, ` +
      `steal ${pct(d.window.stealPct)}; answers: ${statuses || 'none'}` +
      (d.firstError ? `; first failure: ${d.firstError}` : ''),
    `  results processed in all (warm-up included): ${int(r.processedTotal)}` +
      (r.processedTotal >= f.services
        ? ' (every service had results)'
        : ` (FEWER than the ${int(f.services)} services)`),
  ];
  if (f.leftover.length) lines.push(`LEFT RUNNING: icinga2 pids ${f.leftover.join(', ')}`);
  return {
    title: 'peer: Icinga 2',
    lines,
    summary: [
      `icinga2 passive results/s by name: ${int(d.rate)} (p99 ${ms(d.latency.p99)}, icinga2 CPU ${pct(r.icingaCpuPct)})`,
      `icinga2 memory per object: ${fix(f.memory.idleKibPerObject, 1)} KiB idle, ${fix(f.memory.resultsKibPerObject, 1)} KiB with results`,
      `icinga2 start-up with ${int(objects)} objects: ${ms(f.startup.medianMs)}`,
    ],
  };
}
