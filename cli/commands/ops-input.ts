import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import { ApiError } from '../client/errors.ts';
import type { CliDeps } from '../deps.ts';
import { usageError } from '../errors.ts';
import { ask } from './prompts.ts';

// Small pieces shared by the operation commands (event resolve, check execute, silenced, user,
// api-key): time and duration parsing, secrets from a prompt or stdin, and replacing a generic
// subcommand of a resource's group with a command of its own.

/** `+1h30m`, `90s`, `2d`: a duration in whole seconds; undefined when the text is not one. */
export function durationSeconds(text: string): number | undefined {
  const t = text.trim();
  if (/^\d+$/.test(t)) return Number(t);
  const m = /^(?:(\d+)d)?(?:(\d+)h)?(?:(\d+)m)?(?:(\d+)s)?$/.exec(t);
  if (!m || t === '') return undefined;
  const [d, h, min, s] = m.slice(1).map((x) => Number(x ?? 0)) as [number, number, number, number];
  return ((d * 24 + h) * 60 + min) * 60 + s;
}

/**
 * `--begin`: `now`, a time relative to now (`+1h`, `+30m`, `+1h30m`, `+90s`, `+2d`), or an RFC 3339
 * time with a zone (`2030-05-01T12:00:00Z`, `2030-05-01T14:00:00+02:00`); as Unix seconds.
 */
export function parseBegin(text: string, nowMs: number): number {
  const t = text.trim();
  const now = Math.floor(nowMs / 1000);
  if (t.toLowerCase() === 'now') return now;
  if (t.startsWith('+')) {
    const d = durationSeconds(t.slice(1));
    if (d === undefined || t.length === 1)
      throw usageError(`--begin: "${text}" is not a time after now such as +30m, +1h or +1h30m`);
    return now + d;
  }
  const rfc3339 =
    /^\d{4}-\d{2}-\d{2}[Tt ]\d{2}:\d{2}:\d{2}(\.\d+)?([Zz]|[+-]\d{2}:\d{2})$/.test(t) && Date.parse(t);
  if (typeof rfc3339 !== 'number' || Number.isNaN(rfc3339))
    throw usageError(
      `--begin: "${text}" is neither now, +DURATION (+1h) nor an RFC 3339 time (2030-05-01T12:00:00Z)`,
    );
  return Math.floor(rfc3339 / 1000);
}

/** `--expire`: whole seconds (`3600`) or a duration (`1h`, `30m`); 0 or less is refused. */
export function parseExpire(text: string): number {
  const d = durationSeconds(text);
  if (d === undefined || d <= 0)
    throw usageError(`--expire: "${text}" is not a number of seconds (3600) or a duration (1h, 30m)`);
  return d;
}

/** A comma-separated list without empty items. */
export const commaList = (text: string): string[] =>
  text
    .split(',')
    .map((s) => s.trim())
    .filter(Boolean);

/** The first line of stdin (for `--password-stdin`), without its line end; refused on a terminal. */
export function secretFromStdin(deps: CliDeps, flag: string): string {
  if (deps.io.stdin.isTTY) throw usageError(`${flag}: stdin is a terminal; pipe the password in`);
  const line = readFileSync(0, 'utf8').split(/\r?\n/)[0] ?? '';
  if (line === '') throw usageError(`${flag}: stdin holds no password`);
  return line;
}

/** Asks for a password without echoing it (twice when `confirm`); a usage error without a terminal. */
export async function promptSecret(
  deps: CliDeps,
  message: string,
  missing: string,
  confirm = false,
): Promise<string> {
  if (!deps.interactive()) throw usageError(missing);
  const first = await ask(deps, (p, ctx) =>
    p.password({ message, mask: true, validate: (v) => v !== '' || 'a password cannot be empty' }, ctx),
  );
  if (confirm) {
    const again = await ask(deps, (p, ctx) => p.password({ message: 'Again:', mask: true }, ctx));
    if (again !== first) throw usageError('the two passwords differ');
  }
  return first;
}

/** Asks yes or no (default no); a usage error without a terminal, naming the flag that skips it. */
export async function confirmYes(deps: CliDeps, message: string, command: string): Promise<boolean> {
  if (!deps.interactive())
    throw usageError(`${command}: not a terminal, so nothing can be confirmed: add --skip-confirm`);
  return ask(deps, (p, ctx) => p.confirm({ message, default: false }, ctx));
}

/** An ApiError told about `what`; other errors as they are. */
export function about(err: unknown, what: string): unknown {
  return err instanceof ApiError ? err.about(what) : err;
}

/** Removes the subcommand `name` of `group` (a generic one this module replaces); returns the group. */
export function dropSubcommand(group: Command, name: string): Command {
  const list = group.commands as Command[];
  const i = list.findIndex((c) => c.name() === name);
  if (i >= 0) list.splice(i, 1);
  return group;
}
