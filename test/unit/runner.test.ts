// suite-timeout: 180
import { spawn, type ChildProcess } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { tempDir } from '../harness/index.ts';

// The runner itself (test/run.ts), run with --dir on fixture suites written to a temp dir: a skipped
// test, a .only, a suite with no test and a failing before hook are each counted as failures and
// make the run exit non-zero; a clean suite passes. Each case is a run of its own, so its exit code
// is its own.

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const RUNNER = join(ROOT, 'test/run.ts');
const UVU = import.meta.resolve('uvu');
const GUARD = pathToFileURL(join(ROOT, 'test/harness/uvu.ts')).href;
// Spelled in two parts so that this file's own source shows neither a focused test nor a before hook
// to the runner's source checks.
const ONLY = 'only';
const BEFORE = 'before';

const dir = tempDir('runner-fixtures');
const children: ChildProcess[] = [];

const fixtures: Record<string, string> = {
  'clean.test.ts': `import { test } from '${UVU}';
test('one', () => {});
test('two', () => {});
test.run();
`,
  'skipped.test.ts': `import { test } from '${UVU}';
test('runs', () => {});
test.skip('skipped', () => {});
test.run();
`,
  'some-only.test.ts': `import { test } from '${UVU}';
test.${ONLY}('focused', () => {});
test('left out', () => {});
test('left out too', () => {});
test.run();
`,
  'all-only.test.ts': `import { test } from '${UVU}';
test.${ONLY}('focused', () => {});
test.run();
`,
  'empty.test.ts': `import { test } from '${UVU}';
test.run();
`,
  'before-guarded.test.ts': `import { test } from '${GUARD}';
test.${BEFORE}(async () => {
  throw new Error('no database here');
});
test.${BEFORE}(() => {
  process.stdout.write('THE SECOND HOOK RAN' + '\\n');
});
test('first', () => {});
test('second', () => {});
test.run();
`,
  'before-unguarded.test.ts': `import { test } from '${UVU}';
test.${BEFORE}(() => {
  throw new Error('swallowed by uvu');
});
test('first', () => {});
test('second', () => {});
test.run();
`,
  'before-each.test.ts': `import { test } from '${GUARD}';
test.${BEFORE}.each((ctx) => {
  if (ctx.__test__ === 'second') throw new Error('no fixture for the second');
});
test('first', () => {});
test('second', () => {});
test.run();
`,
};
for (const [name, text] of Object.entries(fixtures)) writeFileSync(join(dir, name), text);

// Side by side (par/): a waits for b to have started, which only happens when both run at once; each
// prints lines while the other runs. 0-alone and c are exclusive: when one starts no other suite may be
// running, and 0-alone, first by name, runs after a and b.
const PAR = join(dir, 'par');
mkdirSync(PAR);
const mark = (name: string) => JSON.stringify(join(PAR, name));
const parFixtures: Record<string, string> = {
  'a.test.ts': `import { test } from '${UVU}';
import { existsSync, writeFileSync, rmSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
test('a runs beside b', async () => {
  writeFileSync(${mark('a.running')}, '');
  process.stdout.write('A-line-1\\n');
  for (let i = 0; i < 200 && !existsSync(${mark('b.started')}); i++) await sleep(50);
  process.stdout.write('A-line-2\\n');
  await sleep(300);
  rmSync(${mark('a.running')});
  if (!existsSync(${mark('b.started')})) throw new Error('b never started while a ran');
});
test.run();
`,
  'b.test.ts': `import { test } from '${UVU}';
import { mkdirSync, writeFileSync } from 'node:fs';
test('b starts while a runs', () => {
  writeFileSync(${mark('b.started')}, '');
  process.stdout.write('B-line-1\\n');
});
test.run();
`,
  '0-alone.test.ts': `// suite-exclusive: the runner's own test
import { test } from '${UVU}';
import { existsSync, readdirSync } from 'node:fs';
test('an exclusive suite runs after the others, alone', () => {
  if (!existsSync(${mark('b.started')})) throw new Error('ran before b');
  const others = readdirSync(${JSON.stringify(PAR)}).filter((f) => f.endsWith('.running'));
  if (others.length) throw new Error('running beside 0-alone: ' + others.join(' '));
});
test.run();
`,
  'c.test.ts': `// suite-exclusive: the runner's own test
import { test } from '${UVU}';
import { readdirSync } from 'node:fs';
test('c runs alone', () => {
  const others = readdirSync(${JSON.stringify(PAR)}).filter((f) => f.endsWith('.running'));
  if (others.length) throw new Error('running beside c: ' + others.join(' '));
});
test.run();
`,
};
for (const [name, text] of Object.entries(parFixtures)) writeFileSync(join(PAR, name), text);

interface RunResult {
  exit: { code: number | null; signal: string | null };
  output: string;
  /** The `suite <file>: N passed, N failed` line of the one suite. */
  suite: { passed: number; failed: number };
  /** The last line: `N passed, N failed`. */
  total: { passed: number; failed: number };
}

