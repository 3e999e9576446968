/**
 * Summary of a V8 .cpuprofile (node --cpu-prof): self time per function and per module, so a
 * profile can be read in a terminal.
 */
import fs from 'node:fs';
import path from 'node:path';

interface CallFrame {
  functionName: string;
  url: string;
  lineNumber: number;
  columnNumber: number;
}
interface ProfileNode {
  id: number;
  callFrame: CallFrame;
  hitCount?: number;
  children?: number[];
}
interface CpuProfile {
  nodes: ProfileNode[];
  startTime: number;
  endTime: number;
  samples: number[];
  timeDeltas: number[];
}

interface ProfileSummary {
  totalMs: number;
  functions: Array<{ name: string; where: string; selfMs: number; pct: number }>;
  modules: Array<{ module: string; selfMs: number; pct: number }>;
}

/** Groups a script URL into something a reader recognises: our folder, a package, node internals. */
function moduleOf(url: string, root: string): string {
  if (!url) return '(native/vm)';
  if (url.startsWith('node:')) return 'node:' + url.slice(5).split('/')[0];
  const file = url.replace(/^file:\/\//, '');
  const nm = file.lastIndexOf('/node_modules/');
  if (nm >= 0) {
    const rest = file.slice(nm + 14).split('/');
    return rest[0]!.startsWith('@') ? `${rest[0]}/${rest[1]}` : rest[0]!;
  }
  const rel = path.relative(root, file);
  return rel.startsWith('..') ? file : rel.split('/').slice(0, -1).join('/') || rel;
}

export function summarizeProfile(file: string, root: string, top = 25): ProfileSummary {
  const prof = JSON.parse(fs.readFileSync(file, 'utf8')) as CpuProfile;
  const byId = new Map(prof.nodes.map((n) => [n.id, n]));
  const self = new Map<number, number>();
  for (let i = 0; i < prof.samples.length; i++) {
    const id = prof.samples[i]!;
    self.set(id, (self.get(id) ?? 0) + (prof.timeDeltas[i] ?? 0));
  }
  let total = 0;
  const fns = new Map<string, { name: string; where: string; selfMs: number }>();
  const mods = new Map<string, number>();
  for (const [id, us] of self) {
    const n = byId.get(id);
    if (!n) continue;
    const f = n.callFrame;
    const ms = us / 1000;
    total += ms;
    const file = f.url ? f.url.replace(/^file:\/\//, '') : '';
    // Line numbers of .ts files refer to tsx's transformed code, not the source: leave them out. The
    // programs' own code is one bundle (dist/*.mjs, docs/operations.md#compiled-programs): its lines
    // are the bundle's.
    const rel = file ? path.relative(root, file).replace(/^(\.\.\/)+/, '/') : '';
    const where = !rel ? '' : rel.endsWith('.ts') ? rel : `${rel}:${f.lineNumber + 1}`;
    const key = `${f.functionName}|${where}`;
    const e = fns.get(key) ?? { name: f.functionName || '(anonymous)', where, selfMs: 0 };
    e.selfMs += ms;
    fns.set(key, e);
    const mod = f.url
      ? moduleOf(f.url, root)
      : f.functionName.startsWith('(')
        ? f.functionName
        : '(native/vm)';
    mods.set(mod, (mods.get(mod) ?? 0) + ms);
  }
  const functions = [...fns.values()]
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, top)
    .map((e) => ({ ...e, pct: (e.selfMs / total) * 100 }));
  const modules = [...mods]
    .map(([module, selfMs]) => ({ module, selfMs, pct: (selfMs / total) * 100 }))
    .sort((a, b) => b.selfMs - a.selfMs)
    .slice(0, top);
  return { totalMs: total, functions, modules };
}
