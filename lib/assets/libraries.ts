// The JavaScript libraries of an unpacked asset (docs/compatibility.md#filter-runtime-assets): every
// regular file ending in `.js`, at any depth, in the order of their paths, for the sandbox to run before
// a filter's expressions. Symbolic links are not followed. An asset's directory never changes once
// unpacked (it is named by its SHA-512), so what is read is kept for the process's life.
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import type { Library } from '../sandbox/index.ts';
import { AssetError } from './errors.ts';

const DEFAULTS = {
  /** All the JavaScript of one asset, in bytes. */
  maxBytes: 8 * 1024 * 1024,
  maxFiles: 1000,
  /** Unpacked directories whose files are kept in memory. */
  maxCached: 256,
};

const cache = new Map<string, Promise<Library[]>>();

/** The `.js` files of the asset unpacked in `dir`, named after `asset`. */
export function assetLibraries(asset: string, dir: string): Promise<Library[]> {
  const key = `${asset}\0${dir}`;
  let p = cache.get(key);
  if (!p) {
    if (cache.size >= DEFAULTS.maxCached) cache.clear();
    p = read(asset, dir);
    cache.set(key, p);
    p.catch(() => cache.delete(key));
  }
  return p;
}

async function read(asset: string, dir: string): Promise<Library[]> {
  const files: string[] = [];
  const walk = async (rel: string) => {
    const entries = await fs.readdir(path.join(dir, rel), { withFileTypes: true });
    for (const e of entries) {
      const p = rel ? `${rel}/${e.name}` : e.name;
      if (e.isDirectory()) await walk(p);
      else if (e.isFile() && e.name.endsWith('.js')) files.push(p);
      if (files.length > DEFAULTS.maxFiles)
        throw new AssetError(`asset ${asset}: more than ${DEFAULTS.maxFiles} JavaScript files`);
    }
  };
  await walk('');
  files.sort();
  let bytes = 0;
  const out: Library[] = [];
  for (const f of files) {
    const source = await fs.readFile(path.join(dir, f), 'utf8');
    bytes += Buffer.byteLength(source);
    if (bytes > DEFAULTS.maxBytes)
      throw new AssetError(`asset ${asset}: more than ${DEFAULTS.maxBytes} bytes of JavaScript`);
    out.push({ name: `${asset}/${f}`, source });
  }
  return out;
}
