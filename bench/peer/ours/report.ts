/** bench peer, our side: the figures as text lines (tables), for main.ts and for the peer report. */
import { fix, int, mb, ms, secs, table } from '../../lib/format.ts';
import { profileLines } from '../../lib/backend-ctl.ts';
import type { MemoryFigures, MemoryStage, PerObject } from './memory.ts';
import type { StartSet, StartupFigures } from './startup.ts';

const kb = (v: number) => (Number.isFinite(v) ? `${fix(v, 2)} KB` : '-');

export function memoryLines(f: MemoryFigures): string[] {
  const row = (s: MemoryStage) => [
    s.label,
    mb(s.rss.totalMb),
    fix(s.rss.backendMb, 1),
    fix(s.rss.backendAfterGcMb, 1),
    fix(s.rss.backendHeapAfterGcMb, 1),
    fix(s.rss.natsMb, 1),
    fix(s.rss.etcdMb, 1),
    s.kv
      .map(
        (b) => `${b.bucket.replace('monitor_', '')} ${int(b.messages)} msgs ${fix(b.bytes / 2 ** 20, 1)} MB`,
      )
      .join(', '),
  ];
  const per = (label: string, p: PerObject) => [
    label,
    kb(p.totalKb),
    kb(p.backendKb),
    kb(p.backendAfterGcKb),
    kb(p.natsKb),
    kb(p.etcdKb),
  ];
  const history = f.empty.kv.map((b) => `${b.bucket} ${b.history}`).join(', ');
  return [
    `one backend + nats-server + etcd; ${int(f.entities)} proxy entities x ${int(f.events / Math.max(1, f.entities))} checks = ${int(f.objects)} objects (entities + events);`,
    `each reading after a ${f.settleSeconds} s settle; plain RSS (VmRSS), then the backend again after a forced full GC; KV history per key: ${history}`,
    `writes: ${f.seeds.map((s) => `${int(s.events)} in ${secs(s.seconds)} (${int(s.perSecond)}/s)`).join('; ')}`,
    table(
      [
        'stage',
        'total RSS',
        'backend MB',
        'backend after GC',
        'heap after GC',
        'nats MB',
        'etcd MB',
        'KV streams',
      ],
      [row(f.empty), row(f.written), row(f.rewritten)],
    ),
    '',
    'per object = (RSS - RSS empty) / objects:',
    table(
      ['after', 'total', 'backend', 'backend (GC both)', 'nats', 'etcd'],
      [per('events written once', f.perObject), per('written twice', f.perObjectRewritten)],
    ),
  ];
}

function setRows(label: string, s: StartSet): string[][] {
  const rows = s.runs.map((r, i) => {
    const m = r.milestones;
    if (!m) return [`${label} #${i + 1}`, `FAILED: ${r.failed ?? '?'}`, '', '', '', '', ms(r.stopMs)];
    return [
      `${label} #${i + 1}`,
      ms(m.healthMs),
      ms(m.firstListMs),
      ms(m.listWithDataMs),
      ms(m.shardsOwnedMs),
      ms(m.readyMs),
      ms(r.stopMs),
    ];
  });
  const m = s.median;
  rows.push([
    `${label} median`,
    ms(m.healthMs),
    ms(m.firstListMs),
    ms(m.listWithDataMs),
    ms(m.shardsOwnedMs),
    ms(m.readyMs),
    '',
  ]);
  return rows;
}

/** The slowest services of a start, from the backend's own log. */
function serviceLine(label: string, s: StartSet): string {
  const r = s.runs.find((x) => x.milestones) ?? s.runs[0];
  if (!r?.services.length) return `${label}: no service timings logged`;
  const top = [...r.services].sort((a, b) => b.ms - a.ms).slice(0, 6);
  return `${label}, service start times (one run): ${top.map((t) => `${t.service} ${int(t.ms)} ms`).join(', ')}`;
}

export function startupLines(f: StartupFigures): string[] {
  const lines = [
    `etcd + nats-server keep running; the backend is stopped (SIGTERM) and a new process spawned with the same options (lease TTL ${f.leaseTtlSeconds} s, log level info);`,
    `ms from spawn: health = GET /health 200 (HTTP listening; what the test harness waits for), list = authenticated GET events?limit=1 200`,
    `(may be empty), list+data = GET events?limit=100 with min(100, stored) events, shards = /health shards.owned = all, ready = GET /ready 200`,
    `seeded ${int(f.stored.entities)} proxy entities x ${int(f.stored.events / Math.max(1, f.stored.entities))} checks = ${int(f.stored.events)} events in ${secs(f.seed.seconds)} (${int(f.seed.perSecond)}/s); KV: ${f.kv.map((b) => `${b.bucket} ${int(b.messages)} msgs ${fix(b.bytes / 2 ** 20, 1)} MB`).join(', ')}`,
    table(
      ['start', 'health', 'list', 'list+data', 'shards', 'ready', 'stop before'],
      [...(f.empty ? setRows('empty', f.empty) : []), ...setRows(`${int(f.stored.events)} events`, f.stored)],
    ),
  ];
  if (f.empty) lines.push(serviceLine('empty', f.empty));
  lines.push(serviceLine(`${int(f.stored.events)} events`, f.stored));
  if (f.profile) {
    const ready = f.profile.run.milestones?.readyMs ?? NaN;
    lines.push(
      '',
      f.profile.run.milestones
        ? `CPU profile of one more start (${int(f.stored.events)} events), from the process's first line until every milestone was seen (ready at ${ms(ready)} under the profiler):`
        : `CPU profile of one more start (${int(f.stored.events)} events) that FAILED (${f.profile.run.failed ?? '?'}), from its first line to its exit:`,
      ...profileLines(f.profile.file),
    );
  }
  return lines;
}
