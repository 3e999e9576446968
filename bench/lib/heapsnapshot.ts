/**
 * Summary of a V8 .heapsnapshot: self size and count per constructor name, to see what the
 * memory per connected agent is made of.
 */
import fs from 'node:fs';

interface Snapshot {
  snapshot: { meta: { node_fields: string[]; node_types: [string[], ...unknown[]] } };
  nodes: number[];
  strings: string[];
}

export function summarizeHeap(
  file: string,
  top = 25,
): Array<{ name: string; count: number; selfMb: number }> {
  const snap = JSON.parse(fs.readFileSync(file, 'utf8')) as Snapshot;
  const fields = snap.snapshot.meta.node_fields;
  const types = snap.snapshot.meta.node_types[0];
  const width = fields.length;
  const fType = fields.indexOf('type'),
    fName = fields.indexOf('name'),
    fSize = fields.indexOf('self_size');
  const agg = new Map<string, { count: number; size: number }>();
  for (let i = 0; i < snap.nodes.length; i += width) {
    const type = types[snap.nodes[i + fType]!]!;
    // Objects by constructor; everything else (strings, code, arrays' backing stores) by type.
    const name =
      type === 'object' || type === 'closure'
        ? `${type === 'closure' ? 'closure ' : ''}${snap.strings[snap.nodes[i + fName]!]}`
        : `(${type})`;
    const e = agg.get(name) ?? { count: 0, size: 0 };
    e.count++;
    e.size += snap.nodes[i + fSize]!;
    agg.set(name, e);
  }
  return [...agg]
    .map(([name, e]) => ({ name, count: e.count, selfMb: e.size / 2 ** 20 }))
    .sort((a, b) => b.selfMb - a.selfMb)
    .slice(0, top);
}
