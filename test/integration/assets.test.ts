// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import * as http from 'node:http';
import * as fs from 'node:fs';
import * as path from 'node:path';
import { createHash } from 'node:crypto';
import { execFileSync, spawnSync } from 'node:child_process';
import * as https from 'node:https';
import { freePort, tempDir, removeTempDir } from '../harness/index.ts';
import { makeTestCerts, type TestCerts } from '../harness/certs.ts';
import { createLogger } from '../../lib/log.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import { AssetManager, AssetError, applyAssetEnv, assetPathVar, type Asset } from '../../lib/assets/index.ts';

// The asset manager against a real HTTP server serving real archives built with the system `tar`;
// the unpacked asset is then used by a real child process.

const work = tempDir('monitor-assets');
const logLines: string[] = [];
const log = createLogger('debug', {}, (l) => logLines.push(l));
const files = new Map<string, Buffer>();
const requests: Array<{ path: string; headers: http.IncomingHttpHeaders }> = [];
let server: http.Server;
let tlsServer: https.Server;
let certs: TestCerts;
let base = '';
let tlsBase = '';

const entity = {
  metadata: { name: 'box', namespace: 'default' },
  entity_class: 'agent',
  system: { os: 'linux', arch: 'amd64' },
} as unknown as Entity;

const sha = (b: Buffer) => createHash('sha512').update(b).digest('hex');
const sh = (cmd: string, cwd = work) => execFileSync('sh', ['-c', cmd], { cwd, stdio: 'pipe' });

/** Builds `<name>` in the work dir with `setup` (a shell script run in a fresh source dir) and `tar <flags>`. */
function build(name: string, setup: string, tarCmd = 'tar -czf "$OUT" -C src .'): Buffer {
  const dir = path.join(work, `build-${name}`);
  fs.mkdirSync(path.join(dir, 'src'), { recursive: true });
  sh(setup, path.join(dir, 'src'));
  execFileSync('sh', ['-c', tarCmd], {
    cwd: dir,
    env: { ...process.env, OUT: path.join(work, name) },
    stdio: 'pipe',
  });
  const data = fs.readFileSync(path.join(work, name));
  files.set(`/${name}`, data);
  return data;
}

function asset(name: string, file: string, extra: Partial<Asset> = {}): Asset {
  return {
    metadata: { name, namespace: 'default' },
    url: `${base}/${file}`,
    sha512: sha(files.get(`/${file}`)!),
    ...extra,
  } as Asset;
}

function manager(
  cacheDir: string,
  over: Partial<{
    rateLimit: number;
    burstLimit: number;
    disabled: boolean;
    trustedCaFile: string;
    maxDownloadBytes: number;
  }> = {},
) {
  return new AssetManager({ cacheDir, rateLimit: 100, burstLimit: 100, disabled: false, log, ...over });
}

async function rejects(p: Promise<unknown>, re: RegExp): Promise<string> {
  try {
    await p;
  } catch (err) {
    assert.instance(err, AssetError, `expected AssetError, got ${String(err)}`);
    assert.match((err as Error).message, re, (err as Error).message);
    return (err as Error).message;
  }
  assert.unreachable(`expected a rejection matching ${re}`);
  return '';
}

/** One ustar header block, for entries the system tar will not write. */
function tarHeader(name: string, type: string, linkname = '', size = 0): Buffer {
  const b = Buffer.alloc(512);
  b.write(name, 0, 'utf8');
  b.write('0000644\0', 100);
  b.write('0000000\0', 108);
  b.write('0000000\0', 116);
  b.write(size.toString(8).padStart(11, '0') + '\0', 124);
  b.write('00000000000\0', 136);
  b.write(type, 156);
  b.write(linkname, 157, 'utf8');
  b.write('ustar\0' + '00', 257, 'latin1');
  b.write('        ', 148);
  let sum = 0;
  for (const x of b) sum += x;
  b.write(sum.toString(8).padStart(6, '0') + '\0 ', 148);
  return b;
}

