import { readFileSync } from 'node:fs';
import { Command, Option } from 'commander';
import type { ApiClient } from '../client/api-client.ts';
import { ApiError } from '../client/errors.ts';
import type { CliDeps } from '../deps.ts';
import { CliError, usageError } from '../errors.ts';
import { printItem, printList } from '../output/printer.ts';
import { parseFieldValue, placeName, readInput, resourceFromText, setPath } from '../resources/body.ts';
import { collectionPath, itemPath } from '../resources/lookup.ts';
import { printableOf } from '../resources/printable.ts';
import { RESOURCE_TYPES } from '../resources/table.ts';
import type { ResourceType } from '../resources/types.ts';
import { confirmByName } from './prompts.ts';
import { positiveInt, type CommandGroup } from './registry.ts';

// One command per resource type (`check`, alias `checks`) with the generic subcommands list, info,
// create, update and delete (docs/cli.md#resources). Commands of other modules add their own
// subcommands to these groups (`groupCommand(program, 'check')`).

type Item = Record<string, unknown>;

/** `check "web" in namespace "default"`, for messages. */
function subject(t: ResourceType, key: string[], ns: string): string {
  const where = t.namespaced ? ` in namespace "${ns}"` : '';
  return `${t.singular} "${key.join('/')}"${where}`;
}

/** An ApiError told about the resource; other errors as they are. */
function about(err: unknown, what: string): unknown {
  return err instanceof ApiError ? err.about(what) : err;
}

async function listItems(
  client: ApiClient,
  t: ResourceType,
  ns: string | undefined,
  query: Record<string, string | undefined>,
  chunkSize: number | undefined,
): Promise<Item[]> {
  if (ns !== undefined || !t.namespaced || t.allNamespacesRoute)
    return client.list<Item>(collectionPath(t, ns), { query, chunkSize });
  // No route across namespaces: each namespace the caller may list.
  const namespaces = await client.list<{ name: string }>('/api/core/v2/namespaces', { chunkSize });
  const all: Item[] = [];
  for (const n of namespaces)
    all.push(...(await client.list<Item>(collectionPath(t, n.name), { query, chunkSize })));
  return all;
}

function addList(group: Command, t: ResourceType, deps: CliDeps): void {
  const cmd = group
    .command('list')
    .description(`list ${t.plural}`)
    .option('--chunk-size <n>', 'read the list in pages of n items', positiveInt('--chunk-size'))
    .option('--label-selector <selector>', 'only items whose labels match, e.g. "region == eu"')
    .option('--field-selector <selector>', 'only items whose fields match, e.g. "check.status != 0"')
    .option('--show-labels', 'add a column of labels (tabular)');
  if (t.namespaced) cmd.option('--all-namespaces', 'list across every namespace');
  cmd.action(async (o: Item, c: Command) => {
    const s = deps.settings(c);
    const format = deps.format(c);
    const client = deps.client(c);
    const all = t.namespaced && o.allNamespaces === true;
    const items = await listItems(
      client,
      t,
      all ? undefined : s.namespace,
      {
        labelSelector: o.labelSelector as string | undefined,
        fieldSelector: o.fieldSelector as string | undefined,
      },
      o.chunkSize as number | undefined,
    ).catch((err: unknown) => {
      throw about(err, `list ${t.plural}${t.namespaced && !all ? ` in namespace "${s.namespace}"` : ''}`);
    });
    printList(deps.out, format, printableOf(t), items, {
      showLabels: o.showLabels === true,
      namespaceColumn: all,
    });
  });
}

function addInfo(group: Command, t: ResourceType, deps: CliDeps): void {
  const cmd = group
    .command('info')
    .description(`show one ${t.singular}`)
    .option('--show-labels', 'add its labels (tabular)');
  for (const a of t.keyArgs) cmd.argument(`<${a.toLowerCase()}>`);
  cmd.action(async (...args: unknown[]) => {
    const key = args.slice(0, t.keyArgs.length) as string[];
    const c = args[t.keyArgs.length + 1] as Command;
    const o = c.opts<Item>();
    const s = deps.settings(c);
    const format = deps.format(c);
    const item = await deps
      .client(c)
      .get<Item>(itemPath(t, s.namespace, key))
      .catch((err: unknown) => {
        throw about(err, subject(t, key, s.namespace));
      });
    printItem(deps.out, format, printableOf(t), item, { showLabels: o.showLabels === true });
  });
}

/** Options of field flags on a command; labels may repeat. */
function addFieldFlags(cmd: Command, t: ResourceType): void {
  for (const f of t.fieldFlags) {
    const opt = new Option(f.flags, f.description);
    if (f.parse === 'labels') opt.argParser((v: string, prev: string[] | undefined) => [...(prev ?? []), v]);
    cmd.addOption(opt);
  }
}

/** The fields the flags of this run set, as a partial body. */
function fieldsOf(t: ResourceType, o: Item): Item | undefined {
  const body: Item = {};
  let any = false;
  for (const f of t.fieldFlags) {
    const raw = o[new Option(f.flags).attributeName()];
    if (raw === undefined) continue;
    setPath(body, f.field, parseFieldValue(f, raw as string | string[]));
    any = true;
  }
  return any ? body : undefined;
}

function merge(base: Item, fields: Item | undefined): Item {
  if (!fields) return base;
  const out = { ...base };
  for (const [k, v] of Object.entries(fields)) setPath(out, k, v);
  return out;
}

