import type { Printable } from '../output/printer.ts';
import type { ResourceType } from './types.ts';
import { wrap } from './wrap.ts';

type Item = Record<string, unknown>;

/** How items of `t` print: the type's columns, and its wrapped form. */
export const printableOf = (t: ResourceType): Printable<Item> => ({
  columns: t.columns,
  wrap: (item) => wrap(t, item),
});
