/**
 * The stored event's format (issue 17, "a smaller stored event"), in this process, no infrastructure:
 * one event as the entity actor stores it today (JSON with its entity embedded: an agent entity with
 * system facts, a check with a full 21-result history) against the same without the entity (the
 * entity joined on read) and against protobuf (`proto/wire/codec.ts`, the agent protocol's `Event`
 * message), with and without the entity. Bytes per event, and the CPU of one encode and one decode
 * (median of 5 rounds of BENCH_CODEC_ROUNDS each). JSON's encode is what `storeEvent` pays per result,
 * its decode what the read model pays per event it loads.
 */
import { DEFAULT_REDACT } from '../proto/schemas/entity.ts';
import { protobufCodec } from '../proto/wire/codec.ts';
import { fix, int, table } from './lib/format.ts';
import type { BenchResult } from './lib/result.ts';
import { median } from './lib/stats.ts';

export interface CodecConfig {
  rounds: number;
}
export const codecConfig = (): CodecConfig => ({ rounds: Number(process.env.BENCH_CODEC_ROUNDS ?? 20_000) });

const now = 1_764_000_000;
const entity = {
  entity_class: 'agent',
  metadata: {
    name: 'web-017.eu-west.example.net',
    namespace: 'default',
    labels: { region: 'eu', team: 'web' },
  },
  subscriptions: ['linux', 'web', 'entity:web-017.eu-west.example.net'],
  last_seen: now,
  deregister: false,
  user: 'agent',
  redact: DEFAULT_REDACT,
  system: {
    hostname: 'web-017',
    os: 'linux',
    platform: 'debian',
    platform_family: 'debian',
    platform_version: '12.8',
    arch: 'amd64',
    network: {
      interfaces: [
        { name: 'lo', addresses: ['127.0.0.1/8', '::1/128'] },
        { name: 'eth0', mac: '02:42:ac:11:00:02', addresses: ['172.17.0.2/16', 'fe80::42:acff:fe11:2/64'] },
      ],
    },
  },
  monitor_agent_version: '0.1.0',
};
const check = {
  command: 'check-http -u https://localhost/health -t 5',
  handlers: ['slack', 'pagerduty'],
  interval: 60,
  subscriptions: ['web'],
  timeout: 10,
  metadata: { name: 'http-health', namespace: 'default' },
  status: 0,
  output:
    'HTTP OK: HTTP/1.1 200 OK - 512 bytes in 0.004 second response time |time=0.004s;;;0.000000 size=512B;;;0',
  executed: now,
  issued: now,
  duration: 0.012,
  history: Array.from({ length: 21 }, (_, i) => ({ status: i === 7 ? 2 : 0, executed: now - (20 - i) * 60 })),
  occurrences: 13,
  occurrences_watermark: 13,
  total_state_change: 9,
  state: 'passing',
  last_ok: now,
  processed_by: 'backend-1',
  is_silenced: false,
};
const withEntity = {
  id: '5f0c2b9e-8a55-4d7e-9c3a-1b2f3e4d5c6a',
  timestamp: now,
  metadata: { namespace: 'default' },
  check,
  entity,
};
const { entity: _e, ...withoutEntity } = withEntity;

function cpuPerOp(rounds: number, fn: () => unknown): number {
  const samples: number[] = [];
  for (let r = 0; r < 5; r++) {
    const t = process.cpuUsage();
    for (let i = 0; i < rounds; i++) fn();
    const d = process.cpuUsage(t);
    samples.push((d.user + d.system) / rounds);
  }
  return median(samples);
}

export async function runCodec(cfg: CodecConfig): Promise<BenchResult> {
  const rows: string[][] = [];
  const figures: Record<string, number> = {};
  for (const [label, ev] of [
    ['with its entity (today)', withEntity],
    ['without the entity', withoutEntity],
  ] as const) {
    const json = JSON.stringify(ev);
    const pb = protobufCodec.encode(ev, 'event');
    const jsonEnc = cpuPerOp(cfg.rounds, () => JSON.stringify(ev));
    const jsonDec = cpuPerOp(cfg.rounds, () => JSON.parse(json));
    const pbEnc = cpuPerOp(cfg.rounds, () => protobufCodec.encode(ev, 'event'));
    const pbDec = cpuPerOp(cfg.rounds, () => protobufCodec.decode(pb, 'event'));
    rows.push([label, 'JSON', int(Buffer.byteLength(json)), fix(jsonEnc, 2), fix(jsonDec, 2)]);
    rows.push([label, 'protobuf', int(pb.length), fix(pbEnc, 2), fix(pbDec, 2)]);
    const k = label.startsWith('with its') ? 'embedded' : 'bare';
    figures[`json_${k}_bytes`] = Buffer.byteLength(json);
    figures[`protobuf_${k}_bytes`] = pb.length;
  }
  return {
    title: 'codec: one stored event, JSON against protobuf, with and without its entity',
    lines: [
      `an agent's event: entity with system facts and 9 redact names, check with a 21-result history and a 110-byte output;`,
      `CPU per operation in µs of this process, median of 5 rounds of ${int(cfg.rounds)}`,
      '',
      table(['event', 'format', 'bytes', 'encode µs', 'decode µs'], rows),
    ],
    summary: [
      `codec: stored event JSON ${int(figures.json_embedded_bytes!)} B with its entity, ${int(figures.json_bare_bytes!)} B without; protobuf ${int(figures.protobuf_embedded_bytes!)} / ${int(figures.protobuf_bare_bytes!)} B`,
    ],
    figures,
  };
}
