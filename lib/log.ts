import type { LogLevel } from '../proto/log-levels.ts';
import { DEFAULT_REDACT } from '../proto/schemas/entity.ts';
import { scrubUrlCredentials } from './url-credentials.ts';

// Structured JSON-line logging shared by every program. One line per record, written to stderr so
// that stdout stays free for command output (`version`, `make run` hints).

const rank: Record<LogLevel, number> = { panic: 0, fatal: 1, error: 2, warn: 3, info: 4, debug: 5 };

// Field names whose values never reach a log line, whatever the caller passes: an entity's default
// secrets, and the service's own credentials (tokens, Authorization headers, and flags such as
// --nats-password or --etcd-password, should a configuration ever be logged).
const SECRET_FIELDS = new Set([...DEFAULT_REDACT, 'token', 'access_token', 'refresh_token', 'authorization']);
const SECRET_SUFFIX = /(^|[-_])(password|passwd|secret|token|creds)$/;
/** Whether a field (or flag) of this name holds a secret: never logged, never shown. */
export const isSecret = (key: string) => {
  const k = key.toLowerCase();
  return SECRET_FIELDS.has(k) || SECRET_SUFFIX.test(k);
};

export interface Logger {
  level: LogLevel;
  child(fields: Record<string, unknown>): Logger;
  enabled(level: LogLevel): boolean;
  error(msg: string, fields?: Record<string, unknown>): void;
  warn(msg: string, fields?: Record<string, unknown>): void;
  info(msg: string, fields?: Record<string, unknown>): void;
  debug(msg: string, fields?: Record<string, unknown>): void;
}

type LogSink = (line: string) => void;

const stderrSink: LogSink = (line) => {
  process.stderr.write(line + '\n');
};

/**
 * A copy safe to log: secret keys hidden at any depth (a secret nested deep is as secret), the user
 * info of URLs in any string hidden, errors reduced to their name and message, cycles cut.
 */
function scrub(value: unknown, seen = new WeakSet<object>()): unknown {
  if (typeof value === 'string') return scrubUrlCredentials(value);
  if (value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { message: scrubUrlCredentials(value.message), name: value.name };
  if (seen.has(value)) return '[circular]';
  seen.add(value);
  let out: unknown;
  if (Array.isArray(value)) out = value.map((v) => scrub(v, seen));
  else {
    const obj: Record<string, unknown> = {};
    for (const [k, v] of Object.entries(value)) obj[k] = isSecret(k) ? 'REDACTED' : scrub(v, seen);
    out = obj;
  }
  // Only the current path counts: the same object twice side by side is not a cycle.
  seen.delete(value);
  return out;
}

export function createLogger(
  level: LogLevel = 'info',
  base: Record<string, unknown> = {},
  sink: LogSink = stderrSink,
): Logger {
  const state = { level };
  // A child's fixed fields are scrubbed once, here, like the fields of each call.
  const fixed = scrub(base) as Record<string, unknown>;
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[lvl] > rank[state.level]) return;
    const record = {
      time: new Date().toISOString(),
      level: lvl,
      msg: scrubUrlCredentials(msg),
      ...fixed,
      ...(fields ? (scrub(fields) as object) : {}),
    };
    sink(JSON.stringify(record));
  };
  return {
    get level() {
      return state.level;
    },
    set level(l: LogLevel) {
      state.level = l;
    },
    child: (fields) => createLogger(state.level, { ...fixed, ...fields }, sink),
    enabled: (lvl) => rank[lvl] <= rank[state.level],
    error: (m, f) => write('error', m, f),
    warn: (m, f) => write('warn', m, f),
    info: (m, f) => write('info', m, f),
    debug: (m, f) => write('debug', m, f),
  };
}
