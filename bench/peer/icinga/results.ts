/**
 * Passive check results per second through Icinga's REST API, measured like our own REST
 * benchmark (bench/rest): `connections` keep-alive connections (HTTPS here: Icinga's API has no
 * plain HTTP), one request in flight on each, closed loop, a warm-up and then a measured window
 * (bench/lib/drive.ts). Each request is one result for one service, addressed by name:
 * `POST /v1/actions/process-check-result?service=h<i>!s<j>` (the API's documented URL parameter
 * for one object, the lower-case type name with the full `host!service` name), round-robin over
 * every service. Only a 200 whose body says the result was processed counts.
 */
import { drive, type DriveResult } from '../../lib/drive.ts';
import { connect, type HttpConn, type HttpResponse } from '../../lib/http1.ts';
import type { IcingaInstance } from './daemon.ts';
import { serviceName } from './objects.ts';

export const RESULT_FORM = 'POST /v1/actions/process-check-result?service=<host>!<service>';
const PROCESSED = Buffer.from('Successfully processed check result');

export interface ResultsFigures {
  drive: DriveResult;
  /** Answers in the measured window by HTTP status (or error code), the processed 200s as "200". */
  statuses: Record<string, number>;
  /** Results Icinga processed over warm-up and window: >= hosts x services means every one had results. */
  processedTotal: number;
  /** Summed CPU of the icinga2 processes and of this process (the load generator), % of one core. */
  icingaCpuPct: number;
  clientCpuPct: number;
}

interface ResultsOptions {
  hosts: number;
  services: number;
  connections: number;
  warmupMs: number;
  measureMs: number;
}

export async function resultsWindow(inst: IcingaInstance, o: ResultsOptions): Promise<ResultsFigures> {
  const headers = `Authorization: ${inst.auth}\r\nAccept: application/json\r\nContent-Type: application/json\r\n`;
  // Closed loop: `connections` workers, so a free connection is always there when one sends.
  const free: HttpConn[] = Array.from({ length: o.connections }, () => connect('raw', inst.url));
  const all = new Set(free);
  const statuses: Record<string, number> = {};
  const st = { measuring: false, next: 0, processed: 0 };
  const tally = (key: string) => {
    if (st.measuring) statuses[key] = (statuses[key] ?? 0) + 1;
  };

  const send = async () => {
    let conn = free.pop()!;
    if (conn.closed) {
      all.delete(conn);
      conn = connect('raw', inst.url);
      all.add(conn);
    }
    const k = st.next++;
    // Like bench/rest's workload: 1 result in 13 is WARNING, so some results change state.
    const body = `{"exit_status":${k % 13 === 0 ? 1 : 0},"plugin_output":"bench result ${k}"}`;
    let res: HttpResponse;
    try {
      res = await conn.request(
        'POST',
        `/v1/actions/process-check-result?service=${serviceName(k, o.hosts, o.services)}`,
        headers,
        body,
      );
    } catch (err) {
      tally((err as NodeJS.ErrnoException).code ?? 'connection error');
      throw err;
    } finally {
      free.push(conn);
    }
    if (res.status !== 200 || res.body.indexOf(PROCESSED) < 0) {
      tally(res.status === 200 ? '200 not processed' : String(res.status));
      throw new Error(`${res.status} ${res.body.toString('utf8').slice(0, 200)}`);
    }
    st.processed++;
    tally('200');
  };

  const pids: Record<string, number> = { client: process.pid };
  for (const pid of inst.pids()) pids[`icinga2:${pid}`] = pid;
  try {
    const d = await drive({
      concurrency: o.connections,
      warmupMs: o.warmupMs,
      measureMs: o.measureMs,
      send,
      pids,
      onWindowStart: () => {
        st.measuring = true;
      },
      onWindowEnd: () => {
        st.measuring = false;
      },
    });
    let icingaCpuPct = 0;
    for (const [name, p] of Object.entries(d.window.procs)) {
      if (name.startsWith('icinga2:') && Number.isFinite(p.cpuPct)) icingaCpuPct += p.cpuPct;
    }
    return {
      drive: d,
      statuses,
      processedTotal: st.processed,
      icingaCpuPct,
      clientCpuPct: d.window.procs.client?.cpuPct ?? NaN,
    };
  } finally {
    for (const c of all) c.close();
  }
}
