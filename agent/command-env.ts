import { readFileSync } from 'node:fs';

// The environment of check and hook commands: the agent's own environment plus the variables of the
// distribution's defaults file for the service (/etc/default on Debian/Ubuntu, /etc/sysconfig on
// RHEL/CentOS). Packages start the agent through systemd, whose EnvironmentFile would put these
// variables in the agent's environment; an agent started any other way must still hand them on.

export const COMMAND_ENV_FILES = ['/etc/default/monitor-agent', '/etc/sysconfig/monitor-agent'];

interface EnvFileResult {
  vars: Record<string, string>;
  /** Lines that are neither a variable nor a comment, as `<line number>: <text>`. */
  skipped: string[];
}

const ASSIGNMENT = /^(?:export\s+)?([A-Za-z_][A-Za-z0-9_]*)\s*=\s*(.*)$/;

function unquote(raw: string): string {
  const value = raw.trim();
  if (value.startsWith("'")) {
    const end = value.indexOf("'", 1);
    return end < 0 ? value.slice(1) : value.slice(1, end);
  }
  if (value.startsWith('"')) {
    let out = '';
    for (let i = 1; i < value.length; i++) {
      const c = value[i]!;
      if (c === '"') return out;
      if (c === '\\' && i + 1 < value.length) {
        const n = value[++i]!;
        out += n === 'n' ? '\n' : n === 't' ? '\t' : n;
      } else out += c;
    }
    return out;
  }
  // Unquoted: a `#` after white space starts a comment, as in a shell.
  return value.replace(/\s+#.*$/, '');
}

/**
 * KEY=VALUE lines with an optional `export`, `#` comments, blank lines, and single (literal) or
 * double (backslash escapes) quotes. Values are not expanded: `$HOME` stays as written, as systemd
 * leaves it, so the file means the same whichever way the agent was started.
 */
export function parseEnvFile(text: string): EnvFileResult {
  const vars: Record<string, string> = {};
  const skipped: string[] = [];
  text.split(/\r?\n/).forEach((line, i) => {
    const trimmed = line.trim();
    if (trimmed === '' || trimmed.startsWith('#')) return;
    const m = ASSIGNMENT.exec(trimmed);
    if (!m) {
      skipped.push(`${i + 1}: ${trimmed}`);
      return;
    }
    vars[m[1]!] = unquote(m[2]!);
  });
  return { vars, skipped };
}

interface CommandEnvOptions {
  /** Defaults files to read, in order; a later file wins. Default COMMAND_ENV_FILES. */
  files?: string[];
  /** The inherited environment; default process.env. */
  baseEnv?: NodeJS.ProcessEnv;
  /** Told about unreadable files and skipped lines (never their values). */
  warn?: (msg: string, fields: Record<string, unknown>) => void;
}

/**
 * The environment for a check or hook command. The files win over the inherited environment, as
 * systemd's EnvironmentFile does: that is how an operator widens PATH for checks. A missing file
 * is normal (most hosts have neither); the files are read on each call, and they are small.
 */
export function baseCommandEnv(opts: CommandEnvOptions = {}): Record<string, string> {
  const env: Record<string, string> = {};
  for (const [k, val] of Object.entries(opts.baseEnv ?? process.env)) if (val !== undefined) env[k] = val;
  for (const file of opts.files ?? COMMAND_ENV_FILES) {
    let text: string;
    try {
      text = readFileSync(file, 'utf8');
    } catch (e) {
      const code = (e as NodeJS.ErrnoException).code;
      if (code !== 'ENOENT' && code !== 'ENOTDIR')
        opts.warn?.('cannot read environment file for commands', { file, error: (e as Error).message });
      continue;
    }
    const { vars, skipped } = parseEnvFile(text);
    if (skipped.length)
      opts.warn?.('lines skipped in environment file for commands', {
        file,
        lines: skipped.map((s) => s.split(':', 1)[0]),
      });
    Object.assign(env, vars);
  }
  return env;
}
