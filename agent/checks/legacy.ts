import type { CheckRequest, RequestCheckConfig } from '../../proto/schemas/check-request.ts';
import { mergeLocal, type ClassicHook, type LocalCheck } from '../legacy/checks/definition.ts';

// What a legacy client does with a check request before running it (docs/compatibility.md#legacy-client):
// its own definition of the check, when it has one, is merged over the request (unless the request is a
// proxy request); in safe mode a check it does not define is refused, the command not run.

/** The executor's legacy mode: the client definition (token data, stdin) and its local checks. */
export interface LegacyCheckMode {
  /** The client definition now, custom attributes included. */
  client: () => Record<string, unknown>;
  /** Local check definitions by name. */
  checks: Record<string, LocalCheck>;
  safeMode: boolean;
}

export const SAFE_MODE_OUTPUT = 'Check is not locally defined (safe mode)';
export const IN_PROGRESS_WARNING = 'previous check command execution in progress';

export type LegacyPlan =
  | { run: false; config: RequestCheckConfig; output: string }
  | { run: true; config: RequestCheckConfig; hooks?: Record<string, ClassicHook> };

export function planLegacy(req: CheckRequest, mode: LegacyCheckMode): LegacyPlan {
  const name = req.config.metadata.name;
  const local = Object.hasOwn(mode.checks, name) ? mode.checks[name] : undefined;
  // Safe mode asks whether the check is defined here, not whether the definition was merged: a proxy
  // request for a defined check runs as requested.
  if (!local && mode.safeMode) return { run: false, config: req.config, output: SAFE_MODE_OUTPUT };
  if (!local || req.config.proxy_requests) return { run: true, config: req.config };
  return { run: true, ...mergeLocal(req.config, local) };
}

/** Seconds to the millisecond, as the legacy client reported durations. */
export const legacyDuration = (seconds: number): number => Math.round(seconds * 1000) / 1000;
