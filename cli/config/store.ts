import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname } from 'node:path';
import * as v from 'valibot';
import { CliConfigFile, type CliContext } from '../../proto/schemas/cli-config.ts';
import { describeIssues } from '../../proto/schemas/common.ts';
import { usageError } from '../errors.ts';

/**
 * The configuration file: read and validated on every use, written whole through a temporary file
 * and a rename, so a reader (another monitorctl refreshing its token at the same moment) never sees
 * half a file. The file is 0600 and its folder 0700: it holds tokens and API keys.
 */
export class ConfigStore {
  constructor(readonly path: string) {}

  /** The file's content; an absent file is an empty configuration. */
  load(): CliConfigFile {
    let text: string;
    try {
      text = readFileSync(this.path, 'utf8');
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return { contexts: {} };
      throw usageError(`cannot read ${this.path}: ${(err as Error).message}`);
    }
    let raw: unknown;
    try {
      raw = text.trim() === '' ? {} : JSON.parse(text);
    } catch (err) {
      throw usageError(`${this.path} is not valid JSON: ${(err as Error).message}`);
    }
    const r = v.safeParse(CliConfigFile, raw);
    if (!r.success) throw usageError(`${this.path}: ${describeIssues(r.issues)}`);
    return r.output;
  }

  save(cfg: CliConfigFile): void {
    const dir = dirname(this.path);
    mkdirSync(dir, { recursive: true, mode: 0o700 });
    chmodSync(dir, 0o700);
    const tmp = `${this.path}.${process.pid}.tmp`;
    try {
      writeFileSync(tmp, `${JSON.stringify(cfg, null, 2)}\n`, { mode: 0o600 });
      chmodSync(tmp, 0o600);
      renameSync(tmp, this.path);
    } catch (err) {
      rmSync(tmp, { force: true });
      throw usageError(`cannot write ${this.path}: ${(err as Error).message}`);
    }
  }

  /** Reads the file, lets `change` edit it, writes it back; returns what was written. */
  update(change: (cfg: CliConfigFile) => void): CliConfigFile {
    const cfg = this.load();
    change(cfg);
    this.save(cfg);
    return cfg;
  }

  /** Replaces the fields of one existing context (a token refresh); false when the context is gone. */
  patchContext(name: string, fields: Partial<CliContext>): boolean {
    let found = false;
    this.update((cfg) => {
      const ctx = cfg.contexts[name];
      if (!ctx) return;
      found = true;
      cfg.contexts[name] = { ...ctx, ...fields };
    });
    return found;
  }
}
