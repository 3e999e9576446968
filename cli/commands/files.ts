import { spawnSync } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { Command } from 'commander';
import { stringify as yamlStringify } from 'yaml';
import type { ApiClient } from '../client/api-client.ts';
import { ApiError } from '../client/errors.ts';
import type { CliDeps } from '../deps.ts';
import { CliError, usageError } from '../errors.ts';
import {
  MANAGED_LABEL,
  MANAGED_VALUE,
  documentsOf,
  isProblem,
  resourceOf,
  subjectOf,
  type FileProblem,
  type FileResource,
} from '../files/documents.ts';
import { readSources } from '../files/inputs.ts';
import { sameResource } from '../files/normalize.ts';
import { progressOn } from '../output/progress.ts';
import { collectionPath, itemPath, requireType } from '../resources/lookup.ts';
import type { ResourceType } from '../resources/types.ts';
import { wrap } from '../resources/wrap.ts';
import type { CommandGroup } from './registry.ts';

// create -f, delete -f, prune and edit (docs/cli.md#files): many resources from files, directories,
// URLs or stdin, each written at its own path; every failure one line naming where it came from, and
// always a summary line.

type Item = Record<string, unknown>;

interface FileOptions {
  file: string[];
  recursive?: boolean;
  dryRun?: boolean;
  strict?: boolean;
  allNamespaces?: boolean;
}

const collect = (v: string, prev: string[] | undefined) => [...(prev ?? []), v];

function fileOptions(cmd: Command, verb: string): Command {
  return cmd
    .requiredOption(
      '-f, --file <path>',
      `a file, directory, http(s) URL or "-" (stdin) of resources to ${verb} (repeat for several)`,
      collect,
    )
    .option('-r, --recursive', 'read the subdirectories of directories too');
}

/** stdin read whole. */
function stdinOf(deps: CliDeps): () => string {
  return () => {
    if (deps.io.stdin.isTTY) throw usageError('--file -: stdin is a terminal; pipe the resources in');
    return readFileSync(0, 'utf8');
  };
}

/** The resources of the `-f` inputs, in order, and the documents that are not resources. */
async function loadResources(
  deps: CliDeps,
  c: Command,
  o: FileOptions,
  mark: boolean,
): Promise<{ resources: FileResource[]; problems: FileProblem[] }> {
  const s = deps.settings(c);
  const sources = await readSources(o.file, {
    recursive: o.recursive === true,
    stdin: stdinOf(deps),
    timeoutMs: s.timeoutMs,
  });
  const resources: FileResource[] = [];
  const problems: FileProblem[] = [];
  for (const src of sources)
    for (const doc of documentsOf(src.name, src.text)) {
      const r = resourceOf(doc, { namespace: s.namespace, mark });
      if (isProblem(r)) problems.push(r);
      else resources.push(r);
    }
  return { resources, problems };
}

const where = (x: { source: string; index: number }) => `${x.source}#${x.index}`;

function reportProblem(deps: CliDeps, p: FileProblem): void {
  deps.io.stderr.write(`Error: ${where(p)}: ${p.what}: ${p.message}\n`);
}

function reportFailure(deps: CliDeps, r: FileResource, message: string): void {
  deps.io.stderr.write(
    `Error: ${where(r)}: ${r.type.type} ${subjectOf(r).replace(/^\S+ /, '')}: ${message}\n`,
  );
}

const messageOf = (err: unknown) =>
  err instanceof ApiError ? err.serverMessage : err instanceof Error ? err.message : String(err);

/** The item at `path`, or undefined when there is none (404). */
async function current(client: ApiClient, path: string): Promise<Item | undefined> {
  try {
    return await client.get<Item>(path);
  } catch (err) {
    if (err instanceof CliError && err.kind === 'not_found') return undefined;
    throw err;
  }
}

/** The end of a command that went on past failures: exit 2 when all were bad input, else 5. */
function failIfAny(problems: number, failed: number): void {
  if (problems + failed === 0) return;
  throw new CliError(
    failed === 0 ? 'usage' : 'failure',
    `${problems + failed} resource${problems + failed === 1 ? '' : 's'} failed`,
  );
}

const USER_HINT =
  ' (the API never shows password hashes, so a dumped user has none: add "password" to its spec to restore it)';