const hits = (p: string) => requests.filter((r) => r.path === p).length;
const cacheEntries = (dir: string) =>
  fs.existsSync(path.join(dir, 'assets')) ? fs.readdirSync(path.join(dir, 'assets')) : [];

test.before(async () => {
  const longDir = 'd'.repeat(60) + '/' + 'e'.repeat(60);
  build(
    'good.tar.gz',
    `mkdir -p bin lib include ${longDir} && printf '#!/bin/sh\\necho "hello from asset $1"\\n' > bin/hello && chmod 755 bin/hello && echo lib > lib/libx.so && echo inc > include/x.h && echo deep > ${longDir}/${'f'.repeat(80)}.txt && ln -s hello bin/hello-link && ln bin/hello bin/hello-hard`,
  );
  build(
    'pax.tar',
    `mkdir -p bin ${'p'.repeat(120)} && printf '#!/bin/sh\\necho pax\\n' > bin/hello && chmod 755 bin/hello && echo x > ${'p'.repeat(120)}/file`,
    'tar --format=pax -cf "$OUT" -C src .',
  );
  build('other.tar.gz', `mkdir bin && printf '#!/bin/sh\\necho other\\n' > bin/other && chmod 755 bin/other`);
  build('escape.tar.gz', 'echo evil > f', `tar -P -czf "$OUT" -C src f --transform 's,^f,../evil,'`);
  build(
    'absolute.tar.gz',
    'echo evil > f',
    `tar -P -czf "$OUT" -C src f --transform 's,^f,${work}/absevil,'`,
  );
  build('symlink-abs.tar.gz', 'ln -s /etc/passwd pw');
  build('symlink-up.tar.gz', 'mkdir a && ln -s ../../outside a/up');
  // Each link alone stays inside; together `e` resolves to c/d/../.. = c/../.. = outside.
  build('symlink-chain.tar.gz', 'mkdir c && ln -s . c/d && ln -s c/d/../.. e');
  build('device.tar', 'true', 'tar -cf "$OUT" -C /dev null');
  // GNU tar strips `../` from hard link targets even with -P, so this one is written by hand.
  files.set(
    '/hardlink-out.tar',
    Buffer.concat([tarHeader('g', '1', '../../etc/passwd'), Buffer.alloc(1024)]),
  );
  files.set('/not-archive', Buffer.from('just some text, not an archive\n'.repeat(40)));
  files.set(
    '/gzip-not-tar',
    Buffer.from(execFileSync('sh', ['-c', 'printf "plain text%.0s\\n" $(seq 1 100) | gzip -c'])),
  );
  files.set('/corrupt-gzip', Buffer.concat([Buffer.from([0x1f, 0x8b, 0x08, 0]), Buffer.alloc(200, 0x5a)]));
  const whole = files.get('/good.tar.gz')!;
  files.set(
    '/truncated.tar',
    Buffer.concat([tarHeader('big-file', '0', '', 4096), Buffer.alloc(1000, 0x41)]),
  );
  files.set('/truncated.tar.gz', whole.subarray(0, Math.floor(whole.length / 2)));
  for (let i = 0; i < 3; i++) build(`rate${i}.tar.gz`, `mkdir bin && echo ${i} > bin/n${i}`);

  const [port, tlsPort] = [await freePort(), await freePort()];
  base = `http://127.0.0.1:${port}`;
  tlsBase = `https://127.0.0.1:${tlsPort}`;
  const serve = (scheme: string) => (req: http.IncomingMessage, res: http.ServerResponse) => {
    requests.push({ path: `${scheme === 'https' ? 'tls:' : ''}${req.url ?? ''}`, headers: req.headers });
    if (req.url === '/redirect') {
      res.writeHead(302, { location: '/good.tar.gz' }).end();
      return;
    }
    if (req.url === '/redirect-away') {
      res.writeHead(302, { location: `${tlsBase}/good.tar.gz` }).end();
      return;
    }
    if (req.url === '/big-declared') {
      res.writeHead(200, { 'content-length': 5000 }).end(Buffer.alloc(5000));
      return;
    }
    if (req.url === '/big-chunked') {
      // no length given: the cap applies while streaming
      res.writeHead(200);
      for (let i = 0; i < 5; i++) res.write(Buffer.alloc(1000));
      res.end();
      return;
    }
    const body = files.get(req.url ?? '');
    if (!body) {
      res.writeHead(404).end('not found');
      return;
    }
    res
      .writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': body.length })
      .end(body);
  };
  server = http.createServer(serve('http'));
  await new Promise<void>((r) => server.listen(port, '127.0.0.1', r));
  certs = makeTestCerts();
  tlsServer = https.createServer(
    { cert: fs.readFileSync(certs.serverCert), key: fs.readFileSync(certs.serverKey) },
    serve('https'),
  );
  await new Promise<void>((r) => tlsServer.listen(tlsPort, '127.0.0.1', r));
});

