import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parse as parseYaml } from 'yaml';
import { parseFormat } from '../../cli/output/format.ts';
import { compileJsonPath } from '../../cli/output/jsonpath.ts';
import { printItem, printList, type Out } from '../../cli/output/printer.ts';
import { fitWidths, renderTable } from '../../cli/output/table.ts';
import { compileTemplate } from '../../cli/output/template.ts';
import { findType } from '../../cli/resources/lookup.ts';
import { printableOf } from '../../cli/resources/printable.ts';
import { usageMessage } from './cli/usage-error.ts';

// monitorctl's output: tables (fitted to a width), templates, JSONPath, and each format of the printer.

const checks = [
  {
    metadata: { name: 'cpu', namespace: 'default', labels: { team: 'ops', a: '1' } },
    command: 'check-cpu -w 80',
    interval: 60,
    subscriptions: ['linux', 'web'],
  },
  { metadata: { name: 'disk', namespace: 'default' }, command: 'check-disk', interval: 300, publish: true },
];
const checkType = findType('checks')!;

function capture(width?: number): Out & { text: string } {
  const o = { text: '', width, write: (s: string) => void (o.text += s) };
  return o;
}

const usage = (fn: () => unknown, re: RegExp) => assert.match(usageMessage(fn), re);

test('a table: header, rule, one line per row, cells whole when there is no width', () => {
  const t = renderTable(
    ['Name', 'Command'],
    [
      ['cpu', 'a long command line'],
      ['x', 'multi\nline'],
    ],
  );
  assert.is(
    t,
    ' Name   Command\n────── ─────────────────────\n cpu    a long command line\n x      multi line\n',
  );
});

test('a table fitted to a width narrows the widest columns, cutting their cells', () => {
  assert.equal(fitWidths([10, 30, 8], 100), [10, 30, 8]);
  const fitted = fitWidths([10, 60, 40], 60);
  assert.ok(fitted.reduce((a, b) => a + b, 0) + 2 <= 60, String(fitted));
  assert.is(fitted[0], 10, 'a narrow column is left whole');
  assert.is(fitted[1], fitted[2], 'the wide ones share one cap');
  const t = renderTable(['Name', 'Command'], [['cpu', 'x'.repeat(80)]], 40);
  for (const line of t.trimEnd().split('\n')) assert.ok([...line].length <= 40, line);
  assert.match(t, /x…/);
  // never narrower than a few characters, even on a tiny terminal
  assert.ok(fitWidths([30, 30], 5).every((w) => w >= 7));
});

test('templates: fields, index, strings, trim markers, missing fields', () => {
  const t = compileTemplate('{{ .metadata.name }}: {{.command}} [{{ index .metadata.labels "team" }}]');
  assert.is(t(checks[0]), 'cpu: check-cpu -w 80 [ops]');
  assert.is(compileTemplate('{{ .nothing.here }}')(checks[0]), '<no value>');
  assert.is(compileTemplate('{{ .subscriptions }}')(checks[0]), '["linux","web"]');
  assert.is(compileTemplate('a  {{- "b" -}}  c')({}), 'abc');
  assert.is(compileTemplate('{{ `raw` }} {{ 3 }}')({}), 'raw 3');
  assert.is(compileTemplate('{{ . }}')('x'), 'x');
  usage(() => compileTemplate('{{ .a'), /unclosed/);
  usage(() => compileTemplate('{{ range .items }}'), /unsupported|not a field/);
  usage(() => compileTemplate('{{ }}'), /empty/);
});

test('JSONPath: expressions, strings, range, lists as items', () => {
  const list = { items: checks };
  assert.is(compileJsonPath('{.items[*].metadata.name}')(list), 'cpu disk');
  assert.is(
    compileJsonPath('{range .items[*]}{.metadata.name}={.interval}{"\\n"}{end}')(list),
    'cpu=60\ndisk=300\n',
  );
  assert.is(compileJsonPath('names: {range .items}{.metadata.name} {end}')(list), 'names: cpu disk ');
  assert.is(compileJsonPath('{.items[?(@.interval > 100)].metadata.name}')(list), 'disk');
  assert.is(compileJsonPath('{.metadata}')(checks[1]), '{"name":"disk","namespace":"default"}');
  assert.is(compileJsonPath('{.nothing}')(checks[1]), '');
  usage(() => compileJsonPath('{.a'), /unclosed/);
  usage(() => compileJsonPath('{range .items[*]}{.a}'), /without \{end\}/);
  usage(() => compileJsonPath('{end}'), /without \{range\}/);
});

test('formats: names and their text, or a usage error', () => {
  assert.equal(parseFormat('yaml'), { kind: 'yaml' });
  assert.equal(parseFormat('template={{ .a }}={{ .b }}'), { kind: 'template', text: '{{ .a }}={{ .b }}' });
  assert.equal(parseFormat('jsonpath={.items}'), { kind: 'jsonpath', text: '{.items}' });
  usage(() => parseFormat('xml'), /format must be one of/);
  usage(() => parseFormat('template='), /format must be one of/);
});

test('the printer writes a list in every format', () => {
  const p = printableOf(checkType);
  const out = (format: string, o = {}) => {
    const c = capture();
    printList(c, parseFormat(format), p, checks, o);
    return c.text;
  };
  const table = out('tabular', { showLabels: true, namespaceColumn: true });
  assert.match(table.split('\n')[0]!, /^ Namespace\s+Name\s+Command\s+Interval.*Labels$/);
  assert.match(table, /default\s+cpu\s+check-cpu -w 80\s+60\s.*a=1,team=ops/);
  assert.equal(JSON.parse(out('json')), checks);
  const wrapped = out('wrapped-json');
  assert.is(wrapped.split('\n}\n').filter(Boolean).length, 2);
  assert.equal(JSON.parse(wrapped.slice(0, wrapped.indexOf('\n}\n') + 2)), {
    type: 'CheckConfig',
    api_version: 'core/v2',
    metadata: checks[0]!.metadata,
    spec: { command: 'check-cpu -w 80', interval: 60, subscriptions: ['linux', 'web'] },
  });
  const docs = out('yaml')
    .split('---\n')
    .map((d) => parseYaml(d));
  assert.equal(
    docs.map((d) => [d.type, d.metadata.name]),
    [
      ['CheckConfig', 'cpu'],
      ['CheckConfig', 'disk'],
    ],
  );
  assert.is(out('template={{ .metadata.name }}'), 'cpu\ndisk\n');
  assert.is(out('jsonpath={.items[*].interval}'), '60 300\n');
  assert.is(out('json').trim().startsWith('['), true);
  // an empty list: a header, [] or nothing
  const c = capture();
  printList(c, parseFormat('json'), p, []);
  assert.is(c.text, '[]\n');
});

test('the printer writes one item as fields, or in any format', () => {
  const p = printableOf(checkType);
  const out = (format: string) => {
    const c = capture();
    printItem(c, parseFormat(format), p, checks[1]!);
    return c.text;
  };
  const fields = out('tabular');
  assert.match(fields, /^Name:\s+disk$/m);
  assert.match(fields, /^Publish\?:\s+true$/m);
  assert.match(fields, /^Cron:$/m, 'no trailing blanks');
  assert.is(JSON.parse(out('json')).command, 'check-disk');
  assert.is(JSON.parse(out('wrapped-json')).spec.interval, 300);
  assert.is(parseYaml(out('yaml')).metadata.name, 'disk');
  assert.is(out('template={{ .command }}'), 'check-disk\n');
  assert.is(out('jsonpath={.metadata.name}'), 'disk\n');
});

test.run();
