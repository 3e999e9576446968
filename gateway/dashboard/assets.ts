import { createHash } from 'node:crypto';
import { existsSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, extname, join, relative, sep } from 'node:path';
import { fileURLToPath } from 'node:url';

/** One file the dashboard serves, read once at start (docs/architecture.md#dashboard). */
export interface Asset {
  body: Uint8Array;
  type: string;
  etag: string;
  /** `Cache-Control`: versioned vendor files are immutable, the app's files are revalidated. */
  cache: string;
}

/** The packages the browser imports by bare name, resolved by the page's import map. */
const VENDOR = [
  { specifier: 'preact', pkg: 'preact', file: 'dist/preact.module.js' },
  { specifier: 'preact/hooks', pkg: 'preact', file: 'hooks/dist/hooks.module.js' },
  { specifier: 'htm', pkg: 'htm', file: 'dist/htm.module.js' },
  { specifier: 'htm/preact', pkg: 'htm', file: 'preact/index.module.js' },
  { specifier: '@preact/signals-core', pkg: '@preact/signals-core', file: 'dist/signals-core.module.js' },
  { specifier: '@preact/signals', pkg: '@preact/signals', file: 'dist/signals.module.js' },
] as const;

const TYPES: Record<string, string> = {
  '.js': 'text/javascript; charset=utf-8',
  '.css': 'text/css; charset=utf-8',
  '.svg': 'image/svg+xml',
  '.png': 'image/png',
  '.json': 'application/json; charset=utf-8',
  '.webmanifest': 'application/manifest+json; charset=utf-8',
};

const IMMUTABLE = 'public, max-age=31536000, immutable';
const REVALIDATE = 'no-cache';

const etagOf = (body: Uint8Array) =>
  `"${createHash('sha256').update(body).digest('base64url').slice(0, 27)}"`;

const asset = (body: Uint8Array, type: string, cache: string): Asset => ({
  body,
  type,
  etag: etagOf(body),
  cache,
});

/**
 * Where the dashboard's own files are: beside the compiled program (`dist/web`, copied there by
 * `make build`; this module may sit in `dist/` or in `dist/chunks/`), else the source tree's `web/`
 * (a program run from source by tsx).
 */
function webRoot(): string {
  const here = dirname(fileURLToPath(import.meta.url));
  for (const candidate of [join(here, 'web'), join(here, '..', 'web'), join(here, '..', '..', 'web')]) {
    if (existsSync(join(candidate, 'index.html'))) return candidate;
  }
  throw new Error(`the dashboard's files are missing (looked for web/index.html near ${here})`);
}

/** The folder of an installed package, found along Node's own module search path. */
function packageDir(pkg: string): string {
  const require = createRequire(import.meta.url);
  for (const base of require.resolve.paths(pkg) ?? []) {
    const dir = join(base, pkg);
    if (existsSync(join(dir, 'package.json'))) return dir;
  }
  throw new Error(`the dashboard needs the package ${pkg}, which is not installed`);
}

function* filesUnder(dir: string): Generator<string> {
  for (const name of readdirSync(dir).sort()) {
    const path = join(dir, name);
    if (statSync(path).isDirectory()) yield* filesUnder(path);
    else yield path;
  }
}

export interface DashboardAssets {
  /** URL path (`/static/...`) -> file. */
  files: Map<string, Asset>;
  /** The page every dashboard URL starts from, with its import map. */
  shell: Asset;
  /** The `Content-Security-Policy` of the shell: the import map is allowed by its hash. */
  csp: string;
}

/** Reads the dashboard: the app's files, the vendor modules of the import map, the shell page. */
export function loadDashboardAssets(): DashboardAssets {
  const root = webRoot();
  const files = new Map<string, Asset>();
  for (const path of filesUnder(root)) {
    const type = TYPES[extname(path)];
    if (!type) continue;
    const url = `/static/${relative(root, path).split(sep).join('/')}`;
    files.set(url, asset(readFileSync(path), type, REVALIDATE));
  }
  const imports: Record<string, string> = {};
  for (const v of VENDOR) {
    const dir = packageDir(v.pkg);
    const version = (JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8')) as { version: string })
      .version;
    const url = `/static/vendor/${v.pkg}@${version}/${v.file}`;
    files.set(url, asset(readFileSync(join(dir, v.file)), TYPES['.js']!, IMMUTABLE));
    imports[v.specifier] = url;
  }
  const importMap = JSON.stringify({ imports });
  const template = readFileSync(join(root, 'index.html'), 'utf8');
  const html = template.replace('<!-- import-map -->', `<script type="importmap">${importMap}</script>`);
  const mapHash = createHash('sha256').update(importMap).digest('base64');
  const csp = [
    "default-src 'none'",
    `script-src 'self' 'sha256-${mapHash}'`,
    "style-src 'self'",
    "img-src 'self' data:",
    "connect-src 'self'",
    "manifest-src 'self'",
    "base-uri 'none'",
    "form-action 'none'",
    "frame-ancestors 'none'",
  ].join('; ');
  return { files, shell: asset(new TextEncoder().encode(html), 'text/html; charset=utf-8', REVALIDATE), csp };
}