test.after(async () => {
  server?.closeAllConnections();
  tlsServer?.closeAllConnections();
  await new Promise((r) => server?.close(r));
  await new Promise((r) => tlsServer?.close(r));
  removeTempDir(work);
});

test('a good tar.gz asset is fetched, verified, unpacked and runs from the returned env', async () => {
  const cache = path.join(work, 'cache-good');
  const m = manager(cache);
  const a = asset('hello-asset', 'good.tar.gz');
  const env = await m.prepare([a], entity);
  const dir = path.join(cache, 'assets', a.sha512!);
  assert.equal(env.path, [path.join(dir, 'bin')]);
  assert.equal(env.libraryPath, [path.join(dir, 'lib')]);
  assert.equal(env.includePath, [path.join(dir, 'include')]);
  assert.equal(env.env, { HELLO_ASSET_PATH: dir });
  assert.ok(
    fs.existsSync(path.join(dir, 'd'.repeat(60), 'e'.repeat(60), 'f'.repeat(80) + '.txt')),
    'GNU long name unpacked',
  );
  assert.equal(fs.readlinkSync(path.join(dir, 'bin', 'hello-link')), 'hello');
  assert.equal(
    fs.statSync(path.join(dir, 'bin', 'hello-hard')).ino,
    fs.statSync(path.join(dir, 'bin', 'hello')).ino,
  );

  const childEnv = applyAssetEnv({ PATH: '/usr/bin:/bin', LD_LIBRARY_PATH: '/opt/lib' }, env);
  assert.equal(childEnv.PATH, `${path.join(dir, 'bin')}:/usr/bin:/bin`);
  assert.equal(childEnv.LD_LIBRARY_PATH, `${path.join(dir, 'lib')}:/opt/lib`);
  assert.equal(childEnv.CPATH, path.join(dir, 'include'));
  const run = spawnSync('sh', ['-c', 'hello world && hello-link x && echo "$HELLO_ASSET_PATH"'], {
    env: childEnv,
    encoding: 'utf8',
  });
  assert.equal(run.status, 0, run.stderr);
  assert.equal(run.stdout, `hello from asset world\nhello from asset x\n${dir}\n`);
  assert.equal(cacheEntries(cache), [a.sha512!], 'only the finished asset directory is left in the cache');
});

test('a plain (pax) tar is accepted', async () => {
  const cache = path.join(work, 'cache-pax');
  const env = await manager(cache).prepare([asset('pax', 'pax.tar')], entity);
  const run = spawnSync('hello', [], {
    env: applyAssetEnv({ PATH: '/usr/bin:/bin' }, env),
    encoding: 'utf8',
  });
  assert.equal(run.stdout, 'pax\n');
  assert.ok(fs.existsSync(path.join(env.env.PAX_PATH!, 'p'.repeat(120), 'file')), 'pax long path unpacked');
});

test('concurrent requests share one download; a cached asset is not fetched again, also after a restart', async () => {
  const cache = path.join(work, 'cache-shared');
  const a = asset('shared', 'other.tar.gz');
  const before = hits('/other.tar.gz');
  const m = manager(cache);
  const envs = await Promise.all([m.prepare([a], entity), m.prepare([a], entity), m.prepare([a], entity)]);
  assert.equal(hits('/other.tar.gz') - before, 1);
  assert.equal(envs[0], envs[2]);
  await m.prepare([a], entity);
  await manager(cache).prepare([a], entity); // a new manager = an agent restart
  assert.equal(hits('/other.tar.gz') - before, 1);
});

