// The agent's asset manager (spec 2.7): fetch, verify, unpack and cache the assets a check asks for,
// and give the environment that puts them on the command's paths.
import type * as v from 'valibot';
import type { Asset as AssetSchema } from '../../proto/schemas/resources/assets.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Logger } from '../../proto/log.ts';

export type Asset = v.InferOutput<typeof AssetSchema>;

export interface AssetEnv {
  /** variables to set or prepend */
  env: Record<string, string>;
  /** dirs to prepend to PATH, LD_LIBRARY_PATH, CPATH */
  path: string[];
  libraryPath: string[];
  includePath: string[];
}

/** An asset could not be provided; the check runner reports it as a status 3 event with this message. */
export class AssetError extends Error {
  override name = 'AssetError';
}

export interface AssetManagerOptions {
  cacheDir: string;
  rateLimit: number;
  burstLimit: number;
  disabled: boolean;
  log: Logger;
  trustedCaFile?: string;
}

export class AssetManager {
  constructor(private readonly opts: AssetManagerOptions) {}

  async prepare(assets: Asset[], _entity: Entity): Promise<AssetEnv> {
    const out: AssetEnv = { env: {}, path: [], libraryPath: [], includePath: [] };
    if (assets.length === 0) return out;
    if (this.opts.disabled) throw new AssetError(`assets are disabled on this agent (requested: ${assets.map((a) => a.metadata.name ?? '?').join(', ')})`);
    throw new AssetError('assets are not implemented yet');
  }
}

/** The environment for a command: asset dirs in front of the inherited search paths, plus <NAME>_PATH. */
export function applyAssetEnv(base: NodeJS.ProcessEnv, a: AssetEnv): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = { ...base, ...a.env };
  const prepend = (name: string, dirs: string[]) => {
    if (dirs.length === 0) return;
    env[name] = [...dirs, ...(base[name] ? [base[name] as string] : [])].join(':');
  };
  prepend('PATH', a.path);
  prepend('LD_LIBRARY_PATH', a.libraryPath);
  prepend('CPATH', a.includePath);
  return env;
}