async function createFiles(deps: CliDeps, c: Command, o: FileOptions): Promise<void> {
  const { resources, problems } = await loadResources(deps, c, o, true);
  const client = deps.client(c);
  const count = { created: 0, updated: 0, unchanged: 0, failed: 0 };
  for (const p of problems) reportProblem(deps, p);
  const bar = progressOn(deps.io.stderr, o.dryRun ? 'checking' : 'creating');
  bar.start(resources.length);
  for (const r of resources) {
    bar.tick();
    const what = subjectOf(r);
    try {
      if (!r.type.writes.replace)
        throw new Error(`${r.type.plural} cannot be written from files (the backend makes them)`);
      const now = await current(client, r.path);
      if (now !== undefined && sameResource(r.body, now)) {
        count.unchanged++;
        deps.out.write(`${o.dryRun ? 'Would leave unchanged' : 'Unchanged'} ${what}\n`);
        continue;
      }
      if (!o.dryRun) await client.put(r.path, r.body);
      count[now === undefined ? 'created' : 'updated']++;
      const verb = now === undefined ? 'create' : 'update';
      deps.out.write(
        `${o.dryRun ? `Would ${verb}` : `${verb[0]!.toUpperCase()}${verb.slice(1)}d`} ${what}\n`,
      );
    } catch (err) {
      count.failed++;
      const hint =
        r.type.singular === 'user' && r.body.password === undefined && r.body.password_hash === undefined;
      reportFailure(deps, r, messageOf(err) + (hint && /password/.test(messageOf(err)) ? USER_HINT : ''));
    }
  }
  bar.stop();
  deps.out.write(
    `${o.dryRun ? 'dry run (nothing written): ' : ''}created ${count.created}, updated ${count.updated}, ` +
      `unchanged ${count.unchanged}, failed ${count.failed + problems.length}\n`,
  );
  failIfAny(problems.length, count.failed);
}

async function deleteFiles(deps: CliDeps, c: Command, o: FileOptions): Promise<void> {
  const { resources, problems } = await loadResources(deps, c, o, false);
  const client = deps.client(c);
  const count = { deleted: 0, notFound: 0, failed: 0 };
  for (const p of problems) reportProblem(deps, p);
  const bar = progressOn(deps.io.stderr, 'deleting');
  bar.start(resources.length);
  // In reverse: what depends on others (checks in a namespace) goes before them.
  for (const r of [...resources].reverse()) {
    bar.tick();
    const what = subjectOf(r);
    try {
      if (!r.type.writes.delete) throw new Error(`${r.type.plural} cannot be deleted`);
      await client.delete(r.path);
      count.deleted++;
      deps.out.write(`${r.type.singular === 'user' ? 'Disabled' : 'Deleted'} ${what}\n`);
    } catch (err) {
      if (err instanceof CliError && err.kind === 'not_found' && !o.strict) {
        count.notFound++;
        deps.out.write(`Not found ${what}\n`);
        continue;
      }
      count.failed++;
      reportFailure(deps, r, messageOf(err));
    }
  }
  bar.stop();
  deps.out.write(
    `deleted ${count.deleted}, not found ${count.notFound}, failed ${count.failed + problems.length}\n`,
  );
  failIfAny(problems.length, count.failed);
}

/** The types prune may take: those whose items carry metadata (and so the managed-by label). */
function prunable(word: string): ResourceType {
  const t = requireType(word);
  if (t.nameField?.startsWith('metadata.') !== true || !t.writes.delete || t.keyArgs.length > 1)
    throw usageError(`prune: ${t.plural} carry no labels, so none is marked as created by monitorctl`);
  return t;
}

async function prune(deps: CliDeps, c: Command, typesArg: string, o: FileOptions): Promise<void> {
  const types = typesArg
    .split(',')
    .map((w) => w.trim())
    .filter(Boolean)
    .map(prunable);
  const s = deps.settings(c);
  const { resources, problems } = await loadResources(deps, c, o, false);
  for (const p of problems) reportProblem(deps, p);
  // With unreadable documents, what they hold is unknown: deleting "what is not in the files" could
  // delete exactly those.
  if (problems.length)
    throw usageError(`prune: ${problems.length} document(s) could not be read; nothing pruned`);
  const keep = new Set(
    resources.map((r) => `${r.type.singular}\u0000${r.namespace ?? ''}\u0000${r.key.join('/')}`),
  );
  const client = deps.client(c);
  const count = { pruned: 0, kept: 0, failed: 0 };
  for (const t of types) {
    const ns = t.namespaced && o.allNamespaces !== true ? s.namespace : undefined;
    const items = await client.list<Item>(collectionPath(t, ns)).catch((err: unknown) => {
      throw err instanceof ApiError ? err.about(`list ${t.plural}`) : err;
    });
    const managed = items.filter((i) => {
      const labels = (i.metadata as Item | undefined)?.labels as Item | undefined;
      return labels?.[MANAGED_LABEL] === MANAGED_VALUE;
    });
    for (const i of managed) {
      const name = t.nameOf(i);
      const namespace = t.namespaced ? String((i.metadata as Item).namespace ?? '') : undefined;
      const what = subjectOf({ type: t, key: [name], namespace });
      if (keep.has(`${t.singular}\u0000${namespace ?? ''}\u0000${name}`)) {
        count.kept++;
        continue;
      }
      try {
        if (!o.dryRun) await client.delete(itemPath(t, namespace ?? '', [name]));
        count.pruned++;
        deps.out.write(`${o.dryRun ? 'Would prune' : 'Pruned'} ${what}\n`);
      } catch (err) {
        count.failed++;
        deps.io.stderr.write(`Error: ${what}: ${messageOf(err)}\n`);
      }
    }
  }
  deps.out.write(
    `${o.dryRun ? 'dry run (nothing deleted): ' : ''}pruned ${count.pruned}, kept ${count.kept}, failed ${count.failed}\n`,
  );
  failIfAny(0, count.failed);
}

