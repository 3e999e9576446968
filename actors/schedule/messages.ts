import type { CheckConfig } from '../../proto/schemas/resources/checks.ts';
import type * as v from 'valibot';

export const SCHEDULE_KIND = 'schedule';
export const TICK_TIMER = 'tick';

export type StoredCheck = v.InferOutput<typeof CheckConfig>;

/** Actor id of a check's schedule: `<namespace>/<check>` (names never hold '/'). */
export const scheduleId = (ns: string, check: string) => `${ns}/${check}`;
export function splitScheduleId(id: string): [string, string] {
  const i = id.indexOf('/');
  return [id.slice(0, i), id.slice(i + 1)];
}

/** The config version this owner schedules: the check as stored and its etcd mod revision. */
export interface ScheduleState {
  config: StoredCheck;
  revision: number;
}

/** `configure` (a change seen by a node) and `ensure` (a node starting) carry the same body. */
export interface ConfigureMsg {
  config: StoredCheck;
  revision: number;
}
/** `stop`: the check was deleted at `revision`. */
export interface StopMsg {
  revision: number;
}
