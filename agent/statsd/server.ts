import { createSocket } from 'node:dgram';
import * as v from 'valibot';
import type { Logger } from '../../lib/log.ts';
import { StatsdLine } from '../../proto/schemas/statsd.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { EventSink } from '../events/prepare.ts';
import { bindUdp, closeUdp, type Listener, udpType } from '../listen.ts';
import { StatsdAggregator } from './aggregator.ts';

// The StatsD metrics listener: UDP datagrams of newline-separated lines are aggregated, and every
// flush interval with data becomes one metrics event (no check) for `statsd-event-handlers`.

interface StatsdOptions {
  host: string;
  port: number;
  flushIntervalSec: number;
  handlers: string[];
  sink: EventSink;
  log: Logger;
}

/**
 * SO_RCVBUF asked for: bursts (a flush, a GC pause, an outbox write) stall the event loop for a few
 * milliseconds, and at 100,000 datagrams/s the kernel's default buffer (about 200 KB, ~1,000 small
 * datagrams once the kernel's per-datagram overhead is counted) overflows in that time. The kernel
 * caps the request at net.core.rmem_max.
 */
const STATSD_RECV_BUFFER_BYTES = 8 * 1024 * 1024;

interface StatsdListener extends Listener {
  /** Lines refused since start (bad syntax), for logs and tests. */
  readonly badLines: number;
}

export async function startStatsd(o: StatsdOptions): Promise<StatsdListener> {
  const agg = new StatsdAggregator();
  let badLines = 0;
  const socket = createSocket({
    type: udpType(o.host),
    recvBufferSize: STATSD_RECV_BUFFER_BYTES,
  });
  socket.on('message', (msg) => {
    for (const raw of msg.toString('utf8').split('\n')) {
      const line = raw.trim();
      if (line === '') continue;
      const r = v.safeParse(StatsdLine, line);
      if (r.success) {
        agg.add(r.output);
        continue;
      }
      badLines++;
      o.log.debug('bad StatsD line ignored', {
        line: line.slice(0, 100),
        reason: r.issues[0]?.message,
        bad_lines: badLines,
      });
    }
  });
  await bindUdp('StatsD listener', socket, o.host, o.port);
  socket.on('error', (err) => o.log.warn('StatsD socket error', { error: err.message }));
  let recvBuffer: number | undefined;
  try {
    recvBuffer = socket.getRecvBufferSize();
  } catch {
    /* not bound: cannot happen after bindUdp */
  }
  o.log.info('StatsD listener started', {
    host: o.host,
    port: o.port,
    flush_interval: o.flushIntervalSec,
    recv_buffer_bytes: recvBuffer,
  });

  let droppedSeen = 0;
  const flush = () => {
    const now = Math.floor(Date.now() / 1000);
    const points = agg.flush(now, o.flushIntervalSec);
    if (agg.dropped > droppedSeen) {
      o.log.warn('StatsD values dropped: too many series, timer values or set members in one interval', {
        dropped: agg.dropped - droppedSeen,
      });
      droppedSeen = agg.dropped;
    }
    if (points.length === 0) return;
    const event: Event = { timestamp: now, metrics: { handlers: o.handlers, points } };
    o.sink
      .submit(event)
      .catch((err: Error) =>
        o.log.warn('StatsD metrics event not queued', { error: err.message, points: points.length }),
      );
  };
  const timer = setInterval(flush, o.flushIntervalSec * 1000);
  return {
    get badLines() {
      return badLines;
    },
    close: () => {
      clearInterval(timer);
      return closeUdp(socket);
    },
  };
}
