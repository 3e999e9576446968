import { createSocket } from 'node:dgram';
import { isIPv6 } from 'node:net';
import * as v from 'valibot';
import type { Logger } from '../../proto/log.ts';
import { StatsdLine } from '../../proto/schemas/statsd.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { EventSink } from '../events/prepare.ts';
import { bindUdp, type Listener } from '../listen.ts';
import { StatsdAggregator } from './aggregator.ts';

// The StatsD metrics listener: UDP datagrams of newline-separated lines are aggregated, and every
// flush interval with data becomes one metrics event (no check) for `statsd-event-handlers`.

export interface StatsdOptions {
  host: string;
  port: number;
  flushIntervalSec: number;
  handlers: string[];
  sink: EventSink;
  log: Logger;
}

export interface StatsdListener extends Listener {
  /** Lines refused since start (bad syntax), for logs and tests. */
  readonly badLines: number;
}

export async function startStatsd(o: StatsdOptions): Promise<StatsdListener> {
  const agg = new StatsdAggregator();
  let badLines = 0;
  const socket = createSocket(isIPv6(o.host.replace(/^\[|\]$/g, '')) ? 'udp6' : 'udp4');
  socket.on('message', (msg) => {
    for (const raw of msg.toString('utf8').split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      const r = v.safeParse(StatsdLine, line);
      if (r.success) { agg.add(r.output); continue; }
      badLines++;
      o.log.debug('bad StatsD line ignored', { line: line.slice(0, 100), reason: r.issues[0]?.message, bad_lines: badLines });
    }
  });
  await bindUdp('StatsD listener', socket, o.host, o.port);
  socket.on('error', (err) => o.log.warn('StatsD socket error', { error: err.message }));
  o.log.info('StatsD listener started', { host: o.host, port: o.port, flush_interval: o.flushIntervalSec });

  let droppedSeen = 0;
  const flush = () => {
    const now = Math.floor(Date.now() / 1000);
    const points = agg.flush(now, o.flushIntervalSec);
    if (agg.dropped > droppedSeen) {
      o.log.warn('StatsD values dropped: too many series, timer values or set members in one interval', { dropped: agg.dropped - droppedSeen });
      droppedSeen = agg.dropped;
    }
    if (points.length === 0) return;
    const event: Event = { timestamp: now, metrics: { handlers: o.handlers, points } };
    o.sink.submit(event).catch((err: Error) => o.log.warn('StatsD metrics event not queued', { error: err.message, points: points.length }));
  };
  const timer = setInterval(flush, o.flushIntervalSec * 1000);
  return {
    get badLines() { return badLines; },
    close: () => new Promise<void>((resolve) => {
      clearInterval(timer);
      try { socket.close(() => resolve()); } catch { resolve(); }
    }),
  };
}
