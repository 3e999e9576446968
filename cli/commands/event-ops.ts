import type { Command } from 'commander';
import { usageError } from '../errors.ts';
import { printItem } from '../output/printer.ts';
import { itemPath, requireType } from '../resources/lookup.ts';
import { about, commaList } from './ops-input.ts';
import { groupCommand, type CommandGroup } from './registry.ts';

// `event resolve ENTITY CHECK` and `check execute NAME` (docs/cli.md#events-and-check-execution).
// The generic list, info and delete of events come from cli/commands/resources.ts.

type Item = Record<string, unknown>;

/** The output a resolved event carries, as sensuctl's own with our name. */
export const RESOLVED_OUTPUT = 'Resolved manually by monitorctl';

/** The event as resolved by hand: status 0, the output above, executed now (a new result). */
export function resolvedEvent(event: Item, nowMs: number): Item {
  const now = Math.floor(nowMs / 1000);
  const check = (event.check ?? {}) as Item;
  return { ...event, timestamp: now, check: { ...check, status: 0, output: RESOLVED_OUTPUT, executed: now } };
}

export const eventOpsCommands: CommandGroup = {
  register(program, deps) {
    const events = requireType('event');
    groupCommand(program, 'event')
      .command('resolve')
      .description('resolve an event by hand: its check status set to 0 (a new result, as from the agent)')
      .argument('<entity>')
      .argument('<check>')
      .action(async (entity: string, check: string, _o: Item, c: Command) => {
        const s = deps.settings(c);
        const client = deps.client(c);
        const path = itemPath(events, s.namespace, [entity, check]);
        const what = `event "${entity}/${check}" in namespace "${s.namespace}"`;
        try {
          const event = await client.get<Item>(path);
          await client.put(path, resolvedEvent(event, Date.now()));
        } catch (err) {
          throw about(err, what);
        }
        deps.out.write(`Resolved ${what}\n`);
      });

    const checks = requireType('check');
    groupCommand(program, 'check')
      .command('execute')
      .description('run a check now on the agents of its subscriptions (or of --subscriptions)')
      .argument('<name>')
      .option('--subscriptions <list>', "comma-separated subscriptions to run it on instead of the check's")
      .option('--reason <text>', 'why it is run (kept with the request)')
      .action(async (name: string, o: { subscriptions?: string; reason?: string }, c: Command) => {
        const s = deps.settings(c);
        const format = deps.format(c);
        const subscriptions = o.subscriptions !== undefined ? commaList(o.subscriptions) : undefined;
        if (o.subscriptions !== undefined && subscriptions?.length === 0)
          throw usageError('--subscriptions: the list is empty');
        const request: Item = {
          check: name,
          ...(subscriptions ? { subscriptions } : {}),
          ...(o.reason !== undefined ? { reason: o.reason } : {}),
        };
        const what = `check "${name}" in namespace "${s.namespace}"`;
        const res = await deps
          .client(c)
          .post(`${itemPath(checks, s.namespace, [name])}/execute`, request)
          .catch((err: unknown) => {
            throw about(err, what);
          });
        const issued = (res.body as { issued?: number } | undefined)?.issued;
        const done = { ...request, namespace: s.namespace, ...(issued !== undefined ? { issued } : {}) };
        if (format.kind === 'tabular') {
          const to = subscriptions ? `subscriptions ${subscriptions.join(',')}` : 'its subscriptions';
          const why = o.reason !== undefined ? `, reason "${o.reason}"` : '';
          deps.out.write(`Requested ${what} on ${to}${why}\n`);
          return;
        }
        printItem(deps.out, format, { columns: [], wrap: (i) => i }, done);
      });
  },
};
