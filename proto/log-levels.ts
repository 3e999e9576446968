// The log levels every program accepts in --log-level, most severe first.

export const LOG_LEVELS = ['panic', 'fatal', 'error', 'warn', 'info', 'debug'] as const;
export type LogLevel = (typeof LOG_LEVELS)[number];
