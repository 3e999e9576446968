/**
 * The compiled programs (`make build`, docs/operations.md#compiled-programs): esbuild bundles each
 * entry of bin/ into one ES module of dist/, which the launchers bin/monitor-backend,
 * bin/monitor-agent and bin/monitorctl import, so no program carries a TypeScript transpiler at run time.
 *
 * npm packages stay imports (`packages: 'external'`): some load files by path next to their own code
 * (QuickJS its .wasm), and the production image installs them with npm anyway. The two files the
 * sources read at start-up, package.json (the version) and proto/wire/monitor.proto, are inlined as
 * constants, so dist/ needs nothing of the source tree.
 *
 * Staleness: dist/build-info.json lists every input with its SHA-256; `buildIfStale` rebuilds when
 * one differs, is gone, or an output is missing. The test and bench runners and the test harness
 * call it, so no test or benchmark runs programs older than their sources.
 */
import { createHash } from 'node:crypto';
import { mkdirSync, readdirSync, readFileSync, renameSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, relative, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';
import * as esbuild from 'esbuild';

export const ROOT = resolve(dirname(fileURLToPath(import.meta.url)), '../..');
export const DIST = join(ROOT, 'dist');

/** dist/<name>.mjs from bin/<name>.ts. */
const PROGRAMS = ['backend', 'agent', 'monitorctl'] as const;
/**
 * Modules a program starts as threads: dist/<out>.mjs, found by the program beside its own modules
 * (the agent edge thread, docs/architecture.md#the-agent-edge-thread).
 */
const THREADS = [{ in: 'gateway/agents/edge/worker.ts', out: 'agent-edge' }] as const;
const INFO_FILE = join(DIST, 'build-info.json');
/** Read by the build itself, besides what the bundles import. */
const EXTRA_INPUTS = [
  'package.json',
  'proto/wire/monitor.proto',
  'deploy/build/build.ts',
  'node_modules/esbuild/package.json',
];

interface BuildInfo {
  /** Path relative to the root -> SHA-256 (hex) of its content when the build read it. */
  inputs: Record<string, string>;
  outputs: string[];
}

const sha256 = (path: string): string | undefined => {
  try {
    return createHash('sha256')
      .update(readFileSync(join(ROOT, path)))
      .digest('hex');
  } catch {
    return undefined;
  }
};

/** Writes through a temporary name and a rename, so a concurrent reader never sees half a file. */
function writeAtomic(path: string, data: string | Uint8Array): void {
  const tmp = `${path}.${process.pid}.tmp`;
  writeFileSync(tmp, data);
  renameSync(tmp, path);
}

/**
 * The packages bundled into the programs rather than imported from node_modules. ws is CommonJS:
 * imported from an ES module, Node first scans its files with its CommonJS lexer, which runs hot
 * enough at start to be optimized, and each of its files is resolved and wrapped on its own; bundled,
 * none of that happens. It cost an idle agent several MB (docs/operations.md#agent-memory). valibot
 * is one ES module of every schema function: bundled, only the functions our schemas use are kept
 * (about 1.5 MB less for an idle agent).
 */
const BUNDLED_PACKAGES = new Set(['ws', 'valibot']);

/** `packages: 'external'` with exceptions: every bare import stays one, but those of `bundled`. */
function packagesExternalBut(bundled: Set<string>): esbuild.Plugin {
  return {
    name: 'packages-external-but',
    setup(b) {
      b.onResolve({ filter: /^[^./]/ }, (args) => {
        const parts = args.path.split('/');
        const name = args.path.startsWith('@') ? parts.slice(0, 2).join('/') : parts[0]!;
        return bundled.has(name) ? undefined : { path: args.path, external: true };
      });
    },
  };
}

/** Bundles every program into dist/ and records its inputs; returns the files written. */
export async function build(): Promise<string[]> {
  const pkg = JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string };
  const proto = readFileSync(join(ROOT, 'proto/wire/monitor.proto'), 'utf8');
  const result = await esbuild.build({
    absWorkingDir: ROOT,
    entryPoints: [...PROGRAMS.map((p) => ({ in: `bin/${p}.ts`, out: p })), ...THREADS],
    outdir: DIST,
    outExtension: { '.js': '.mjs' },
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    plugins: [packagesExternalBut(BUNDLED_PACKAGES)],
    // The bundled CommonJS packages call require(), which an ES module lacks.
    banner: {
      js: "import { createRequire as __monitorRequire } from 'node:module';\nconst require = __monitorRequire(import.meta.url);",
    },
    sourcemap: 'linked',
    // A module imported with import() goes to a chunk of its own, with its packages: otherwise esbuild
    // would hoist their imports to the top of the program and load them at start anyway. Code both
    // programs import statically goes to shared chunks, which each program loads at start.
    splitting: true,
    chunkNames: 'chunks/[name]-[hash]',
    metafile: true,
    write: false,
    logLevel: 'warning',
    // The constants proto/version.ts and proto/wire/codec.ts look for before reading the files.
    define: {
      MONITOR_BUILD_VERSION: JSON.stringify(pkg.version),
      MONITOR_BUILD_PROTO: JSON.stringify(proto),
    },
  });
  const outputs: string[] = [];
  for (const f of result.outputFiles) {
    mkdirSync(dirname(f.path), { recursive: true });
    writeAtomic(f.path, f.contents);
    outputs.push(relative(ROOT, f.path));
  }
  // Chunks of earlier builds (their names carry a hash of their content).
  for (const path of readdirSync(DIST, { recursive: true, encoding: 'utf8' })) {
    const rel = join('dist', path);
    if (/\.mjs(\.map)?$/.test(rel) && !outputs.includes(rel)) rmSync(join(ROOT, rel), { force: true });
  }
  outputs.push(...copyWeb());
  const inputs: Record<string, string> = {};
  for (const path of [...Object.keys(result.metafile.inputs), ...EXTRA_INPUTS, ...webFiles()]) {
    inputs[path] = sha256(path) ?? '';
  }
  const info: BuildInfo = { inputs, outputs };
  writeAtomic(INFO_FILE, `${JSON.stringify(info, null, 2)}\n`);
  return outputs;
}