test('stale temp dirs of an interrupted run are removed and never used', async () => {
  const cache = path.join(work, 'cache-stale');
  fs.mkdirSync(path.join(cache, 'assets', '.tmp-deadbeef', 'bin'), { recursive: true });
  fs.writeFileSync(path.join(cache, 'assets', '.tmp-deadbeef.download'), 'partial');
  const a = asset('x', 'other.tar.gz');
  await manager(cache).prepare([a], entity);
  assert.equal(cacheEntries(cache), [a.sha512!]);
});

test('headers are sent, and redirects are followed', async () => {
  const cache = path.join(work, 'cache-headers');
  const a = {
    ...asset('hdr', 'good.tar.gz'),
    url: `${base}/redirect`,
    headers: { 'X-Asset-Token': 'abc123', Accept: 'application/gzip' },
  } as Asset;
  await manager(cache).prepare([a], entity);
  const r = requests.filter((x) => x.path === '/redirect').at(-1)!;
  assert.equal(r.headers['x-asset-token'], 'abc123');
  assert.equal(r.headers.accept, 'application/gzip');
  assert.equal(requests.at(-1)!.path, '/good.tar.gz');
  assert.equal(requests.at(-1)!.headers['x-asset-token'], 'abc123', 'same-origin redirect keeps headers');
  assert.not.ok(
    logLines.some((l) => l.includes('abc123')),
    'header values are not logged',
  );
});

test('HTTPS with trusted-ca-file; a cross-origin redirect does not carry the headers along', async () => {
  const good = { ...asset('tls', 'good.tar.gz'), url: `${tlsBase}/good.tar.gz` } as Asset;
  await rejects(
    manager(path.join(work, 'cache-tls-untrusted')).prepare([good], entity),
    /fetching asset tls: .*(self-signed|unable to verify|certificate)/i,
  );
  const env = await manager(path.join(work, 'cache-tls'), { trustedCaFile: certs.ca }).prepare(
    [good],
    entity,
  );
  assert.ok(fs.existsSync(path.join(env.path[0]!, 'hello')));

  const away = {
    ...asset('away', 'good.tar.gz'),
    url: `${base}/redirect-away`,
    headers: { 'X-Asset-Token': 'secret-1' },
  } as Asset;
  await manager(path.join(work, 'cache-away'), { trustedCaFile: certs.ca }).prepare([away], entity);
  assert.equal(
    requests.filter((r) => r.path === '/redirect-away').at(-1)!.headers['x-asset-token'],
    'secret-1',
  );
  const followed = requests.at(-1)!;
  assert.is(followed.path, 'tls:/good.tar.gz');
  assert.is(followed.headers['x-asset-token'], undefined);
  await rejects(
    manager(path.join(work, 'cache-tls-badca'), { trustedCaFile: path.join(work, 'no-such-ca.pem') }).prepare(
      [good],
      entity,
    ),
    /trusted-ca-file/,
  );
});

test('downloads above the size cap are refused, declared or streamed', async () => {
  const cache = path.join(work, 'cache-big');
  const zero = sha(Buffer.alloc(5000));
  for (const p of ['/big-declared', '/big-chunked']) {
    const a = { metadata: { name: 'big' }, url: `${base}${p}`, sha512: zero } as Asset;
    await rejects(
      manager(cache, { maxDownloadBytes: 1000 }).prepare([a], entity),
      /above the 1000 byte limit/,
    );
  }
  assert.equal(cacheEntries(cache), []);
});