/**
 * Runs the editor on `file` as git does: through the shell, since $EDITOR may hold arguments
 * (`code --wait`); the path is a positional argument of the shell ("$@"), never part of its text.
 */
function runEditor(editor: string, file: string): void {
  const r = spawnSync('/bin/sh', ['-c', `${editor} "$@"`, editor, file], { stdio: 'inherit' });
  if (r.error) throw new CliError('failure', `cannot run the editor "${editor}": ${r.error.message}`);
  if (r.status !== 0)
    throw new CliError('failure', `the editor "${editor}" ended with status ${r.status ?? r.signal}`);
}

async function edit(deps: CliDeps, c: Command, typeWord: string, key: string[]): Promise<void> {
  const t = requireType(typeWord);
  if (key.length !== t.keyArgs.length) throw usageError(`edit ${t.singular}: give ${t.keyArgs.join(' ')}`);
  if (!t.writes.replace) throw usageError(`edit: ${t.plural} cannot be replaced`);
  const s = deps.settings(c);
  const asJson = deps.flags(c).format === 'json';
  const client = deps.client(c);
  const path = itemPath(t, s.namespace, key);
  const what = subjectOf({ type: t, key, namespace: t.namespaced ? s.namespace : undefined });
  const item = await client.get<Item>(path).catch((err: unknown) => {
    throw err instanceof ApiError ? err.about(what) : err;
  });
  const wrapped = wrap(t, item);
  const meta = wrapped.metadata as Item | undefined;
  if (meta) delete meta.created_by;
  const before = asJson ? `${JSON.stringify(wrapped, null, 2)}\n` : yamlStringify(wrapped);
  const dir = mkdtempSync(join(tmpdir(), 'monitorctl-edit-'));
  const file = join(
    dir,
    `${t.singular}-${key.join('-').replace(/[^\w.-]/g, '_')}.${asJson ? 'json' : 'yaml'}`,
  );
  writeFileSync(file, before, { mode: 0o600 });
  let keep = false;
  try {
    runEditor(deps.env.VISUAL || deps.env.EDITOR || 'vi', file);
    const after = readFileSync(file, 'utf8');
    if (after === before) {
      deps.out.write(`no changes: ${what}\n`);
      return;
    }
    keep = true;
    const docs = documentsOf(file, after);
    if (docs.length !== 1)
      throw usageError(`${file}: expected one resource, found ${docs.length}; your edit is kept there`);
    const r = resourceOf(docs[0]!, { namespace: s.namespace, mark: false });
    if (isProblem(r)) throw usageError(`${r.message}; your edit is kept in ${file}`);
    if (r.type !== t || r.path !== path)
      throw usageError(`the edited file names ${subjectOf(r)}, not ${what}; your edit is kept in ${file}`);
    if (sameResource(r.body, item)) {
      keep = false;
      deps.out.write(`no changes: ${what}\n`);
      return;
    }
    try {
      await client.put(path, r.body);
    } catch (err) {
      if (err instanceof CliError)
        throw new CliError(err.kind, `${what}: ${messageOf(err)}; your edit is kept in ${file}`);
      throw err;
    }
    keep = false;
    deps.out.write(`Updated ${what}\n`);
  } finally {
    if (!keep) rmSync(dir, { recursive: true, force: true });
  }
}

export const fileCommands: CommandGroup = {
  register(program, deps) {
    fileOptions(
      program
        .command('create')
        .description('create or replace the resources of files, directories, URLs or stdin (PUT each)'),
      'create',
    )
      .option('--dry-run', 'only report what would be created, updated or left unchanged')
      .action((o: FileOptions, c: Command) => createFiles(deps, c, o));
    fileOptions(
      program.command('delete').description('delete the resources of files, directories, URLs or stdin'),
      'delete',
    )
      .option('--strict', 'count a resource that is not there as a failure')
      .action((o: FileOptions, c: Command) => deleteFiles(deps, c, o));
    fileOptions(
      program
        .command('prune')
        .argument('<types>', 'comma-separated types, e.g. checks,handlers')
        .description('delete the resources of these types that create -f made and the files no longer hold'),
      'keep',
    )
      .option('--dry-run', 'only report what would be deleted')
      .option('--all-namespaces', 'prune in every namespace, not only the current one')
      .action((types: string, o: FileOptions, c: Command) => prune(deps, c, types, o));
    program
      .command('edit')
      .argument('<type>', 'the resource type')
      .argument('<name...>', 'its name (events: ENTITY CHECK)')
      .description(
        'edit a resource in $VISUAL or $EDITOR (yaml, or --format json) and replace it when changed',
      )
      .action((type: string, name: string[], _o: unknown, c: Command) => edit(deps, c, type, name));
  },
};
