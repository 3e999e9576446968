import { createHash } from 'node:crypto';
import { accessSync, constants, readFileSync, statSync } from 'node:fs';
import { delimiter, extname, isAbsolute, join } from 'node:path';
import * as v from 'valibot';
import { describeIssues } from '../../proto/schemas/common.ts';
import { AllowList, type AllowListEntry } from '../../proto/schemas/check-request.ts';
import { parseYamlFile } from '../../lib/yaml-file.ts';

// The agent allow list (docs/compatibility.md#allow-list): an operator's list of the only commands checks
// and hooks may run on this host, so a compromised backend cannot run arbitrary commands.

export const DENIED_OUTPUT = 'check command denied by the agent allow list';

export class AllowListError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'AllowListError';
  }
}

/** Reads the file once at start; YAML unless the name ends in .json. Throws AllowListError (one line). */
export function loadAllowList(file: string): AllowListEntry[] {
  let text: string;
  try {
    text = readFileSync(file, 'utf8');
  } catch (e) {
    throw new AllowListError(`cannot read allow list ${file}: ${(e as Error).message}`);
  }
  let doc: unknown;
  try {
    doc = extname(file).toLowerCase() === '.json' ? JSON.parse(text) : parseYamlFile(text);
  } catch (e) {
    throw new AllowListError(
      `allow list ${file} is not valid ${extname(file).toLowerCase() === '.json' ? 'JSON' : 'YAML'}: ${(e as Error).message.split('\n')[0]}`,
    );
  }
  const r = v.safeParse(AllowList, doc);
  if (!r.success) throw new AllowListError(`invalid allow list ${file}: ${describeIssues(r.issues)}`);
  return r.output;
}

/**
 * The reference's match rule: the command contains `exec`; once `exec` and each of `args` are taken
 * out of it (once each), only white space may remain.
 */
export function commandMatches(entry: AllowListEntry, command: string): boolean {
  if (!command.includes(entry.exec)) return false;
  let rest = command.replace(entry.exec, '');
  for (const arg of entry.args ?? []) {
    if (arg !== '') rest = rest.replace(arg, '');
  }
  return rest.trim() === '';
}

/** `exec` as the shell would find it: a path as given, else the first executable on PATH. */
export function resolveExecutable(exec: string, path: string | undefined): string | undefined {
  const usable = (p: string) => {
    try {
      accessSync(p, constants.X_OK);
      return statSync(p).isFile();
    } catch {
      return false;
    }
  };
  if (exec.includes('/')) return isAbsolute(exec) || usable(exec) ? exec : undefined;
  for (const dir of (path ?? '').split(delimiter)) {
    if (!dir) continue;
    const p = join(dir, exec);
    if (usable(p)) return p;
  }
  return undefined;
}

function sha512File(file: string): string {
  return createHash('sha512').update(readFileSync(file)).digest('hex');
}

type AllowDecision = { allowed: true; enableEnv: boolean } | { allowed: false; reason: string };

/**
 * Decides for one command. No list configured allows everything (with env_vars). A matching entry
 * with sha512 allows only when the resolved executable hashes to it; the next entry may still match.
 */
export function checkAllowed(
  list: AllowListEntry[] | undefined,
  command: string,
  path: string | undefined,
): AllowDecision {
  if (!list) return { allowed: true, enableEnv: true };
  let reason = 'no allow list entry matches the command';
  for (const entry of list) {
    if (!commandMatches(entry, command)) continue;
    if (entry.sha512) {
      const resolved = resolveExecutable(entry.exec, path);
      if (!resolved) {
        reason = `executable ${entry.exec} not found`;
        continue;
      }
      let sum: string;
      try {
        sum = sha512File(resolved);
      } catch (e) {
        reason = `cannot read ${resolved}: ${(e as Error).message}`;
        continue;
      }
      if (sum !== entry.sha512.toLowerCase()) {
        reason = `sha512 of ${resolved} does not match the allow list`;
        continue;
      }
    }
    return { allowed: true, enableEnv: entry.enable_env ?? false };
  }
  return { allowed: false, reason };
}