test('a wrong checksum fails naming both sums, and nothing is cached', async () => {
  const cache = path.join(work, 'cache-badsum');
  const wrong = 'a'.repeat(128);
  const a = { ...asset('badsum', 'good.tar.gz'), sha512: wrong } as Asset;
  const msg = await rejects(manager(cache).prepare([a], entity), /badsum/);
  assert.ok(msg.includes(wrong) && msg.includes(sha(files.get('/good.tar.gz')!)), msg);
  assert.equal(cacheEntries(cache), []);
});

for (const [file, re] of [
  ['escape.tar.gz', /leaves the asset directory: \.\.\/evil/],
  ['absolute.tar.gz', /absolute path/],
  ['symlink-abs.tar.gz', /points outside/],
  ['symlink-up.tar.gz', /points outside/],
  ['symlink-chain.tar.gz', /points outside/],
  ['device.tar', /device file/],
  ['hardlink-out.tar', /hard link.*leaves the asset directory/],
  ['not-archive', /neither a tar nor a gzip/],
  ['gzip-not-tar', /not a tar archive/],
  ['corrupt-gzip', /corrupt gzip data/],
  ['truncated.tar', /truncated/],
  ['truncated.tar.gz', /unpacking: |truncated/],
] as const) {
  test(`unsafe or unusable archive refused: ${file}`, async () => {
    const cache = path.join(work, `cache-${file}`);
    await rejects(manager(cache).prepare([asset('bad', file)], entity), re);
    assert.equal(cacheEntries(cache), [], 'nothing is kept');
    assert.not.ok(
      fs.existsSync(path.join(work, 'evil')) ||
        fs.existsSync(path.join(work, 'absevil')) ||
        fs.existsSync(path.join(cache, 'evil')),
    );
  });
}

test('HTTP 404 and an unreachable server fail with a clear error', async () => {
  const cache = path.join(work, 'cache-404');
  files.set('/missing-sum', Buffer.alloc(0));
  const a = { ...asset('gone', 'missing-sum'), url: `${base}/nope.tar.gz` } as Asset;
  await rejects(manager(cache).prepare([a], entity), /gone.*HTTP 404/);
  const port = await freePort();
  const b = { ...a, url: `http://127.0.0.1:${port}/x.tar.gz` } as Asset;
  await rejects(manager(cache).prepare([b], entity), /fetching asset gone: .*ECONNREFUSED/);
  assert.equal(cacheEntries(cache), []);
});

test('the rate limit holds fetches back beyond the burst (all shared by one manager)', async () => {
  const cache = path.join(work, 'cache-rate');
  // burst 1, one token every 2 s: the second and third fetch wait their turn.
  const m = manager(cache, { rateLimit: 0.5, burstLimit: 1 });
  const paths = ['/rate0.tar.gz', '/rate1.tar.gz', '/rate2.tar.gz'];
  const seen = () => requests.filter((r) => paths.includes(r.path)).map((r) => r.path);
  const pending = new Set(
    [0, 1, 2].map((i) => {
      const p: Promise<unknown> = m
        .prepare([asset(`r${i}`, `rate${i}.tar.gz`)], entity)
        .then(() => pending.delete(p));
      return p;
    }),
  );
  // Whichever finishes first, the others have not been requested yet: one token per 2 s.
  for (let done = 1; done <= 3; done++) {
    await Promise.race(pending);
    assert.is(seen().length, done, `after ${done} finished fetch(es): ${seen().join(', ')}`);
  }
  assert.equal([...seen()].sort(), paths);
});