async function runner(file: string, filter = `/${file}`): Promise<RunResult> {
  const child = spawn(process.execPath, ['--import', 'tsx', RUNNER, '--dir', dir, filter], {
    cwd: ROOT,
    env: { ...process.env, MONITOR_TEST_JOBS: '2' },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  children.push(child);
  let stdout = '';
  let all = '';
  child.stdout.setEncoding('utf8').on('data', (c: string) => ((stdout += c), (all += c)));
  child.stderr.setEncoding('utf8').on('data', (c: string) => (all += c));
  const [code, signal] = (await once(child, 'close')) as [number | null, string | null];
  const lines = stdout.trimEnd().split('\n');
  // Quoted, so that the summaries in it are not read as this suite's own when an assertion prints it.
  const output = all
    .split('\n')
    .map((l) => `| ${l}`)
    .join('\n');
  const suiteLine = lines.find((l) => l.startsWith('suite ') && l.includes(`${file}: `) && l.endsWith('s)'));
  assert.ok(suiteLine, `a suite line for ${file} in:\n${output}`);
  const sm = /: (\d+) passed, (\d+) failed \(/.exec(suiteLine!)!;
  const tm = /^(\d+) passed, (\d+) failed$/.exec(lines.at(-1) ?? '');
  assert.ok(tm, `the last line is "N passed, N failed" in:\n${output}`);
  return {
    exit: { code, signal },
    output,
    suite: { passed: Number(sm[1]), failed: Number(sm[2]) },
    total: { passed: Number(tm![1]), failed: Number(tm![2]) },
  };
}

test.after(() => {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill('SIGKILL');
});

test('a clean suite passes and the run exits 0', async () => {
  const r = await runner('clean.test.ts');
  assert.equal(r.suite, { passed: 2, failed: 0 }, r.output);
  assert.equal(r.total, { passed: 2, failed: 0 });
  assert.is(r.exit.code, 0, r.output);
});

test('a skipped test is a failure and the run exits non-zero', async () => {
  const r = await runner('skipped.test.ts');
  assert.equal(r.suite, { passed: 1, failed: 1 }, r.output);
  assert.equal(r.total, { passed: 1, failed: 1 });
  assert.match(r.output, /1 test\(s\) skipped/);
  assert.is(r.exit.code, 1, r.output);
});

test('a .only is a failure: each test it leaves out counts as one; the run exits non-zero', async () => {
  const r = await runner('some-only.test.ts');
  assert.equal(r.suite, { passed: 1, failed: 2 }, r.output);
  assert.is(r.exit.code, 1, r.output);
});

test('a .only on every test of a suite (nothing reported skipped) is caught in the source', async () => {
  const r = await runner('all-only.test.ts');
  assert.equal(r.suite, { passed: 1, failed: 1 }, r.output);
  assert.match(r.output, /its source calls \.only\(/);
  assert.is(r.exit.code, 1, r.output);
});

test('a suite with no test (Total: 0) is a failure and the run exits non-zero', async () => {
  const r = await runner('empty.test.ts');
  assert.equal(r.suite, { passed: 0, failed: 1 }, r.output);
  assert.match(r.output, /no test ran \(Total: 0\)/);
  assert.is(r.exit.code, 1, r.output);
});

test('a failing before hook (harness/uvu.ts) prints its error with the suite and fails every test with it', async () => {
  const r = await runner('before-guarded.test.ts');
  assert.equal(r.suite, { passed: 0, failed: 2 }, r.output);
  assert.match(r.output, /\[harness\] before hook of \S*before-guarded\.test\.ts failed/);
  // uvu reports each test as failed with the hook's error.
  for (const name of ['first', 'second'])
    assert.match(
      r.output,
      new RegExp(
        `FAIL[\\s|]+"${name}"[\\s|]+before hook of \\S*before-guarded\\.test\\.ts failed: no database here`,
      ),
    );
  assert.not.match(r.output, /THE SECOND HOOK RAN/, 'the hooks after the failed one do not run');
  assert.is(r.exit.code, 1, r.output);
});

test('a before hook registered with uvu test directly is a failure, on top of its unrun tests', async () => {
  const r = await runner('before-unguarded.test.ts');
  assert.equal(r.suite, { passed: 0, failed: 3 }, r.output);
  assert.match(r.output, /import test from test\/harness\/uvu\.ts/);
  assert.is(r.exit.code, 1, r.output);
});

test('a failing before.each hook fails the test it ran for, naming the hook', async () => {
  const r = await runner('before-each.test.ts');
  assert.equal(r.suite, { passed: 1, failed: 1 }, r.output);
  assert.match(
    r.output,
    /FAIL[\s|]+"second"[\s|]+before\.each hook of \S*before-each\.test\.ts failed: no fixture/,
  );
  assert.is(r.exit.code, 1, r.output);
});

test('two suites run side by side, each printed whole under its header; exclusive ones run alone, after the others', async () => {
  const r = await runner('par/c.test.ts', '/par/');
  assert.equal(r.total, { passed: 4, failed: 0 }, r.output);
  assert.is(r.exit.code, 0, r.output);
  // Each suite's block: from its header to its suite line, with its own lines only.
  const block = (name: string) => {
    const m = new RegExp(
      `=== \\S*par/${name}\\.test\\.ts\\n([\\s\\S]*?)suite \\S*par/${name}\\.test\\.ts: `,
    ).exec(r.output);
    assert.ok(m, `a block for ${name} in:\n${r.output}`);
    return m![1]!;
  };
  const a = block('a');
  assert.match(a, /A-line-1\n[| ]*A-line-2/);
  assert.not.match(a, /B-line/);
  assert.match(block('b'), /B-line-1/);
  assert.not.match(block('b'), /A-line/);
  assert.match(r.output, /4 suite\(s\), 0 skipped, 2 at a time/);
});

test.run();
