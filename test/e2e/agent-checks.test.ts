// suite-timeout: 240
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { createServer, type Server } from 'node:http';
import { chmodSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { WebSocketServer, type WebSocket } from 'ws';
import { CONTENT_PROTOBUF, decodeFrame, encodeFrame, jsonCodec, messageBytes } from '../../proto/frames.ts';
import { protobufCodec } from '../../proto/wire/codec.ts';
import { freePort, sleep, startAgent, tempDir, waitFor, type AgentProc } from '../harness/index.ts';
import { fresh } from '../harness/api.ts';

// The agent runs the checks a backend asks for. A WebSocket server in the test stands in for the
// backend (the schedule actor is another part of issue 5): it sends check_request frames, receives
// the real agent's events and acknowledges them. The commands are real, including the Nagios
// plugins of monitoring-plugins-basic (make test-binaries installs them).

const PLUGINS = '/usr/lib/nagios/plugins';

interface StandIn {
  url: string;
  events: any[];
  socket(): WebSocket | undefined;
  request(req: unknown): void;
  raw(payload: string | Buffer): void;
  close(): void;
}

async function standIn(protobuf = false): Promise<StandIn> {
  const port = await freePort();
  const wss = new WebSocketServer({ port, host: '127.0.0.1' });
  const codec = protobuf ? protobufCodec : jsonCodec;
  if (protobuf)
    wss.on('headers', (headers) => {
      headers.push(`Content-Type: ${CONTENT_PROTOBUF}`);
    });
  const events: any[] = [];
  let current: WebSocket | undefined;
  wss.on('connection', (ws) => {
    current = ws;
    ws.on('message', (data) => {
      const frame = decodeFrame(messageBytes(data as Buffer));
      if (frame.type !== 'event') return;
      const event = codec.decode(frame.payload, 'event') as any;
      events.push(event);
      ws.send(encodeFrame('ack', codec.encode({ id: event.id, ok: true }, 'ack')));
    });
  });
  return {
    url: `ws://127.0.0.1:${port}`,
    events,
    socket: () => current,
    request: (req) => current!.send(encodeFrame('check_request', codec.encode(req, 'check_request'))),
    raw: (payload) => current!.send(encodeFrame('check_request', payload)),
    close: () => {
      for (const c of wss.clients) c.terminate();
      wss.close();
    },
  };
}

const servers: StandIn[] = [];
let files: Server | undefined;
const agents: AgentProc[] = [];
let main: { s: StandIn; agent: AgentProc };

async function agentWith(
  extraArgs: string[] = [],
  protobuf = false,
): Promise<{ s: StandIn; agent: AgentProc }> {
  const s = await standIn(protobuf);
  servers.push(s);
  const agent = await startAgent({ name: fresh('checks'), backendUrls: s.url, extraArgs });
  agents.push(agent);
  await agent.proc.waitForLine((l) => l.includes('connected to backend'), 20000);
  return { s, agent };
}

let issuedSeq = Math.floor(Date.now() / 1000);
function request(name: string, config: Record<string, unknown>, extra: Record<string, unknown> = {}) {
  return {
    config: { metadata: { name, namespace: 'default' }, interval: 60, handlers: ['default'], ...config },
    issued: ++issuedSeq,
    ...extra,
  };
}

/** Sends a request and waits for the event of that check. */
async function run(
  target: { s: StandIn },
  name: string,
  config: Record<string, unknown>,
  extra: Record<string, unknown> = {},
  timeoutMs = 15000,
): Promise<any> {
  const req = request(name, config, extra);
  target.s.request(req);
  return waitFor(
    () => target.s.events.find((e) => e.check?.metadata?.name === name && e.check.issued === req.issued),
    { timeoutMs, what: `event of ${name}` },
  );
}

test.before(async () => {
  main = await agentWith(['--labels', 'region=eu', '--annotations', 'team=ops']);
});

test.after(async () => {
  for (const a of agents) await a.stop().catch(() => {});
  for (const s of servers) s.close();
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
  const asset = await run(
    main,
    'token-asset',
    { command: 'echo ran', runtime_assets: ['tool'] },
    {
      assets: [
        {
          metadata: { name: 'tool' },
          url: 'http://127.0.0.1:1/{{ .labels.gone }}.tar.gz',
          sha512: 'a'.repeat(128),
        },
      ],
    },
  );
  assert.is(asset.check.status, 3);
  assert.match(asset.check.output, /^unmatched token: \{\{ \.labels\.gone \}\}/);
  const sha = await run(
    main,
    'token-sha',
    { command: 'echo ran' },
    { assets: [{ metadata: { name: 'tool' }, url: 'http://x/{{ .name }}', sha512: '{{ .labels.gone }}' }] },
  );
  assert.is(sha.check.output, 'ran\n', 'sha512 is never substituted');
});

test('hooks run by status: critical, numeric, non-zero, each once; ok hooks do not run on failure', async () => {
  const e = await run(
    main,
    'hooked',
    {
      command: 'echo boom; exit 2',
      check_hooks: [
        { type: 'critical', hooks: ['ps-hook'] },
        { type: '2', hooks: ['ps-hook', 'stdin-hook'] },
        { type: 'ok', hooks: ['ok-hook'] },
        { type: 'non-zero', hooks: ['nz-hook'] },
        { type: 'unknown', hooks: ['unknown-hook'] },
      ],
    },
    {
      hooks: [
        { metadata: { name: 'ps-hook' }, command: 'echo hook-one; exit 1', timeout: 10 },
        { metadata: { name: 'stdin-hook' }, command: 'cat', stdin: true, timeout: 10 },
        { metadata: { name: 'ok-hook' }, command: 'echo never' },
        { metadata: { name: 'nz-hook' }, command: 'echo "{{ .labels.region }}"' },
        { metadata: { name: 'unknown-hook' }, command: 'echo never' },
      ],
    },
  );
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
  const ok = await run(
    main,
    'hooked-ok',
    {
      command: 'true',
      check_hooks: [
        { type: 'ok', hooks: ['ok-hook'] },
        { type: 'non-zero', hooks: ['nz-hook'] },
      ],
    },
    {
      hooks: [
        { metadata: { name: 'ok-hook' }, command: 'echo fine' },
        { metadata: { name: 'nz-hook' }, command: 'echo never' },
      ],
    },
  );
  assert.equal(
    ok.check.hooks.map((h: any) => [h.metadata.name, h.output]),
    [['ok-hook', 'fine\n']],
  );
});

test('duplicate and stale requests are refused; a running check is not started twice', async () => {
  const name = 'dedupe';
  const req = request(name, { command: 'echo once' });
  const from = main.agent.proc.lineCount;
  main.s.request(req);
  await waitFor(() => main.s.events.find((e) => e.check?.metadata?.name === name), {
    timeoutMs: 10000,
    what: 'dedupe event',
  });
  // Another subscription of the same check delivers the same request again; an older one is late.
  main.s.request(req);
  main.s.request({ ...req, issued: req.issued - 5 });
  await main.agent.proc.waitForLine((l) => l.includes('duplicate check request'), 5000, { fromLine: from });
  await main.agent.proc.waitForLine(
    (l) => l.includes('check request is older than one already received'),
    5000,
    { fromLine: from },
  );
  await sleep(500);
  assert.is(main.s.events.filter((e) => e.check?.metadata?.name === name).length, 1);

  const slow = request('in-progress', { command: 'sleep 2; echo done' });
  main.s.request(slow);
  await sleep(300);
  main.s.request({ ...slow, issued: slow.issued + 1 });
  await main.agent.proc.waitForLine((l) => l.includes('check execution still in progress'), 5000, {
    fromLine: from,
  });
  await waitFor(() => main.s.events.find((e) => e.check?.metadata?.name === 'in-progress'), {
    timeoutMs: 10000,
    what: 'in-progress event',
  });
  await sleep(500);
  assert.is(main.s.events.filter((e) => e.check?.metadata?.name === 'in-progress').length, 1);
  // The same check for another proxy entity is another execution.
  const a = await run(main, 'proxied', { command: 'echo a', proxy_entity_name: 'router-1' });
  assert.is(a.check.proxy_entity_name, 'router-1');
  assert.is(a.entity.metadata.name, main.agent.name);
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
  const e = await run(main, 'load-metrics', {
    command: `${PLUGINS}/check_load -w 1000,1000,1000 -c 2000,2000,2000`,
    output_metric_format: 'nagios_perfdata',
    output_metric_tags: [{ name: 'region', value: '{{ .labels.region }}' }],
    output_metric_handlers: ['influx'],
    discard_output: true,
  });
  assert.is(e.check.status, 0);
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
  const plain = await run(main, 'no-metrics', { command: 'echo x' });
  assert.is(plain.metrics, undefined);
});

test('secrets of the request reach the command environment', async () => {
  const e = await run(
    main,
    'secret',
    { command: 'echo "$DB_PASSWORD"' },
    { secrets: ['DB_PASSWORD=s3cret'] },
  );
  assert.is(e.check.output, 's3cret\n');
  assert.not.ok(
    main.agent.proc.lines().some((l) => l.includes('s3cret')),
    'never logged',
  );
});

test('malformed requests are logged and ignored; the agent keeps running checks', async () => {
  const from = main.agent.proc.lineCount;
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
  for (const b of bad) main.s.request(b);
  main.s.raw('{not json');
  main.s.raw(Buffer.from([0xff, 0xfe, 0x00]));
  await main.agent.proc.waitForLine((l) => l.includes('ignoring malformed check request'), 5000, {
    fromLine: from,
  });
  const after = await run(main, 'after-bad', { command: 'echo still here' });
  assert.is(after.check.output, 'still here\n');
  assert.ok(main.agent.proc.running);
  assert.not.ok(main.s.events.some((e) => e.check?.metadata?.name === 'x'));
});

test('allow list: allowed by exec+args and sha512, denied otherwise (status 3), env_vars only with enable_env', async () => {
  const dir = tempDir('allow-list');
  const dummy = `${PLUGINS}/check_dummy`;
  const sum = createHash('sha512').update(readFileSync(dummy)).digest('hex');
  const file = join(dir, 'allow.yaml');
  writeFileSync(
    file,
    [
      `- exec: ${dummy}`,
      `  args: ["0", "allowed"]`,
      `  sha512: ${sum}`,
      `- exec: /bin/true`,
      `  args: []`,
      `  sha512: "${'0'.repeat(128)}"`,
      `- exec: printenv`,
      `  args: [FOO]`,
      `- exec: sh`,
      `  args: ["-c", "'printenv FOO'"]`,
      `  enable_env: true`,
    ].join('\n'),
  );
  const t = await agentWith(['--allow-list', file]);
  const ok = await run(t, 'allowed', { command: `${dummy} 0 allowed` });
  assert.is(ok.check.status, 0);
  assert.is(ok.check.output, 'OK: allowed\n');
  for (const [name, command] of [
    ['other-args', `${dummy} 2 allowed`],
    ['not-listed', 'echo hi'],
    ['bad-sha', '/bin/true'],
    ['chained', `${dummy} 0 allowed; rm -rf /tmp/x`],
  ]) {
    const e = await run(t, name!, { command });
    assert.is(e.check.status, 3, name);
    assert.is(e.check.output, 'check command denied by the agent allow list', name);
  }
  const custom = await run(t, 'deny-status', {
    metadata: { name: 'deny-status', annotations: { allow_list_on_deny_status: '1' } },
    command: 'echo hi',
  });
  assert.is(custom.check.status, 1, 'allow_list_on_deny_status annotation');
  const noEnv = await run(t, 'no-env', { command: 'printenv FOO', env_vars: ['FOO=bar'] });
  assert.is(noEnv.check.status, 1, 'env_vars dropped without enable_env');
  const withEnv = await run(t, 'with-env', { command: "sh -c 'printenv FOO'", env_vars: ['FOO=bar'] });
  assert.is(withEnv.check.output, 'bar\n');
  const hooked = await run(
    t,
    'denied-hook',
    { command: `${dummy} 0 allowed`, check_hooks: [{ type: 'ok', hooks: ['h'] }] },
    { hooks: [{ metadata: { name: 'h' }, command: 'id' }] },
  );
  assert.is(hooked.check.hooks[0].status, 3);
  assert.match(hooked.check.hooks[0].output, /denied by the agent allow list/);
});

test('a bad allow-list file stops the agent at start with one clear line and exit code 2', async () => {
  const dir = tempDir('allow-bad');
  for (const [file, text, says] of [
    ['bad.json', '{"exec": "x"}', /invalid allow list .*bad\.json/],
    ['broken.json', '[{', /not valid JSON/],
    ['entries.yaml', '- args: [a]', /invalid allow list .*exec/],
    ['missing.yaml', undefined, /cannot read allow list/],
  ] as const) {
    const path = join(dir, file);
    if (text !== undefined) writeFileSync(path, text);
    const a = await startAgent({
      name: fresh('allow-bad'),
      backendUrls: 'ws://127.0.0.1:1',
      extraArgs: ['--allow-list', path],
    });
    agents.push(a);
    const exit = await waitFor(() => a.proc.exit, { timeoutMs: 15000, what: 'agent exit' });
    assert.is(exit.code, 2, a.proc.tail(5));
    assert.ok(
      a.proc.lines().some((l) => says.test(l)),
      a.proc.tail(5),
    );
  }
});

test('--disable-assets: a check that needs assets gives status 3 saying assets are disabled', async () => {
  const t = await agentWith(['--disable-assets']);
  const e = await run(
    t,
    'needs-asset',
    { command: 'echo hi', runtime_assets: ['my-tool'] },
    {
      assets: [
        { metadata: { name: 'my-tool' }, url: 'http://127.0.0.1:1/x.tar.gz', sha512: 'a'.repeat(128) },
      ],
    },
  );
  assert.is(e.check.status, 3);
  assert.match(e.check.output, /assets are disabled on this agent/);
  const plain = await run(t, 'no-asset', { command: 'echo hi' });
  assert.is(plain.check.output, 'hi\n');
});

test('stopping the agent kills running checks (their process groups) and drops their results', async () => {
  const t = await agentWith();
  const marker = join(tempDir('checks-stop'), 'survived');
  t.s.request(request('long', { command: `sleep 3; touch ${marker}` }));
  await t.agent.proc.waitForLine((l) => l.includes('check request accepted') && l.includes('"long"'), 5000);
  await sleep(300);
  const started = Date.now();
  const exit = await t.agent.stop(8000);
  assert.is(exit.code, 0, t.agent.proc.tail(10));
  assert.ok(Date.now() - started < 5000);
  assert.ok(
    t.agent.proc.lines().some((l) => l.includes('check cancelled: the agent is stopping')),
    t.agent.proc.tail(10),
  );
  await sleep(3500);
  assert.throws(() => readFileSync(marker), 'the command was killed');
  assert.not.ok(t.s.events.some((e) => e.check?.metadata?.name === 'long'));
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
  const asset = (sha512: string) => ({
    metadata: { name: 'hello-asset', namespace: 'default' },
    url,
    sha512,
  });
  const ok = await run(
    main,
    'with-asset',
    { command: 'hello-tool {{ .labels.region }}; ls "$HELLO_ASSET_PATH"', runtime_assets: ['hello-asset'] },
    { assets: [asset(sum)] },
    30000,
  );
  assert.is(ok.check.status, 0, ok.check.output);
  assert.is(ok.check.output, 'hello from the asset eu\nbin\n');
  const bad = await run(
    main,
    'bad-asset',
    { command: 'hello-tool', runtime_assets: ['hello-asset'] },
    { assets: [{ ...asset('b'.repeat(128)), metadata: { name: 'hello-asset', namespace: 'other' } }] },
    30000,
  );
  assert.is(bad.check.status, 3);
  assert.match(bad.check.output, /hello-asset/);
  const missing = await run(main, 'no-definition', { command: 'hello-tool', runtime_assets: ['nowhere'] });
  assert.is(missing.check.status, 3);
  assert.match(missing.check.output, /no definition of asset nowhere/);
  const invalid = await run(
    main,
    'invalid-asset',
    { command: 'hello-tool', runtime_assets: ['x'] },
    { assets: [{ metadata: { name: 'x' }, url: 'not a url' }] },
  );
  assert.is(invalid.check.status, 3);
  assert.match(invalid.check.output, /invalid asset in the check request/);
});

test('protobuf: check_hooks, hooks, secrets and the hook results cross the wire', async () => {
  const t = await agentWith(['--protobuf'], true);
  const e = await run(
    t,
    'pb-hooked',
    { command: `${PLUGINS}/check_dummy 2 down`, check_hooks: [{ type: 'critical', hooks: ['pb-hook'] }] },
    {
      hooks: [{ metadata: { name: 'pb-hook' }, command: 'echo "hook $TOKEN"', timeout: 5 }],
      secrets: ['TOKEN=t0k'],
    },
  );
  assert.is(e.check.status, 2);
  assert.is(e.check.output, 'CRITICAL: down\n');
  assert.is(e.check.hooks.length, 1);
  assert.is(e.check.hooks[0].metadata.name, 'pb-hook', 'the hook configuration is inline, as in Sensu');
  assert.is(e.check.hooks[0].command, 'echo "hook $TOKEN"');
  assert.is(e.check.hooks[0].output, 'hook \n', 'secrets are for the check command, not its hooks');
  assert.is(e.check.hooks[0].status, 0);
  assert.equal(e.check.check_hooks, [{ hooks: ['pb-hook'], type: 'critical' }]);
});

test.run();
