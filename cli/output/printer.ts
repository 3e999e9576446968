import { stringify as yamlStringify } from 'yaml';
import { labelsCell, type Column } from './columns.ts';
import type { Format } from './format.ts';
import { compileJsonPath } from './jsonpath.ts';
import { renderTable } from './table.ts';
import { compileTemplate } from './template.ts';

// Writes lists and single items in any format (docs/cli.md#output). What is printed is described
// by a Printable: its table columns and its wrapped form; resources get theirs from the resource
// table (cli/resources/printable.ts), other data (contexts, the type table) bring their own.

type Item = Record<string, unknown>;

/** Where output goes: stdout, and the terminal's width when it is one. */
export interface Out {
  write(text: string): void;
  /** Columns of the terminal; undefined when stdout is not a terminal (tables are not fitted). */
  width: number | undefined;
}

export interface Printable<T = Item> {
  columns: Column<T>[];
  /** The item in the wrapped form (wrapped-json, yaml); data with no such form return it as is. */
  wrap(item: T): unknown;
}

interface ListOptions {
  /** A Labels column (tabular). */
  showLabels?: boolean;
  /** A Namespace column first (tabular), for lists across namespaces. */
  namespaceColumn?: boolean;
}

const namespaceColumn: Column = {
  header: 'Namespace',
  value: (i) => String((i.metadata as Item | undefined)?.namespace ?? ''),
};
const labelsColumn: Column = { header: 'Labels', value: labelsCell };

const json = (x: unknown) => `${JSON.stringify(x, null, 2)}\n`;
const endLine = (s: string) => (s === '' || s.endsWith('\n') ? s : `${s}\n`);

export function printList<T>(
  out: Out,
  format: Format,
  p: Printable<T>,
  items: T[],
  o: ListOptions = {},
): void {
  switch (format.kind) {
    case 'tabular': {
      const cols = [
        ...(o.namespaceColumn ? [namespaceColumn as unknown as Column<T>] : []),
        ...p.columns,
        ...(o.showLabels ? [labelsColumn as unknown as Column<T>] : []),
      ];
      out.write(
        renderTable(
          cols.map((c) => c.header),
          items.map((i) => cols.map((c) => c.value(i))),
          out.width,
        ),
      );
      return;
    }
    case 'json':
      out.write(json(items));
      return;
    case 'wrapped-json':
      out.write(items.map((i) => json(p.wrap(i))).join(''));
      return;
    case 'yaml':
      out.write(items.map((i) => yamlStringify(p.wrap(i))).join('---\n'));
      return;
    case 'template': {
      const t = compileTemplate(format.text);
      out.write(items.map((i) => endLine(t(i))).join(''));
      return;
    }
    case 'jsonpath':
      out.write(endLine(compileJsonPath(format.text)({ items })));
      return;
  }
}

export function printItem<T>(out: Out, format: Format, p: Printable<T>, item: T, o: ListOptions = {}): void {
  switch (format.kind) {
    case 'tabular': {
      const cols = [...p.columns, ...(o.showLabels ? [labelsColumn as unknown as Column<T>] : [])];
      const wide = Math.max(...cols.map((c) => c.header.length)) + 1;
      out.write(cols.map((c) => `${`${c.header}:`.padEnd(wide)} ${c.value(item)}`.trimEnd() + '\n').join(''));
      return;
    }
    case 'json':
      out.write(json(item));
      return;
    case 'wrapped-json':
      out.write(json(p.wrap(item)));
      return;
    case 'yaml':
      out.write(yamlStringify(p.wrap(item)));
      return;
    case 'template':
      out.write(endLine(compileTemplate(format.text)(item)));
      return;
    case 'jsonpath':
      out.write(endLine(compileJsonPath(format.text)(item)));
      return;
  }
}
