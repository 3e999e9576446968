import { spawnSync } from 'node:child_process';

// The systemd unit of a monitor program (the agent, the backend). Pure text building plus the
// daemon-reload call, so the command layer (./command.ts) decides what to print and which exit
// code to use.

/**
 * One word of an ExecStart line. systemd splits on white space and honours double quotes with C
 * escapes; `%` starts a specifier and `$` a variable, so both are doubled to stay literal.
 */
export function unitWord(word: string): string {
  const literal = word.replace(/%/g, '%%').replace(/\$/g, '$$$$');
  if (literal !== '' && !/[\s"'\\;]/.test(literal)) return literal;
  return `"${literal.replace(/\\/g, '\\\\').replace(/"/g, '\\"')}"`;
}

/** A path in a `key=value` setting (StandardOutput=append:...) where quotes are not understood. */
const settingValue = (value: string): string => value.replace(/%/g, '%%');

interface UnitOptions {
  /** The program's name: `monitor-agent`, `monitor-backend`. */
  program: string;
  /** The unit's Description=. */
  description: string;
  /** argv of the program up to and excluding `start`: node and the program's script. */
  command: string[];
  /** Absolute; empty when the program's default file applies. */
  configFile: string;
  /** The file the program reads without --config-file, named in a comment of the unit. */
  defaultConfig: string;
  /** Absolute; empty for the journal. */
  logFile: string;
  /** Extra [Service] settings, such as LimitNOFILE=. */
  settings?: string[];
}

export function unitText(o: UnitOptions): string {
  const exec = [...o.command, 'start', ...(o.configFile ? ['--config-file', o.configFile] : [])]
    .map(unitWord)
    .join(' ');
  const lines = [
    `# Written by \`${o.program} service install\`; \`${o.program} service uninstall\` removes it.`,
    `# Configuration: ${o.configFile || `${o.defaultConfig} (the default file; without it, the defaults)`}`,
    '[Unit]',
    `Description=${o.description}`,
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    'User=root',
    // The distribution defaults files, as packages install them; `-` means optional.
    `EnvironmentFile=-/etc/default/${o.program}`,
    `EnvironmentFile=-/etc/sysconfig/${o.program}`,
    `ExecStart=${exec}`,
    'Restart=always',
    'RestartSec=1',
    ...(o.settings ?? []),
  ];
  if (o.logFile)
    lines.push(
      `StandardOutput=append:${settingValue(o.logFile)}`,
      `StandardError=append:${settingValue(o.logFile)}`,
    );
  lines.push('', '[Install]', 'WantedBy=multi-user.target', '');
  return lines.join('\n');
}

type ReloadResult = { ok: true } | { ok: false; reason: string };

/** `systemctl daemon-reload`; a missing or failing systemctl is reported, not thrown. */
export function daemonReload(): ReloadResult {
  const r = spawnSync('systemctl', ['daemon-reload'], { encoding: 'utf8', timeout: 30_000 });
  if (r.error) {
    const code = (r.error as NodeJS.ErrnoException).code;
    return { ok: false, reason: code === 'ENOENT' ? 'systemctl not found' : r.error.message };
  }
  if (r.status !== 0)
    return { ok: false, reason: (r.stderr || r.stdout).trim().split('\n')[0] || `exit status ${r.status}` };
  return { ok: true };
}
