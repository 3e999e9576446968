import type { Command } from 'commander';
import { API_PREFIXES } from '../../proto/api.ts';
import { printList, type Printable } from '../output/printer.ts';
import { requireType } from '../resources/lookup.ts';
import { RESOURCE_TYPES } from '../resources/table.ts';
import type { ResourceType } from '../resources/types.ts';
import type { CommandGroup } from './registry.ts';

// `monitorctl describe-type all|TYPE...`: the resource table, as a table or as data.

const describe = (t: ResourceType) => ({
  fully_qualified_name: `${t.apiVersion}.${t.type}`,
  name: t.plural,
  singular: t.singular,
  short_names: [...t.aliases, ...t.shortNames],
  api_version: t.apiVersion,
  type: [t.type, ...t.otherTypes].join(', '),
  namespaced: t.namespaced,
  path: `${API_PREFIXES[t.apiVersion]}/${t.namespaced ? 'namespaces/{namespace}/' : ''}${t.segment}`,
});
type Described = ReturnType<typeof describe>;

const printable: Printable<Described> = {
  columns: [
    { header: 'Fully Qualified Name', value: (d) => d.fully_qualified_name },
    { header: 'Name', value: (d) => [...new Set([d.singular, d.name])].join(', ') },
    { header: 'Short Names', value: (d) => d.short_names.join(',') },
    { header: 'API Version', value: (d) => d.api_version },
    { header: 'Type', value: (d) => d.type },
    { header: 'Namespaced', value: (d) => String(d.namespaced) },
  ],
  wrap: (d) => d,
};

export const describeTypeCommand: CommandGroup = {
  register(program, deps) {
    program
      .command('describe-type')
      .argument('<types...>', '"all", or resource names (check, checks, core/v2.CheckConfig)')
      .description('describe resource types: names, API version, wrapped type, whether namespaced')
      .action((types: string[], _o: unknown, cmd: Command) => {
        const chosen = types.includes('all')
          ? RESOURCE_TYPES
          : types.map((w) => {
              const fq = RESOURCE_TYPES.find((t) => `${t.apiVersion}.${t.type}` === w);
              return fq ?? requireType(w);
            });
        printList(deps.out, deps.format(cmd), printable, [...new Set(chosen)].map(describe));
      });
  },
};
