import { writeFileSync } from 'node:fs';
import type { Command } from 'commander';
import { stringify as yamlStringify } from 'yaml';
import { ApiError } from '../client/errors.ts';
import type { CliDeps } from '../deps.ts';
import { usageError } from '../errors.ts';
import { dumpForm } from '../files/normalize.ts';
import { progressOn } from '../output/progress.ts';
import { collectionPath, requireType } from '../resources/lookup.ts';
import type { ResourceType } from '../resources/types.ts';
import { wrap } from '../resources/wrap.ts';
import type { CommandGroup } from './registry.ts';

// dump (docs/cli.md#dump): the configuration of a cluster as wrapped resources that `create -f`
// restores, in the order a restore needs (namespaces first, then cluster-wide RBAC, users and
// authentication providers, then each namespace's kinds, what is referred to before what refers to
// it), sorted within each kind, without what the server sets (created_by), so two dumps of the same
// cluster are the same bytes.

type Item = Record<string, unknown>;

/** The kinds of `dump all`, in restore order. Entities and events are state: only when named. */
const DUMP_ALL = [
  'namespaces',
  'cluster-roles',
  'cluster-role-bindings',
  'users',
  'auth-providers',
  'roles',
  'role-bindings',
  'assets',
  'hooks',
  'filters',
  'mutators',
  'handlers',
  'pipelines',
  'checks',
  'silenced',
] as const;
const NAMED_ONLY = ['entities', 'events'];
const ORDER = [...DUMP_ALL, ...NAMED_ONLY].map((w) => requireType(w));

interface DumpOptions {
  file?: string;
  allNamespaces?: boolean;
  omit?: string;
  includeSecrets?: boolean;
}

const words = (s: string | undefined) =>
  (s ?? '')
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean);

/** The kinds `what` names (`all`, or types), in restore order, less those of --omit. */
export function dumpTypes(what: string, omit: string | undefined): ResourceType[] {
  const omitted = new Set(words(omit).map((w) => requireType(w)));
  const named =
    what === 'all'
      ? DUMP_ALL.map((w) => requireType(w))
      : words(what).map((w) => {
          const t = requireType(w);
          if (t.singular === 'api-key')
            throw usageError(
              'dump: API keys are credentials the backend makes; they cannot be restored from a dump',
            );
          return t;
        });
  const set = new Set(named);
  return ORDER.filter((t) => set.has(t) && !omitted.has(t));
}

/** Secrets of authentication providers (binding passwords, OIDC client secrets), removed by default. */
function withoutSecrets(t: ResourceType, w: Item): Item {
  if (t.singular !== 'auth-provider') return w;
  const spec = { ...(w.spec as Item) };
  delete spec.client_secret;
  const strip = (srv: Item) => {
    if (!srv || typeof srv !== 'object' || !srv.binding) return srv;
    const { password: _p, ...binding } = srv.binding as Item;
    return { ...srv, binding };
  };
  if (Array.isArray(spec.servers)) spec.servers = (spec.servers as Item[]).map(strip);
  if (spec.server && typeof spec.server === 'object') spec.server = strip(spec.server as Item);
  return { ...w, spec };
}

const nsOf = (w: Item) => String((w.metadata as Item | undefined)?.namespace ?? '');

function render(format: string, items: Item[]): string {
  if (format === 'json') return `${JSON.stringify(items, null, 2)}\n`;
  if (format === 'wrapped-json') return items.map((i) => `${JSON.stringify(i, null, 2)}\n`).join('');
  return items.map((i) => yamlStringify(i)).join('---\n');
}

async function dump(deps: CliDeps, c: Command, what: string, o: DumpOptions): Promise<void> {
  const format = deps.flags(c).format ?? 'yaml';
  if (!['yaml', 'json', 'wrapped-json'].includes(format))
    throw usageError(`dump: --format must be yaml, json or wrapped-json, not "${format}"`);
  const types = dumpTypes(what, o.omit);
  const s = deps.settings(c);
  const client = deps.client(c);
  const bar = progressOn(deps.io.stderr, 'dumping');
  bar.start(types.length);
  const out: Item[] = [];
  for (const t of types) {
    bar.tick();
    const ns = t.namespaced && o.allNamespaces !== true ? s.namespace : undefined;
    // Users' password hashes and OIDC client secrets come only when asked for, and only to whoever
    // may set them anyway.
    const secretful = t.singular === 'user' || t.singular === 'auth-provider';
    const query = o.includeSecrets && secretful ? { include_secrets: 'true' } : undefined;
    let items = await client.list<Item>(collectionPath(t, ns), { query }).catch((err: unknown) => {
      throw err instanceof ApiError ? err.about(`list ${t.plural}`) : err;
    });
    // Without --all-namespaces, only the current namespace itself.
    if (t.singular === 'namespace' && o.allNamespaces !== true)
      items = items.filter((i) => t.nameOf(i) === s.namespace);
    const wrapped = items
      .map((i) => dumpForm(wrap(t, i)))
      .map((w) => (o.includeSecrets ? w : withoutSecrets(t, w)))
      .map((w, k) => ({ w, ns: nsOf(w), name: t.nameOf(items[k]!) }))
      .sort((a, b) =>
        a.ns === b.ns ? (a.name < b.name ? -1 : a.name > b.name ? 1 : 0) : a.ns < b.ns ? -1 : 1,
      );
    out.push(...wrapped.map((x) => x.w));
  }
  bar.stop();
  const text = render(format, out);
  if (o.file) {
    writeFileSync(o.file, text, { mode: 0o600 });
    deps.io.stderr.write(`dumped ${out.length} resource${out.length === 1 ? '' : 's'} to ${o.file}\n`);
  } else deps.out.write(text);
}

export const dumpCommand: CommandGroup = {
  register(program, deps) {
    program
      .command('dump')
      .argument('<types>', '"all" (the configuration), or comma-separated types')
      .description('write the resources of a cluster as wrapped YAML or JSON that create -f restores')
      .option('-f, --file <path>', 'write to this file (mode 0600) rather than stdout')
      .option('--all-namespaces', 'every namespace, not only the current one')
      .option('--omit <types>', 'comma-separated types to leave out')
      .option(
        '--include-secrets',
        "keep users' password hashes and authentication providers' binding passwords and client secrets",
      )
      .addHelpText(
        'after',
        '\n--format yaml (default), json (one array) or wrapped-json (one object after another).',
      )
      .action((what: string, o: DumpOptions, c: Command) => dump(deps, c, what, o));
  },
};