/**
 * The dashboard's files (web/), as the browser loads them: plain ES modules and styles, copied to
 * dist/web so the compiled backend serves them without the source tree (docs/architecture.md#dashboard).
 */
const webFiles = (): string[] =>
  readdirSync(join(ROOT, 'web'), { recursive: true, encoding: 'utf8' })
    .map((p) => join('web', p))
    .filter((p) => !statSync(join(ROOT, p)).isDirectory() && !p.endsWith('tsconfig.json'))
    .sort();

function copyWeb(): string[] {
  rmSync(join(DIST, 'web'), { recursive: true, force: true });
  return webFiles().map((path) => {
    const out = join('dist', path);
    mkdirSync(dirname(join(ROOT, out)), { recursive: true });
    writeAtomic(join(ROOT, out), readFileSync(join(ROOT, path)));
    return out;
  });
}

/** Why dist/ is not the build of the current sources, or undefined when it is. */
export function staleReason(): string | undefined {
  let info: BuildInfo;
  try {
    info = JSON.parse(readFileSync(INFO_FILE, 'utf8')) as BuildInfo;
  } catch {
    return 'no dist/build-info.json';
  }
  for (const [path, hash] of Object.entries(info.inputs)) {
    if (sha256(path) !== hash) return `${path} changed`;
  }
  for (const path of info.outputs) {
    if (sha256(path) === undefined) return `${path} missing`;
  }
  const added = webFiles().find((path) => !(path in info.inputs));
  if (added) return `${added} added`;
  return undefined;
}

/** Builds when dist/ is missing or older than its sources; returns why it built, or undefined. */
export async function buildIfStale(): Promise<string | undefined> {
  const why = staleReason();
  if (why !== undefined) await build();
  return why;
}