test('builds: the first build whose filters all match is used; top-level filters can skip the asset', async () => {
  const cache = path.join(work, 'cache-builds');
  const good = files.get('/good.tar.gz')!;
  const other = files.get('/other.tar.gz')!;
  const a = {
    metadata: { name: 'multi' },
    builds: [
      { url: `${base}/nope-windows.tar.gz`, sha512: sha(other), filters: ["entity.system.os == 'windows'"] },
      { url: `${base}/nope-error.tar.gz`, sha512: sha(other), filters: ['nosuch.thing == 1'] },
      {
        url: `${base}/nope-escape.tar.gz`,
        sha512: sha(other),
        filters: ["entity.constructor.constructor('return process')().exit(7)"],
      },
      { url: `${base}/nope-loop.tar.gz`, sha512: sha(other), filters: ['(() => { while (true) {} })()'] },
      {
        url: `${base}/nope-mutate.tar.gz`,
        sha512: sha(other),
        filters: ["(entity.system.os = 'windows') && false"],
      },
      {
        url: `${base}/good.tar.gz`,
        sha512: sha(good),
        filters: ["entity.system.os == 'linux'", "entity.system.arch == 'amd64'"],
      },
      { url: `${base}/other.tar.gz`, sha512: sha(other), filters: [] },
    ],
  } as Asset;
  const env = await manager(cache).prepare([a], entity);
  assert.equal(env.env.MULTI_PATH, path.join(cache, 'assets', sha(good)));
  assert.not.ok(
    requests.some((r) => r.path.startsWith('/nope-')),
    'no other build was fetched',
  );
  assert.ok(
    logLines.some((l) => l.includes('asset filter failed') && l.includes('nosuch')),
    'expression error logged',
  );

  const skipped = { ...asset('skip', 'other.tar.gz'), filters: ["entity.system.os == 'darwin'"] } as Asset;
  const kept = { ...asset('keep', 'other.tar.gz'), filters: ["entity.metadata.name == 'box'"] } as Asset;
  const env2 = await manager(cache).prepare([skipped, kept], entity);
  assert.equal(Object.keys(env2.env), ['KEEP_PATH']);
  assert.equal(env2.path.length, 1);
});

test('asset filters that reject a promise, leave async work, bomb memory or never end install nothing; the process goes on', async () => {
  // Regression (issue 13): under node:vm `Promise.reject(1)` reached the process's unhandled
  // rejection handler, which ends the agent.
  const cache = path.join(work, 'cache-evil');
  let rejections = 0;
  const onRejection = () => rejections++;
  process.on('unhandledRejection', onRejection);
  try {
    for (const f of [
      'Promise.reject(1)',
      '(async () => { throw 1 })()',
      `/"/.test('') || (async () => { throw 1 })() || /"/`,
      '(async () => { await 0; for (;;) {} })(), true',
      '(() => { let a = []; for (;;) a.push(new Uint8Array(1e8).fill(1)); })()',
      '(() => { let a = []; for (;;) a.push(new Uint8Array(1e6).fill(1)); })()',
      '(() => { for (;;) {} })()',
      'entity.(',
    ]) {
      const evil = { ...asset('evil', 'good.tar.gz'), filters: [f] } as Asset;
      const env = await manager(cache).prepare([evil], entity);
      assert.equal(env.env, {}, `not installed: ${f}`);
      await new Promise((r) => setTimeout(r, 20)); // an unhandled rejection would show by now
      assert.is(rejections, 0, `no unhandled rejection: ${f}`);
    }
  } finally {
    process.off('unhandledRejection', onRejection);
  }
  assert.not.ok(fs.existsSync(path.join(cache, 'assets', sha(files.get('/good.tar.gz')!))));
  assert.ok(logLines.some((l) => l.includes('asset filter failed') && l.includes('Promise')));
  const fine = { ...asset('fine', 'good.tar.gz'), filters: ["entity.system.os == 'linux'"] } as Asset;
  assert.ok((await manager(cache).prepare([fine], entity)).env.FINE_PATH);
});

test('disabled assets: any asset requested fails with a message saying so; none requested is fine', async () => {
  const cache = path.join(work, 'cache-disabled');
  const m = manager(cache, { disabled: true });
  await rejects(
    m.prepare([asset('hello-asset', 'good.tar.gz')], entity),
    /assets are disabled on this agent.*hello-asset/,
  );
  assert.equal(await m.prepare([], entity), { env: {}, path: [], libraryPath: [], includePath: [] });
  assert.not.ok(fs.existsSync(cache));
});

test('asset names become <NAME>_PATH variables', () => {
  assert.is(assetPathVar('sensu-plugins.disk_checks'), 'SENSU_PLUGINS_DISK_CHECKS_PATH');
});

test.run();
