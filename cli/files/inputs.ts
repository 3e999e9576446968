import { readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { usageError } from '../errors.ts';

// Where the resources of `create -f`, `delete -f` and `prune -f` come from (docs/cli.md#files):
// files, the .yaml/.yml/.json files of directories (with --recursive, of their subdirectories too),
// http(s) URLs and `-` for stdin. Each source's text is read whole; one that cannot be read is a
// usage error naming it.

interface Source {
  /** The path, URL or `-` as given (a directory's files by their path). */
  name: string;
  text: string;
}

const RESOURCE_FILE = /\.(ya?ml|json)$/i;

/** The files of a directory, sorted; its subdirectories' too when `recursive`. */
function filesOf(dir: string, recursive: boolean): string[] {
  const out: string[] = [];
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : 1))) {
    const p = join(dir, e.name);
    if (e.isDirectory()) {
      if (recursive) out.push(...filesOf(p, recursive));
    } else if (RESOURCE_FILE.test(e.name)) out.push(p);
  }
  return out;
}

async function fromUrl(url: string, timeoutMs: number): Promise<Source> {
  let res: Response;
  try {
    res = await fetch(url, { signal: AbortSignal.timeout(timeoutMs) });
  } catch (err) {
    const e = err as Error & { cause?: { code?: string; message?: string } };
    throw usageError(`cannot read ${url}: ${e.cause?.code ?? e.cause?.message ?? e.message}`);
  }
  if (!res.ok) throw usageError(`cannot read ${url}: HTTP ${res.status}`);
  return { name: url, text: await res.text() };
}

/** The sources of the paths given, in their order. */
export async function readSources(
  paths: string[],
  o: { recursive: boolean; stdin: () => string; timeoutMs: number },
): Promise<Source[]> {
  const out: Source[] = [];
  for (const p of paths) {
    if (p === '-') {
      out.push({ name: 'stdin', text: o.stdin() });
      continue;
    }
    if (/^https?:\/\//i.test(p)) {
      out.push(await fromUrl(p, o.timeoutMs));
      continue;
    }
    let isDir: boolean;
    try {
      isDir = statSync(p).isDirectory();
    } catch (err) {
      const e = err as NodeJS.ErrnoException;
      throw usageError(`cannot read ${p}: ${e.code === 'ENOENT' ? 'no such file or directory' : e.message}`);
    }
    const files = isDir ? filesOf(p, o.recursive) : [p];
    for (const f of files) {
      try {
        out.push({ name: f, text: readFileSync(f, 'utf8') });
      } catch (err) {
        throw usageError(`cannot read ${f}: ${(err as Error).message}`);
      }
    }
  }
  return out;
}