function addCreate(group: Command, t: ResourceType, deps: CliDeps): void {
  const method = t.writes.create;
  if (!method) return;
  const cmd = group
    .command('create')
    .description(
      `create a ${t.singular} from a file${t.fieldFlags.length ? ' or flags' : ''} (it must not exist)`,
    )
    .option('-f, --file <path>', 'one resource in JSON or YAML, flat or wrapped ("-" reads stdin)');
  for (const a of t.keyArgs) cmd.argument(`<${a.toLowerCase()}>`);
  addFieldFlags(cmd, t);
  cmd.action(async (...args: unknown[]) => {
    const key = args.slice(0, t.keyArgs.length) as string[];
    const c = args[t.keyArgs.length + 1] as Command;
    const o = c.opts<Item>();
    const s = deps.settings(c);
    const fromFile =
      typeof o.file === 'string' ? resourceFromText(t, readInput(o.file, stdinText(deps)), o.file) : {};
    const body = placeName(t, merge(fromFile, fieldsOf(t, o)), key);
    const client = deps.client(c);
    const what = subject(t, key, s.namespace);
    try {
      if (method === 'post') await client.post(collectionPath(t, s.namespace), body);
      else if (method === 'post-item') await client.post(itemPath(t, s.namespace, key), body);
      else {
        // Only PUT exists: look first, so create never replaces.
        const exists = await client.get(itemPath(t, s.namespace, key)).then(
          () => true,
          (err: unknown) => {
            if (err instanceof CliError && err.kind === 'not_found') return false;
            throw err;
          },
        );
        if (exists) throw new CliError('failure', `${what}: already exists (use update)`);
        await client.put(itemPath(t, s.namespace, key), body);
      }
    } catch (err) {
      throw about(err, what);
    }
    deps.out.write(`Created ${what}\n`);
  });
}

function addUpdate(group: Command, t: ResourceType, deps: CliDeps): void {
  if (!t.writes.replace && !t.writes.patch) return;
  const cmd = group
    .command('update')
    .description(
      `replace a ${t.singular} with a file (created when missing)${t.fieldFlags.length ? ', or change the fields of flags' : ''}`,
    )
    .option('-f, --file <path>', 'the whole resource in JSON or YAML ("-" reads stdin)');
  for (const a of t.keyArgs) cmd.argument(`<${a.toLowerCase()}>`);
  addFieldFlags(cmd, t);
  cmd.action(async (...args: unknown[]) => {
    const key = args.slice(0, t.keyArgs.length) as string[];
    const c = args[t.keyArgs.length + 1] as Command;
    const o = c.opts<Item>();
    const s = deps.settings(c);
    const fields = fieldsOf(t, o);
    if (typeof o.file !== 'string' && !fields)
      throw usageError(
        `${t.singular} update: give --file${t.fieldFlags.length ? ' or flags of the fields to change' : ''}`,
      );
    const client = deps.client(c);
    const path = itemPath(t, s.namespace, key);
    const what = subject(t, key, s.namespace);
    try {
      if (typeof o.file === 'string') {
        const body = placeName(
          t,
          merge(resourceFromText(t, readInput(o.file, stdinText(deps)), o.file), fields),
          key,
        );
        if (t.writes.replace) await client.put(path, body);
        else await client.patch(path, body);
      } else if (t.writes.patch) {
        await client.patch(path, fields);
      } else {
        const current = await client.get<Item>(path);
        await client.put(path, merge(current, fields));
      }
    } catch (err) {
      throw about(err, what);
    }
    deps.out.write(`Updated ${what}\n`);
  });
}

function addDelete(group: Command, t: ResourceType, deps: CliDeps): void {
  if (!t.writes.delete) return;
  const verb = t.singular === 'user' ? 'disable' : 'delete';
  const cmd = group
    .command('delete')
    .description(`${verb} a ${t.singular}`)
    .option('--skip-confirm', 'do not ask for confirmation');
  for (const a of t.keyArgs) cmd.argument(`<${a.toLowerCase()}>`);
  cmd.action(async (...args: unknown[]) => {
    const key = args.slice(0, t.keyArgs.length) as string[];
    const c = args[t.keyArgs.length + 1] as Command;
    const o = c.opts<Item>();
    const s = deps.settings(c);
    const what = subject(t, key, s.namespace);
    if (o.skipConfirm !== true) {
      if (!deps.interactive())
        throw usageError(
          `${t.singular} delete: not a terminal, so nothing can be confirmed: add --skip-confirm`,
        );
      if (!(await confirmByName(deps, `${verb} ${what}`, key.join('/')))) {
        deps.out.write('Canceled: nothing changed\n');
        return;
      }
    }
    await deps
      .client(c)
      .delete(itemPath(t, s.namespace, key))
      .catch((err: unknown) => {
        throw about(err, what);
      });
    deps.out.write(`${verb === 'disable' ? 'Disabled' : 'Deleted'} ${what}\n`);
  });
}

/** stdin read whole, for `--file -`. */
function stdinText(deps: CliDeps): () => string {
  return () => {
    if (deps.io.stdin.isTTY) throw usageError('--file -: stdin is a terminal; pipe the resource in');
    return readStdinSync();
  };
}

/** fd 0 read synchronously: the resource is small and nothing else reads stdin meanwhile. */
const readStdinSync = () => readFileSync(0, 'utf8');

export const resourceCommands: CommandGroup = {
  register(program, deps) {
    for (const t of RESOURCE_TYPES) {
      const group = program
        .command(t.singular)
        .aliases([...new Set([t.plural, ...t.aliases].filter((a) => a !== t.singular))])
        .description(
          `${t.description} (${t.apiVersion}.${[t.type, ...t.otherTypes].join('|')}${t.namespaced ? ', namespaced' : ''})`,
        )
        .usage(`<command> [options]`);
      addList(group, t, deps);
      addInfo(group, t, deps);
      addCreate(group, t, deps);
      addUpdate(group, t, deps);
      addDelete(group, t, deps);
    }
  },
};
