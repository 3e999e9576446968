import type { LogLevel } from '../proto/log-levels.ts';
import { DEFAULT_REDACT } from '../proto/schemas/entity.ts';

// Structured JSON-line logging shared by every program. One line per record, written to stderr so
// that stdout stays free for command output (`version`, `make run` hints).

const rank: Record<LogLevel, number> = { panic: 0, fatal: 1, error: 2, warn: 3, info: 4, debug: 5 };

// Field names whose values never reach a log line, whatever the caller passes: an entity's default
// secrets, and the service's own credentials (tokens, Authorization headers).
const SECRET_FIELDS = new Set([...DEFAULT_REDACT, 'token', 'access_token', 'refresh_token', 'authorization']);

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

function scrub(value: unknown, depth = 0): unknown {
  if (depth > 6 || value === null || typeof value !== 'object') return value;
  if (value instanceof Error) return { message: value.message, name: value.name };
  if (Array.isArray(value)) return value.map((v) => scrub(v, depth + 1));
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(value)) {
    out[k] = SECRET_FIELDS.has(k.toLowerCase()) ? 'REDACTED' : scrub(v, depth + 1);
  }
  return out;
}

export function createLogger(
  level: LogLevel = 'info',
  base: Record<string, unknown> = {},
  sink: LogSink = stderrSink,
): Logger {
  const state = { level };
  const write = (lvl: LogLevel, msg: string, fields?: Record<string, unknown>) => {
    if (rank[lvl] > rank[state.level]) return;
    const record = {
      time: new Date().toISOString(),
      level: lvl,
      msg,
      ...base,
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
    child: (fields) => createLogger(state.level, { ...base, ...fields }, sink),
    enabled: (lvl) => rank[lvl] <= rank[state.level],
    error: (m, f) => write('error', m, f),
    warn: (m, f) => write('warn', m, f),
    info: (m, f) => write('info', m, f),
    debug: (m, f) => write('debug', m, f),
  };
}
