/**
 * Runs the real monitorctl (bin/monitorctl, the compiled program) as a child process, with its own
 * configuration folder: each `CtlHome` is a temporary HOME and XDG_CONFIG_HOME, and the caller's
 * MONITOR_ variables are never passed on, so a test sees only what it sets.
 */
import { spawn } from 'node:child_process';
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import * as assert from 'uvu/assert';
import { MONITORCTL_BIN } from './programs.ts';
import { tempDir } from './tmp.ts';

export { MONITORCTL_BIN };

export interface CtlResult {
  code: number | null;
  stdout: string;
  stderr: string;
}

interface CtlOptions {
  /** More environment (MONITOR_URL, ...); undefined removes a variable. */
  env?: Record<string, string | undefined>;
  /** Written to stdin, which is then closed (default: closed at once). */
  input?: string;
  timeoutMs?: number;
}

/** A user of monitorctl: a home of its own, where its configuration file lives. */
export class CtlHome {
  readonly dir = tempDir('monitorctl-home');

  /** The configuration file monitorctl writes. */
  get configFile(): string {
    return join(this.dir, '.config', 'monitor', 'monitorctl.json');
  }

  /** The configuration file parsed (throws when absent). */
  config(): any {
    return JSON.parse(readFileSync(this.configFile, 'utf8'));
  }

  /** The permission bits of the file and of its folder. */
  modes(): { file: number; dir: number } {
    return {
      file: statSync(this.configFile).mode & 0o777,
      dir: statSync(join(this.dir, '.config', 'monitor')).mode & 0o777,
    };
  }

  env(extra: Record<string, string | undefined> = {}): NodeJS.ProcessEnv {
    const env: NodeJS.ProcessEnv = {};
    for (const [k, v] of Object.entries(process.env)) if (!k.startsWith('MONITOR_')) env[k] = v;
    env.HOME = this.dir;
    delete env.XDG_CONFIG_HOME;
    for (const [k, v] of Object.entries(extra)) {
      if (v === undefined) delete env[k];
      else env[k] = v;
    }
    return env;
  }

  /** Runs `monitorctl ...args` to its end. */
  run(args: string[], o: CtlOptions = {}): Promise<CtlResult> {
    return runCtl(args, this.env(o.env), o.input, o.timeoutMs);
  }

  /** Runs and asserts the exit status; `oneLine`: and that stderr is one line (a failure's clear line). */
  async expect(code: number, args: string[], o: CtlOptions & { oneLine?: boolean } = {}): Promise<CtlResult> {
    const r = await this.run(args, o);
    assert.is(r.code, code, `monitorctl ${args.join(' ')}: ${r.stdout}${r.stderr}`);
    if (o.oneLine) assert.is(r.stderr.trim().split('\n').length, 1, r.stderr);
    return r;
  }

  /** The standard output of a run that must succeed. */
  async ok(args: string[], input?: string): Promise<string> {
    return (await this.expect(0, args, { input })).stdout;
  }

  /** A successful run's answer in `--format json`, parsed. */
  async json(args: string[]): Promise<any> {
    return JSON.parse(await this.ok([...args, '--format', 'json']));
  }
}

function runCtl(
  args: string[],
  env: NodeJS.ProcessEnv,
  input?: string,
  timeoutMs = 30_000,
): Promise<CtlResult> {
  return new Promise((resolve, reject) => {
    const child = spawn(process.execPath, [MONITORCTL_BIN, ...args], { env, timeout: timeoutMs });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    child.on('error', reject);
    child.on('close', (code) => resolve({ code, stdout, stderr }));
    child.stdin.end(input);
  });
}
