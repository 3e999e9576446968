// The agent's asset manager (docs/compatibility.md#assets): pick the build for this entity, fetch it (rate
// limited, one download per archive however many checks ask), verify its SHA-512, unpack it into
// `<cache-dir>/assets/<sha512>/` and give the environment that puts it on the command's paths. The cache
// directory is its own index: an asset directory only appears by an atomic rename of a completely unpacked
// tree, so its existence means it is complete, across restarts too.
import type * as v from 'valibot';
import * as fs from 'node:fs/promises';
import * as path from 'node:path';
import { randomBytes } from 'node:crypto';
import type { Asset as AssetSchema } from '../../proto/schemas/resources/assets.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Logger } from '../log.ts';
import { AssetError } from './errors.ts';
import { AssetFilters } from './filters.ts';
import { TokenBucket } from './rate-limit.ts';
import { download } from './fetch.ts';
import { sniff, unpack } from './tar.ts';

export { AssetError } from './errors.ts';
export type Asset = v.InferOutput<typeof AssetSchema>;

export interface AssetEnv {
  /** variables to set or prepend */
  env: Record<string, string>;
  /** dirs to prepend to PATH, LD_LIBRARY_PATH, CPATH */
  path: string[];
  libraryPath: string[];
  includePath: string[];
}

interface AssetManagerOptions {
  cacheDir: string;
  rateLimit: number;
  burstLimit: number;
  disabled: boolean;
  log: Logger;
  trustedCaFile?: string;
  /** size cap of one download in bytes; 1 GiB unless given */
  maxDownloadBytes?: number;
}

interface Build {
  url: string;
  sha512: string;
  headers: Record<string, string>;
}

const TMP_PREFIX = '.tmp-';

/** `<NAME>_PATH` for an asset name: upper case, anything but letters and digits becomes `_`. */
export function assetPathVar(name: string): string {
  return `${name.toUpperCase().replace(/[^A-Z0-9]/g, '_')}_PATH`;
}

export class AssetManager {
  private readonly root: string;
  private readonly bucket: TokenBucket;
  private readonly inflight = new Map<string, Promise<string>>();
  private ca: Promise<string | undefined> | undefined;
  private sweeping: Promise<void> | undefined;
  private readonly filters: AssetFilters;

  constructor(private readonly opts: AssetManagerOptions) {
    this.root = path.join(opts.cacheDir, 'assets');
    this.bucket = new TokenBucket(opts.rateLimit, opts.burstLimit);
    this.filters = new AssetFilters(opts.log);
  }

  async prepare(assets: Asset[], entity: Entity): Promise<AssetEnv> {
    const out: AssetEnv = { env: {}, path: [], libraryPath: [], includePath: [] };
    if (assets.length === 0) return out;
    const names = assets.map((a) => a.metadata.name ?? '(unnamed)');
    if (this.opts.disabled) {
      throw new AssetError(
        `assets are disabled on this agent (--disable-assets); the check needs: ${names.join(', ')}`,
      );
    }
    await this.filters.ready(assets.flatMap((a) => [a.filters, ...(a.builds ?? []).map((b) => b.filters)]));
    const chosen: Array<{ name: string; build: Build }> = [];
    for (const [i, a] of assets.entries()) {
      const build = this.select(a, names[i]!, entity);
      if (build) chosen.push({ name: names[i]!, build });
    }
    // Fetch in parallel; the rate limiter orders the requests.
    const dirs = await Promise.all(chosen.map((c) => this.get(c.name, c.build)));
    chosen.forEach((c, i) => {
      const dir = dirs[i]!;
      out.path.push(path.join(dir, 'bin'));
      out.libraryPath.push(path.join(dir, 'lib'));
      out.includePath.push(path.join(dir, 'include'));
      out.env[assetPathVar(c.name)] = dir;
    });
    return out;
  }

  /** The build to use on this entity, or undefined when the asset's filters exclude it. */
  private select(a: Asset, name: string, entity: Entity): Build | undefined {
    const filters = this.filters;
    if (!filters.all(a.filters, entity, name)) {
      this.opts.log.debug('asset filtered out for this entity', { asset: name });
      return undefined;
    }
    if (a.builds && a.builds.length > 0) {
      const b = a.builds.find((b) => filters.all(b.filters, entity, name));
      if (!b) {
        this.opts.log.debug('no build of the asset matches this entity', { asset: name });
        return undefined;
      }
      return { url: b.url, sha512: b.sha512.toLowerCase(), headers: b.headers ?? {} };
    }
    if (!a.url || !a.sha512) throw new AssetError(`asset ${name} has neither url and sha512 nor builds`);
    return { url: a.url, sha512: a.sha512.toLowerCase(), headers: a.headers ?? {} };
  }

