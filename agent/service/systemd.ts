import { spawnSync } from 'node:child_process';

// The systemd unit of the agent. Pure text building plus the daemon-reload call, so the command
// layer (./index.ts) decides what to print and which exit code to use.

export const UNIT_NAME = 'monitor-agent.service';

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
  /** argv of the agent up to and excluding `start`: node and the monitor-agent script. */
  command: string[];
  /** Absolute; empty when the agent's default file applies. */
  configFile: string;
  /** Absolute; empty for the journal. */
  logFile: string;
}

export function unitText(o: UnitOptions): string {
  const exec = [...o.command, 'start', ...(o.configFile ? ['--config-file', o.configFile] : [])]
    .map(unitWord)
    .join(' ');
  const lines = [
    '# Written by `monitor-agent service install`; `monitor-agent service uninstall` removes it.',
    '[Unit]',
    'Description=monitor agent',
    'After=network-online.target',
    'Wants=network-online.target',
    '',
    '[Service]',
    'Type=simple',
    'User=root',
    // The distribution defaults files, as packages install them; `-` means optional.
    'EnvironmentFile=-/etc/default/monitor-agent',
    'EnvironmentFile=-/etc/sysconfig/monitor-agent',
    `ExecStart=${exec}`,
    'Restart=always',
    'RestartSec=1',
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
