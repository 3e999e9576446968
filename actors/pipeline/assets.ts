import * as os from 'node:os';
import * as path from 'node:path';
import { configKeys } from '../../proto/names.ts';
import type { Logger } from '../../lib/log.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import { AssetManager, assetPathVar, type Asset } from '../../lib/assets/index.ts';
import { assetLibraries } from '../../lib/assets/libraries.ts';
import { systemInfo } from '../../lib/system.ts';
import type { ConfigStore } from '../config/store.ts';
import type { ExecContext } from './types.ts';

// Runtime assets of pipe mutators and handlers on the backend (docs/compatibility.md#assets): the same fetch,
// verification and cache as the agent's, into `<state-dir>/assets`, with the build chosen for the
// backend's own host. Names match exactly (docs/compatibility.md#asset-names-match-exactly).

/** The reference's defaults for fetching (about 5,000 per hour, burst 100). */
const RATE_LIMIT = 1.39;
const BURST_LIMIT = 100;

interface BackendAssetsOptions {
  config: ConfigStore;
  /** The backend's state directory; assets go to `<stateDir>/assets`. */
  stateDir: string;
  log: Logger;
  /** Node name, for the synthetic entity. */
  node?: string;
  trustedCaFile?: string;
}

export class BackendAssets {
  private readonly manager: AssetManager;
  private system: Entity['system'] | undefined;
  /** Prepared environments by namespace and names, valid while the configuration is unchanged (each prepare runs the asset filters). */
  private readonly prepared = new Map<string, { generation: number; env: Promise<Record<string, string>> }>();

  constructor(private readonly opts: BackendAssetsOptions) {
    this.manager = new AssetManager({
      cacheDir: opts.stateDir,
      rateLimit: RATE_LIMIT,
      burstLimit: BURST_LIMIT,
      disabled: false,
      log: opts.log,
      ...(opts.trustedCaFile ? { trustedCaFile: opts.trustedCaFile } : {}),
    });
  }

  /** Suits ExecContext['assets']: PATH, LD_LIBRARY_PATH and CPATH hold directories to prepend; `<NAME>_PATH` is set. */
  readonly assets: ExecContext['assets'] = async (names, namespace) => {
    if (names.length === 0) return { env: {} };
    const key = `${namespace}\0${names.join('\0')}`;
    const generation = this.opts.config.generation;
    const hit = this.prepared.get(key);
    if (hit && hit.generation === generation) return { env: { ...(await hit.env) } };
    if (this.prepared.size > 1000) this.prepared.clear();
    const env = this.prepare(names, namespace);
    this.prepared.set(key, { generation, env });
    env.catch(() => {
      if (this.prepared.get(key)?.env === env) this.prepared.delete(key);
    });
    return { env: { ...(await env) } };
  };

  /**
   * Suits ExecContext['filterLibraries']: the JavaScript files of a filter's runtime assets, fetched and
   * verified as a handler's are, asset by asset in the order named; `key` says which versions they are.
   * An asset whose filters exclude this host contributes nothing.
   */
  readonly filterLibraries: NonNullable<ExecContext['filterLibraries']> = async (names, namespace) => {
    const { env } = await this.assets(names, namespace);
    const dirs = names.map((n) => env[assetPathVar(n)]);
    const lists = await Promise.all(
      names.map((n, i) => (dirs[i] ? assetLibraries(n, dirs[i]) : Promise.resolve([]))),
    );
    return { key: dirs.map((d) => d ?? '-').join('\0'), list: lists.flat() };
  };

  private async prepare(names: string[], namespace: string): Promise<Record<string, string>> {
    const resolved: Asset[] = names.map((name) => this.lookup(name, namespace));
    const a = await this.manager.prepare(resolved, this.entity(namespace));
    const env: Record<string, string> = { ...a.env };
    const join = (dirs: string[]) => dirs.join(path.delimiter);
    if (a.path.length) env.PATH = join(a.path);
    if (a.libraryPath.length) env.LD_LIBRARY_PATH = join(a.libraryPath);
    if (a.includePath.length) env.CPATH = join(a.includePath);
    return env;
  }

  private lookup(name: string, namespace: string): Asset {
    // Stored resources were parsed by the API when written.
    const asset = this.opts.config.get<Asset>(configKeys.namespaced('assets', namespace, name));
    if (asset === undefined) throw new Error(`asset ${name} not found in namespace ${namespace}`);
    return asset;
  }

  /** The backend host as an entity, so asset filters such as `entity.system.os == 'linux'` choose its build. */
  private entity(namespace: string): Entity {
    if (!this.system) {
      const { network: _network, ...facts } = systemInfo();
      this.system = facts;
    }
    return {
      metadata: { name: this.opts.node ?? os.hostname(), namespace },
      entity_class: 'backend',
      system: this.system,
    } as Entity;
  }
}
