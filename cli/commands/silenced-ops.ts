import { readFileSync } from 'node:fs';
import type { Command } from 'commander';
import type { CliDeps } from '../deps.ts';
import { usageError } from '../errors.ts';
import { readInput, resourceFromText } from '../resources/body.ts';
import { collectionPath, itemPath, requireType } from '../resources/lookup.ts';
import { about, dropSubcommand, parseBegin, parseExpire } from './ops-input.ts';
import { ask } from './prompts.ts';
import { groupCommand, type CommandGroup } from './registry.ts';

// `silenced create` and `silenced update` by flags (docs/cli.md#silencing), in place of the generic
// ones: an entry is named by its subscription and check, `subscription:check` with `*` for the part
// not given, as the API derives it. list, info and delete stay the generic ones.

type Item = Record<string, unknown>;

interface SilencedFlags {
  subscription?: string;
  check?: string;
  expire?: string;
  expireOnResolve?: boolean;
  begin?: string;
  reason?: string;
  file?: string;
}

/** The name the API gives an entry: `subscription:check`, `*` for a missing part. */
export const silencedName = (subscription: string | undefined, check: string | undefined): string =>
  `${subscription || '*'}:${check || '*'}`;

/** The fields the flags set (subscription and check only on create: they make the name). */
export function silencedFields(o: SilencedFlags, nowMs: number, withTarget: boolean): Item {
  const body: Item = {};
  if (withTarget && o.subscription) body.subscription = o.subscription;
  if (withTarget && o.check) body.check = o.check;
  if (o.begin !== undefined) body.begin = parseBegin(o.begin, nowMs);
  if (o.expire !== undefined) body.expire = parseExpire(o.expire);
  if (o.expireOnResolve !== undefined) body.expire_on_resolve = o.expireOnResolve;
  if (o.reason !== undefined) body.reason = o.reason;
  return body;
}

/** On a terminal, the questions for what the flags left out. */
async function askMissing(deps: CliDeps, o: SilencedFlags): Promise<SilencedFlags> {
  const text = (message: string, def = '', validate?: (v: string) => true | string) =>
    ask(deps, (p, ctx) => p.input({ message, default: def, ...(validate ? { validate } : {}) }, ctx));
  const valid = (fn: (v: string) => unknown) => (v: string) => {
    if (v.trim() === '') return true;
    try {
      fn(v);
      return true;
    } catch (err) {
      return (err as Error).message;
    }
  };
  const r: SilencedFlags = { ...o };
  r.subscription ??= (await text('Subscription (empty: every subscription):')).trim() || undefined;
  r.check ??= (await text('Check (empty: every check):')).trim() || undefined;
  if (!r.subscription && !r.check) throw usageError('silenced create: give a subscription or a check');
  r.begin ??=
    (
      await text(
        'Begin (now, +1h, or RFC 3339):',
        'now',
        valid((v) => parseBegin(v, Date.now())),
      )
    ).trim() || undefined;
  r.expire ??=
    (await text('Expire after (seconds or 1h; empty: never):', '', valid(parseExpire))).trim() || undefined;
  r.expireOnResolve ??= await ask(deps, (p, ctx) =>
    p.confirm({ message: 'Expire when the event resolves?', default: false }, ctx),
  );
  r.reason ??= (await text('Reason:')).trim() || undefined;
  return r;
}

function addTimeFlags(cmd: Command): Command {
  return cmd
    .option('--expire <seconds>', 'seconds (or 30m, 1h, 1d) after --begin when it ends; default never')
    .option('--expire-on-resolve', 'end it when the silenced event resolves')
    .option('--begin <time>', 'when it starts: now (default), +1h, +30m, or RFC 3339 (2030-05-01T12:00:00Z)')
    .option('--reason <text>', 'why');
}

export const silencedOpsCommands: CommandGroup = {
  register(program, deps) {
    const t = requireType('silenced');
    const group = groupCommand(program, 'silenced');
    dropSubcommand(group, 'create');
    dropSubcommand(group, 'update');

    addTimeFlags(
      group
        .command('create')
        .description('silence a subscription, a check, or a check on a subscription (asked on a terminal)')
        .option('--subscription <name>', 'the subscription (entity:NAME for one entity); empty: all')
        .option('--check <name>', 'the check; empty: all'),
    )
      .option('-f, --file <path>', 'an entry in JSON or YAML ("-" reads stdin); flags override its fields')
      .option('-n, --non-interactive', 'ask nothing, even on a terminal')
      .action(async (o: SilencedFlags & { nonInteractive?: boolean }, c: Command) => {
        const s = deps.settings(c);
        const fromFile =
          typeof o.file === 'string'
            ? resourceFromText(
                t,
                readInput(o.file, () => readFileSync(0, 'utf8')),
                o.file,
              )
            : {};
        let flags: SilencedFlags = o;
        const target = {
          subscription: o.subscription ?? (fromFile.subscription as string | undefined),
          check: o.check ?? (fromFile.check as string | undefined),
        };
        if (!target.subscription && !target.check) {
          if (o.nonInteractive || !deps.interactive())
            throw usageError('silenced create: give --subscription, --check or both');
          flags = await askMissing(deps, o);
        }
        const body = { ...fromFile, ...silencedFields(flags, Date.now(), true) };
        const name = silencedName(body.subscription as string, body.check as string);
        const what = `silenced "${name}" in namespace "${s.namespace}"`;
        await deps
          .client(c)
          .post(collectionPath(t, s.namespace), body)
          .catch((err: unknown) => {
            throw about(err, what);
          });
        deps.out.write(`Created ${what}\n`);
      });

    addTimeFlags(
      group
        .command('update')
        .description('change the begin, expiry or reason of an entry (its name stays: subscription:check)')
        .argument('<name>'),
    )
      .option('--no-expire-on-resolve', 'no longer end it when the event resolves')
      .option('--no-expire', 'never end it')
      .action(
        async (name: string, o: Omit<SilencedFlags, 'expire'> & { expire?: string | false }, c: Command) => {
          const s = deps.settings(c);
          const never = o.expire === false;
          const expire = typeof o.expire === 'string' ? o.expire : undefined;
          const fields = silencedFields({ ...o, expire }, Date.now(), false);
          if (never) fields.expire = -1;
          if (Object.keys(fields).length === 0)
            throw usageError(
              'silenced update: give --begin, --expire, --no-expire, --[no-]expire-on-resolve or --reason',
            );
          const what = `silenced "${name}" in namespace "${s.namespace}"`;
          await deps
            .client(c)
            .patch(itemPath(t, s.namespace, [name]), fields)
            .catch((err: unknown) => {
              throw about(err, what);
            });
          deps.out.write(`Updated ${what}\n`);
        },
      );
  },
};
