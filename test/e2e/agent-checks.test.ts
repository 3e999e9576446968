// suite-timeout: 240
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { chmodSync, mkdirSync, readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { sleep, startBackend, tempDir, waitFor, type AgentProc, type Backend } from '../harness/index.ts';
import { backendAgents, type CheckAgent } from './agent-checks/backend.ts';
import { checkAgents, PLUGINS, request, run as standInRun, type StandIn } from './agent-checks/stand-in.ts';

// The agent runs the checks a backend asks for. A real backend schedules them: each check is created
// through the REST API for a subscription of the agent, executed once through the API, and its event
// read back through the API (test/e2e/agent-checks/backend.ts); hooks and assets are backend
// resources. The commands are real, including the Nagios plugins of monitoring-plugins-basic (make
// test-binaries installs them). The metrics of an event are not stored with it, so the metrics test
// reads them where the backend delivers them: a pipe handler named in output_metric_handlers.
//
// A backend stand-in (test/e2e/agent-checks/stand-in.ts: a WebSocket server sending check_request
// frames) drives a second agent, only for the requests a real backend never sends: the same
// request twice and an older one than the last (duplicates, stale; the in-progress and proxy cases
// of that test ride along), secrets (this backend has no secrets provider, so its requests carry
// none), malformed requests (the backend sends what its schemas validated), and asset definitions
// the API refuses to store (a sha512 that is a token, a url that is not a URL).
//
// The options that change how checks run (allow list, --disable-assets, protobuf) and stopping an
// agent are in agent-checks-options.test.ts.

let backend: Backend;
let files: Server | undefined;
const real = backendAgents(() => backend);
const { run, put, api } = real;
const standIns = checkAgents();
let main: CheckAgent;
let side: { s: StandIn; agent: AgentProc };
const handled = tempDir('checks-handled');

/** The events the `influx` pipe handler of the backend received, as JSON. */
const handledEvents = (): any[] =>
  readdirSync(handled).flatMap((f) => {
    try {
      return [JSON.parse(readFileSync(join(handled, f), 'utf8'))];
    } catch {
      return []; // still being written
    }
  });

test.before(async () => {
  backend = await startBackend({ name: 'agent-checks' });
  await waitFor(async () => (await api('/namespaces')).status === 200, {
    timeoutMs: 10000,
    what: 'the admin API key to work',
  });
  main = await real.agentOn(['--labels', 'region=eu', '--annotations', 'team=ops']);
  side = await standIns.agentWith(['--labels', 'region=eu', '--annotations', 'team=ops']);
});

test.after(async () => {
  await real.stopAll();
  await standIns.stopAll();
  await backend?.stop();
  files?.close();
});

test('real plugins: check_dummy status and output; the event carries entity, executed, duration, issued', async () => {
  const ok = await run(main, 'dummy-ok', { command: `${PLUGINS}/check_dummy 0 "all good"` });
  assert.is(ok.check.status, 0);
  assert.is(ok.check.output, 'OK: all good\n');
  assert.is(ok.entity.metadata.name, main.agent.name);
  assert.type(ok.check.executed, 'number');
  assert.type(ok.check.duration, 'number');
  assert.ok(ok.check.duration >= 0 && ok.check.duration < 10);
  assert.equal(ok.check.handlers, ['default']);
  assert.is(ok.check.interval, 60);
  for (const [status, word] of [
    [1, 'WARNING'],
    [2, 'CRITICAL'],
    [3, 'UNKNOWN'],
  ] as const) {
    const e = await run(main, `dummy-${status}`, { command: `${PLUGINS}/check_dummy ${status} text` });
    assert.is(e.check.status, status);
    assert.is(e.check.output, `${word}: text\n`);
  }
});

test('real plugins: check_load, check_disk, check_procs with perfdata', async () => {
  const load = await run(main, 'load', {
    command: `${PLUGINS}/check_load -w 1000,1000,1000 -c 2000,2000,2000`,
  });
  assert.is(load.check.status, 0, load.check.output);
  assert.match(load.check.output, /load average/i);
  assert.match(load.check.output, /\|.*load1=[\d.]+;1000\.000;2000\.000;0;/);
  const disk = await run(main, 'disk', { command: `${PLUGINS}/check_disk -w 0% -c 0% -p /` });
  assert.ok([0, 1, 2].includes(disk.check.status), disk.check.output);
  assert.match(disk.check.output, /DISK \w+/);
  assert.match(disk.check.output, /\|\s*\/=\d+[KMG]?i?B;/);
  const procs = await run(main, 'procs', { command: `${PLUGINS}/check_procs -w 100000 -c 200000` });
  assert.is(procs.check.status, 0, procs.check.output);
  assert.match(procs.check.output, /PROCS OK: \d+ process/);
  assert.match(procs.check.output, /\|\s*procs=\d+;100000;200000;0;/);
  // A plugin given a bad argument exits UNKNOWN (3) and says why, through the combined output.
  const bad = await run(main, 'procs-bad', { command: `${PLUGINS}/check_procs --no-such-option` });
  assert.is(bad.check.status, 3);
  assert.ok(bad.check.output.length > 0);
});

test('a command that runs past its timeout: status 2, "Execution timed out" and the partial output; its children die too', async () => {
  const marker = join(tempDir('checks-timeout'), 'survived');
  const started = Date.now();
  const e = await run(main, 'slow', {
    command: `echo partial; (sleep 3; touch ${marker}) & sleep 30`,
    timeout: 1,
  });
  assert.is(e.check.status, 2);
  assert.is(e.check.output, 'Execution timed out\npartial\n');
  assert.ok(Date.now() - started < 10000);
  await sleep(3500);
  assert.throws(() => readFileSync(marker), 'the background child was killed with the group');
});

test('stdin: true hands the event as JSON; env_vars over the agent environment; exit codes; stderr combined', async () => {
  const e = await run(main, 'stdin', { command: 'cat', stdin: true });
  const given = JSON.parse(e.check.output);
  assert.is(given.entity.metadata.name, main.agent.name);
  assert.is(given.check.metadata.name, 'stdin');
  assert.is(given.check.issued, e.check.issued);
  const env = await run(main, 'env', {
    command: 'echo "$FOO/$BAR/${HOME:+home}"',
    env_vars: ['FOO=bar', 'BAR=a=b'],
  });
  assert.is(env.check.output, 'bar/a=b/home\n');
  const mixed = await run(main, 'mixed', { command: 'echo out; echo err >&2; exit 7' });
  assert.is(mixed.check.status, 7);
  assert.is(mixed.check.output, 'out\nerr\n');
  // A background child that keeps the output pipe open does not hold the result.
  const t0 = Date.now();
  const bg = await run(main, 'background', { command: 'echo started; sleep 4 &' });
  assert.is(bg.check.output, 'started\n');
  assert.ok(Date.now() - t0 < 10000);
  const missing = await run(main, 'missing', { command: 'no-such-command-xyz' });
  assert.is(missing.check.status, 127);
  assert.match(missing.check.output, /not found/);
});

test('tokens: entity fields, default, assetPath; an unmatched token gives status 3 naming it and nothing runs', async () => {
  const e = await run(main, 'tokens', {
    command: `echo '{{ .name }} {{ .metadata.name }} {{ .labels.region }} {{ .annotations.team }} {{ .labels.port | default "8080" }} {{ default "x" .labels.region }} {{ assetPath "my-asset" }}'`,
    output_metric_tags: [{ name: 'host', value: '{{ .system.hostname }}' }],
  });
  const n = main.agent.name;
  assert.is(e.check.output, `${n} ${n} eu ops 8080 eu $MY_ASSET_PATH\n`);
  assert.is(e.check.command.includes('{{'), false, 'the event carries the substituted command');
  assert.ok(e.check.output_metric_tags[0].value.length > 0);
  const marker = join(tempDir('checks-token'), 'ran');
  const bad = await run(main, 'token-missing', { command: `touch ${marker}; echo {{ .labels.nope }}` });
  assert.is(bad.check.status, 3);
  assert.match(bad.check.output, /^unmatched token: \{\{ \.labels\.nope \}\}/);
  assert.throws(() => readFileSync(marker));
  // Asset fields take tokens too, except the checksum.
  await put('assets', 'tool', {
    url: 'http://127.0.0.1:1/{{ .labels.gone }}.tar.gz',
    sha512: 'a'.repeat(128),
  });
  const asset = await run(main, 'token-asset', { command: 'echo ran', runtime_assets: ['tool'] });
  assert.is(asset.check.status, 3);
  assert.match(asset.check.output, /^unmatched token: \{\{ \.labels\.gone \}\}/);
  // The API refuses to store a sha512 that is not hexadecimal: this request comes from the stand-in.
  const sha = await standInRun(
    side,
    'token-sha',
    { command: 'echo ran' },
    { assets: [{ metadata: { name: 'tool' }, url: 'http://x/{{ .name }}', sha512: '{{ .labels.gone }}' }] },
  );
  assert.is(sha.check.output, 'ran\n', 'sha512 is never substituted');
});

test('hooks run by status: critical, numeric, non-zero, each once; ok hooks do not run on failure', async () => {
  // Hook resources of the backend, which puts those a check names in its request. ok-hook runs only in
  // the second check, nz-hook only in the first.
  await put('hooks', 'ps-hook', { command: 'echo hook-one; exit 1', timeout: 10 });
  await put('hooks', 'stdin-hook', { command: 'cat', stdin: true, timeout: 10 });
  await put('hooks', 'ok-hook', { command: 'echo fine' });
  await put('hooks', 'nz-hook', { command: 'echo "{{ .labels.region }}"' });
  await put('hooks', 'unknown-hook', { command: 'echo never' });
  const e = await run(main, 'hooked', {
    command: 'echo boom; exit 2',
    check_hooks: [
      { type: 'critical', hooks: ['ps-hook'] },
      { type: '2', hooks: ['ps-hook', 'stdin-hook'] },
      { type: 'ok', hooks: ['ok-hook'] },
      { type: 'non-zero', hooks: ['nz-hook'] },
      { type: 'unknown', hooks: ['unknown-hook'] },
    ],
  });
  assert.is(e.check.status, 2);
  const hooks: any[] = e.check.hooks;
  assert.equal(
    hooks.map((h) => h.metadata.name),
    ['ps-hook', 'stdin-hook', 'nz-hook'],
  );
  assert.is(hooks[0].output, 'hook-one\n');
  assert.is(hooks[0].status, 1);
  assert.is(hooks[0].issued, e.check.issued);
  assert.type(hooks[0].executed, 'number');
  assert.type(hooks[0].duration, 'number');
  assert.is(JSON.parse(hooks[1].output).check.metadata.name, 'hooked');
  assert.is(hooks[2].output, 'eu\n', 'tokens are substituted in hooks');
  const ok = await run(main, 'hooked-ok', {
    command: 'true',
    check_hooks: [
      { type: 'ok', hooks: ['ok-hook'] },
      { type: 'non-zero', hooks: ['nz-hook'] },
    ],
  });
  assert.equal(
    ok.check.hooks.map((h: any) => [h.metadata.name, h.output]),
    [['ok-hook', 'fine\n']],
  );
});

test('duplicate and stale requests are refused; a running check is not started twice', async () => {
  const name = 'dedupe';
  const req = request(name, { command: 'echo once' });
  const from = side.agent.proc.lineCount;
  side.s.request(req);
  await waitFor(() => side.s.events.find((e) => e.check?.metadata?.name === name), {
    timeoutMs: 10000,
    what: 'dedupe event',
  });
  // Another subscription of the same check delivers the same request again; an older one is late.
  side.s.request(req);
  side.s.request({ ...req, issued: req.issued - 5 });
  await side.agent.proc.waitForLine((l) => l.includes('duplicate check request'), 5000, { fromLine: from });
  await side.agent.proc.waitForLine(
    (l) => l.includes('check request is older than one already received'),
    5000,
    { fromLine: from },
  );
  await sleep(500);
  assert.is(side.s.events.filter((e) => e.check?.metadata?.name === name).length, 1);

  const slow = request('in-progress', { command: 'sleep 2; echo done' });
  side.s.request(slow);
  await sleep(300);
  side.s.request({ ...slow, issued: slow.issued + 1 });
  await side.agent.proc.waitForLine((l) => l.includes('check execution still in progress'), 5000, {
    fromLine: from,
  });
  await waitFor(() => side.s.events.find((e) => e.check?.metadata?.name === 'in-progress'), {
    timeoutMs: 10000,
    what: 'in-progress event',
  });
  await sleep(500);
  assert.is(side.s.events.filter((e) => e.check?.metadata?.name === 'in-progress').length, 1);
  // The same check for another proxy entity is another execution.
  const a = await standInRun(side, 'proxied', { command: 'echo a', proxy_entity_name: 'router-1' });
  assert.is(a.check.proxy_entity_name, 'router-1');
  assert.is(a.entity.metadata.name, side.agent.name);
});

test('max_output_size truncates (bytes), discard_output blanks', async () => {
  const cut = await run(main, 'cut', { command: 'echo 0123456789', max_output_size: 4 });
  assert.is(cut.check.output, '0123');
  const utf = await run(main, 'cut-utf8', { command: 'printf "aé"', max_output_size: 2 });
  assert.is(utf.check.output, 'a', 'a character is never split');
  const gone = await run(main, 'discard', { command: 'echo secret; exit 1', discard_output: true });
  assert.is(gone.check.output, '');
  assert.is(gone.check.status, 1);
});

test('metrics: output_metric_format goes through the extractor; handlers and tags on metrics; output can be discarded', async () => {
  // The backend hands an event's metrics to the handlers they name (they are not stored with the
  // event): a pipe handler keeps each event it is given.
  await put('handlers', 'influx', { type: 'pipe', command: `cat > "$(mktemp -p ${handled} ev.XXXXXX)"` });
  const stored = await run(main, 'load-metrics', {
    command: `${PLUGINS}/check_load -w 1000,1000,1000 -c 2000,2000,2000`,
    output_metric_format: 'nagios_perfdata',
    output_metric_tags: [{ name: 'region', value: '{{ .labels.region }}' }],
    output_metric_handlers: ['influx'],
    discard_output: true,
  });
  assert.is(stored.check.status, 0);
  assert.is(stored.check.output, '', 'discarded after extraction');
  const e = await waitFor(
    () => handledEvents().find((x) => x.check?.metadata?.name === 'load-metrics' && x.metrics),
    { timeoutMs: 15000, what: 'the metrics of load-metrics at the influx handler' },
  );
  assert.is(e.check.issued, stored.check.issued);
  assert.is(e.check.output, '', 'discarded after extraction');
  assert.equal(e.metrics.handlers, ['influx']);
  assert.ok(Array.isArray(e.metrics.points));
  assert.equal(
    e.metrics.points.map((p: any) => p.name).sort(),
    ['load1', 'load15', 'load5'],
    JSON.stringify(e.metrics.points),
  );
  const load1 = e.metrics.points.find((p: any) => p.name === 'load1');
  assert.type(load1.value, 'number');
  assert.is(load1.timestamp, e.check.executed);
  assert.ok(
    load1.tags.some((t: any) => t.name === 'region' && t.value === 'eu'),
    'output_metric_tags, tokens substituted',
  );
  // A check without output_metric_format: the handler it names gets its event, without metrics.
  await run(main, 'no-metrics', { command: 'echo x', handlers: ['influx'] });
  const plain = await waitFor(() => handledEvents().find((x) => x.check?.metadata?.name === 'no-metrics'), {
    timeoutMs: 15000,
    what: 'the event of no-metrics at the influx handler',
  });
  assert.is(plain.metrics, undefined);
});

test('secrets of the request reach the command environment', async () => {
  const e = await standInRun(
    side,
    'secret',
    { command: 'echo "$DB_PASSWORD"' },
    { secrets: ['DB_PASSWORD=s3cret'] },
  );
  assert.is(e.check.output, 's3cret\n');
  assert.not.ok(
    side.agent.proc.lines().some((l) => l.includes('s3cret')),
    'never logged',
  );
});

test('malformed requests are logged and ignored; the agent keeps running checks', async () => {
  const from = side.agent.proc.lineCount;
  const bad: unknown[] = [
    {},
    { config: {} },
    { config: { metadata: { name: 'x' }, command: '' }, issued: 1 },
    { config: { metadata: { name: 'x' }, command: 'true' }, issued: -1 },
    { config: { metadata: { name: 'x' }, command: 'true', timeout: 'soon' }, issued: 1 },
    {
      config: { metadata: { name: 'x' }, command: 'true', check_hooks: [{ type: 'sometimes', hooks: [] }] },
      issued: 1,
    },
    [],
    'text',
    null,
  ];
  for (const b of bad) side.s.request(b);
  side.s.raw('{not json');
  side.s.raw(Buffer.from([0xff, 0xfe, 0x00]));
  await side.agent.proc.waitForLine((l) => l.includes('ignoring malformed check request'), 5000, {
    fromLine: from,
  });
  const after = await standInRun(side, 'after-bad', { command: 'echo still here' });
  assert.is(after.check.output, 'still here\n');
  assert.ok(side.agent.proc.running);
  assert.not.ok(side.s.events.some((e) => e.check?.metadata?.name === 'x'));
});

test('assets: the check runs with the asset on PATH and $NAME_PATH; a bad checksum or a missing definition gives status 3', async () => {
  const dir = tempDir('check-asset');
  mkdirSync(join(dir, 'src', 'bin'), { recursive: true });
  writeFileSync(join(dir, 'src', 'bin', 'hello-tool'), '#!/bin/sh\necho "hello from the asset $1"\n');
  chmodSync(join(dir, 'src', 'bin', 'hello-tool'), 0o755);
  execFileSync('tar', ['czf', join(dir, 'hello.tar.gz'), '-C', join(dir, 'src'), 'bin']);
  const archive = readFileSync(join(dir, 'hello.tar.gz'));
  const sum = createHash('sha512').update(archive).digest('hex');
  files = createServer((_req, res) => {
    res.writeHead(200, { 'Content-Type': 'application/gzip' });
    res.end(archive);
  });
  await new Promise<void>((r) => files!.listen(0, '127.0.0.1', () => r()));
  const url = `http://127.0.0.1:${(files.address() as { port: number }).port}/hello.tar.gz`;
  await put('assets', 'hello-asset', { url, sha512: sum });
  const ok = await run(
    main,
    'with-asset',
    { command: 'hello-tool {{ .labels.region }}; ls "$HELLO_ASSET_PATH"', runtime_assets: ['hello-asset'] },
    30000,
  );
  assert.is(ok.check.status, 0, ok.check.output);
  assert.is(ok.check.output, 'hello from the asset eu\nbin\n');
  // The same archive under a checksum it does not have.
  await put('assets', 'hello-asset-bad', { url, sha512: 'b'.repeat(128) });
  const bad = await run(
    main,
    'bad-asset',
    { command: 'hello-tool', runtime_assets: ['hello-asset-bad'] },
    30000,
  );
  assert.is(bad.check.status, 3);
  assert.match(bad.check.output, /hello-asset/);
  const missing = await run(main, 'no-definition', { command: 'hello-tool', runtime_assets: ['nowhere'] });
  assert.is(missing.check.status, 3);
  assert.match(missing.check.output, /no definition of asset nowhere/);
  // The API refuses to store an asset whose url is not a URL: this request comes from the stand-in.
  const invalid = await standInRun(
    side,
    'invalid-asset',
    { command: 'hello-tool', runtime_assets: ['x'] },
    { assets: [{ metadata: { name: 'x' }, url: 'not a url' }] },
  );
  assert.is(invalid.check.status, 3);
  assert.match(invalid.check.output, /invalid asset in the check request/);
});

test.run();