  /** The unpacked directory of a build, fetching it unless cached; one download per archive at a time. */
  private get(name: string, b: Build): Promise<string> {
    const running = this.inflight.get(b.sha512);
    if (running) return running;
    const p = this.fetchAndUnpack(name, b).finally(() => this.inflight.delete(b.sha512));
    this.inflight.set(b.sha512, p);
    return p;
  }

  private async fetchAndUnpack(name: string, b: Build): Promise<string> {
    const dir = path.join(this.root, b.sha512);
    if (await isDir(dir)) return dir;
    await fs.mkdir(this.root, { recursive: true, mode: 0o755 });
    await (this.sweeping ??= this.sweep());
    const log = this.opts.log.child({ asset: name, sha512: b.sha512.slice(0, 16) });
    const tmp = path.join(this.root, `${TMP_PREFIX}${randomBytes(8).toString('hex')}`);
    const archive = `${tmp}.download`;
    try {
      await this.bucket.take();
      log.info('fetching asset', { url: redactUrl(b.url) });
      const got = await download(name, b.url, archive, {
        headers: b.headers,
        ca: await this.trustedCa(),
        maxBytes: this.opts.maxDownloadBytes,
      });
      if (got.sha512 !== b.sha512) {
        throw new AssetError(`asset ${name}: SHA-512 of the download is ${got.sha512}, expected ${b.sha512}`);
      }
      const kind = await sniff(archive);
      if (!kind) throw new AssetError(`asset ${name}: the download is neither a tar nor a gzip archive`);
      await fs.mkdir(tmp, { mode: 0o755 });
      try {
        await unpack(archive, kind, tmp);
      } catch (err) {
        throw new AssetError(`asset ${name}: ${(err as Error).message}`);
      }
      try {
        await fs.rename(tmp, dir);
      } catch (err) {
        // Another agent process sharing the cache got there first: its copy is as good as ours.
        if (!(await isDir(dir))) throw err;
      }
      log.info('asset ready', { bytes: got.bytes, dir });
      return dir;
    } catch (err) {
      log.warn('asset unavailable', { error: (err as Error).message });
      if (err instanceof AssetError) throw err;
      throw new AssetError(`asset ${name}: ${(err as Error).message}`);
    } finally {
      await fs.rm(archive, { force: true }).catch(() => {});
      await fs.rm(tmp, { recursive: true, force: true }).catch(() => {});
    }
  }

  /** Leftovers of a previous run that stopped mid-download are removed once, before any fetch of this run writes. */
  private async sweep(): Promise<void> {
    for (const e of await fs.readdir(this.root).catch(() => [] as string[])) {
      if (e.startsWith(TMP_PREFIX))
        await fs.rm(path.join(this.root, e), { recursive: true, force: true }).catch(() => {});
    }
  }

  private trustedCa(): Promise<string | undefined> {
    const file = this.opts.trustedCaFile;
    if (!file) return Promise.resolve(undefined);
    this.ca ??= fs.readFile(file, 'utf8').catch((err: Error) => {
      this.ca = undefined;
      throw new AssetError(`reading trusted-ca-file ${file}: ${err.message}`);
    });
    return this.ca;
  }
}

async function isDir(p: string): Promise<boolean> {
  return (await fs.stat(p).catch(() => undefined))?.isDirectory() ?? false;
}

/** URLs may carry credentials in the user info or the query; the log gets neither. */
function redactUrl(u: string): string {
  try {
    const url = new URL(u);
    return `${url.protocol}//${url.host}${url.pathname}`;
  } catch {
    return '(invalid URL)';
  }
}

/** The environment for a command: asset dirs in front of the inherited search paths, plus <NAME>_PATH. */
export function applyAssetEnv(base: NodeJS.ProcessEnv, a: AssetEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...a.env };
  const prepend = (name: string, dirs: string[]) => {
    if (dirs.length === 0) return;
    env[name] = [...dirs, ...(base[name] ? [base[name] as string] : [])].join(path.delimiter);
  };
  prepend('PATH', a.path);
  prepend('LD_LIBRARY_PATH', a.libraryPath);
  prepend('CPATH', a.includePath);
  return env;
}
