/**
 * The goals of issue 17, measured beside the peer (docs/performance.md): each row names the peer's
 * figure and ours, how they compare, and whether the goal is met. Kept apart from the runner so the
 * table reads as the issue's.
 */
import { fix, int, ms, table } from '../lib/format.ts';

interface Row {
  measure: string;
  peer: string;
  ours: string;
  /** ours / peer, when the two are the same kind of figure. */
  ratio?: number;
  goal: string;
  met: boolean | undefined;
}

export interface PeerInputs {
  icinga?: {
    resultsRate: number;
    idleKibPerObject: number;
    resultsKibPerObject: number;
    startupMs: number;
    objects: number;
  };
  rest?: { postRate: number; postP99Ms: number; rawGetP99Ms: number; listP99Ms: number };
  results?: { rate: number; p99Ms: number };
  memory?: { idleKibPerObject: number; rewrittenKibPerObject: number; objects: number };
  startup?: { readyMs: number; listWithDataMs: number; events: number; entities: number };
  agent?: { idleRssMb: number; readyMs: number };
  ttl?: { lateP99Ms: number };
}

const GOALS = {
  postVsPeer: 1.25,
  resultsVsPeer: 2,
  resultsP99Ms: 250,
  agentRssMb: 50,
  agentReadyMs: 300,
  ttlP99Ms: 50,
  rawP99Ms: 3,
  listP99Ms: 20,
} as const;

const na = (v: number | undefined, f: (x: number) => string) => (v === undefined ? 'not measured' : f(v));
const per = (v: number) => `${fix(v, 1)} KiB`;
const rate = (v: number) => `${int(v)}/s`;
const both = (a: number | undefined, b: number | undefined) => a !== undefined && b !== undefined;

export function goalRows(i: PeerInputs): Row[] {
  const peerRate = i.icinga?.resultsRate;
  const rows: Row[] = [];
  const ratioOf = (ours: number | undefined, peer: number | undefined) =>
    both(ours, peer) && peer! > 0 ? ours! / peer! : undefined;

  const postRatio = ratioOf(i.rest?.postRate, peerRate);
  rows.push({
    measure: 'results over HTTP, 1 per request, 64 connections (ours durable)',
    peer: na(peerRate, rate),
    ours: na(i.rest?.postRate, rate),
    ratio: postRatio,
    goal: `>= ${GOALS.postVsPeer} x peer`,
    met: postRatio === undefined ? undefined : postRatio >= GOALS.postVsPeer,
  });
  const resRatio = ratioOf(i.results?.rate, peerRate);
  rows.push({
    measure: 'results from 200 agents over WebSocket (peer: its HTTP figure)',
    peer: na(peerRate, rate),
    ours: i.results ? `${rate(i.results.rate)}, p99 ${ms(i.results.p99Ms)}` : 'not measured',
    ratio: resRatio,
    goal: `>= ${GOALS.resultsVsPeer} x peer, p99 < ${GOALS.resultsP99Ms} ms`,
    met:
      resRatio === undefined || !i.results
        ? undefined
        : resRatio >= GOALS.resultsVsPeer && i.results.p99Ms < GOALS.resultsP99Ms,
  });
  /** A row whose goal is to need no more than the peer (memory, time): ours / peer <= 1. */
  const atMostPeer = (
    measure: string,
    peer: number | undefined,
    ours: number | undefined,
    show: (x: number) => string,
    oursText = na(ours, show),
  ): Row => {
    const ratio = ratioOf(ours, peer);
    return {
      measure,
      peer: na(peer, show),
      ours: oursText,
      ratio,
      goal: '<= 1 x peer',
      met: ratio === undefined ? undefined : ratio <= 1,
    };
  };
  rows.push(
    atMostPeer(
      'memory per object (entity/host + 10 events/services), idle',
      i.icinga?.idleKibPerObject,
      i.memory?.idleKibPerObject,
      per,
    ),
    atMostPeer(
      'memory per object after more results',
      i.icinga?.resultsKibPerObject,
      i.memory?.rewrittenKibPerObject,
      per,
    ),
    atMostPeer(
      `start-up to a ready API (peer: ${int(i.icinga?.objects ?? NaN)} objects; ours: ${int(i.startup?.entities ?? NaN)} entities, ${int(i.startup?.events ?? NaN)} events)`,
      i.icinga?.startupMs,
      i.startup?.readyMs,
      ms,
      i.startup
        ? `${ms(i.startup.readyMs)} (lists with data at ${ms(i.startup.listWithDataMs)})`
        : 'not measured',
    ),
  );
  rows.push({
    measure: 'agent idle RSS; spawn to its HTTP API answering',
    peer: '-',
    ours: i.agent ? `${fix(i.agent.idleRssMb, 1)} MB; ${ms(i.agent.readyMs)}` : 'not measured',
    goal: `< ${GOALS.agentRssMb} MB, < ${GOALS.agentReadyMs} ms`,
    met: i.agent ? i.agent.idleRssMb < GOALS.agentRssMb && i.agent.readyMs < GOALS.agentReadyMs : undefined,
  });
  rows.push({
    measure: 'check TTL lateness p99; read-after-write GET p99; list page p99',
    peer: '-',
    ours:
      i.ttl && i.rest
        ? `${ms(i.ttl.lateP99Ms)}; ${ms(i.rest.rawGetP99Ms)}; ${ms(i.rest.listP99Ms)}`
        : 'not measured',
    goal: `< ${GOALS.ttlP99Ms} ms; < ${GOALS.rawP99Ms} ms; < ${GOALS.listP99Ms} ms`,
    met:
      i.ttl && i.rest
        ? i.ttl.lateP99Ms < GOALS.ttlP99Ms &&
          i.rest.rawGetP99Ms < GOALS.rawP99Ms &&
          i.rest.listP99Ms < GOALS.listP99Ms
        : undefined,
  });
  return rows;
}

export function goalTable(rows: Row[]): string {
  return table(
    ['measure', 'Icinga 2', 'monitor', 'monitor / Icinga', 'goal', ''],
    rows.map((r) => [
      r.measure,
      r.peer,
      r.ours,
      r.ratio === undefined ? '-' : `${fix(r.ratio, 2)} x`,
      r.goal,
      r.met === undefined ? 'not measured' : r.met ? 'met' : 'NOT met',
    ]),
  );
}
