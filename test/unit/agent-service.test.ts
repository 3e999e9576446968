import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runService, WINDOWS_SERVICE_NAME, type ServiceContext } from '../../agent/service/index.ts';
import { unitText, unitWord } from '../../agent/service/systemd.ts';
import { loadServiceOptions } from '../../agent/service/options.ts';

function ctx(platform: NodeJS.Platform): ServiceContext & { outLines: string[]; errLines: string[] } {
  const outLines: string[] = [];
  const errLines: string[] = [];
  return {
    platform,
    env: {},
    cwd: '/srv',
    command: ['/usr/bin/node', '/opt/monitor/bin/monitor-agent'],
    out: (l) => {
      outLines.push(l);
    },
    err: (l) => {
      errLines.push(l);
    },
    outLines,
    errLines,
  };
}

test('Windows: names the MonitorAgent service and says installing is not supported', () => {
  assert.is(WINDOWS_SERVICE_NAME, 'MonitorAgent');
  for (const action of ['install', 'uninstall']) {
    const c = ctx('win32');
    assert.is(runService([action, '--config-file', 'C:\\agent.yml'], c), 1);
    assert.equal(c.errLines, [
      'monitor-agent: the Windows service is named MonitorAgent; installing or removing it is not supported by this build',
    ]);
  }
});

test('other platforms: one line, exit 1; help on any platform', () => {
  const c = ctx('darwin');
  assert.is(runService(['install'], c), 1);
  assert.equal(c.errLines, [
    'monitor-agent: service install is supported on Linux (systemd) only, not on darwin',
  ]);
  const h = ctx('win32');
  assert.is(runService(['--help'], h), 0);
  assert.match(h.outLines[0]!, /MonitorAgent/);
});

test('unit words: quoting and systemd specifiers', () => {
  assert.is(unitWord('/usr/bin/node'), '/usr/bin/node');
  assert.is(unitWord('/opt/my agent/x'), '"/opt/my agent/x"');
  assert.is(unitWord('/a/100%'), '/a/100%%');
  assert.is(unitWord('/a/$HOME'), '/a/$$HOME');
  assert.is(unitWord('say "hi"\\'), '"say \\"hi\\"\\\\"');
  assert.is(unitWord(''), '""');
});

test('unit text', () => {
  const t = unitText({
    command: ['/usr/bin/node', '/opt/x/monitor-agent'],
    configFile: '/etc/monitor/agent.yml',
    logFile: '',
  });
  assert.match(
    t,
    /^ExecStart=\/usr\/bin\/node \/opt\/x\/monitor-agent start --config-file \/etc\/monitor\/agent.yml$/m,
  );
  assert.match(t, /^Restart=always$/m);
  assert.match(t, /^User=root$/m);
  assert.not.match(t, /StandardOutput/);
  const l = unitText({ command: ['/n', '/a'], configFile: '', logFile: '/var/log/a%b.log' });
  assert.match(l, /^ExecStart=\/n \/a start$/m);
  assert.match(l, /^StandardOutput=append:\/var\/log\/a%%b.log\nStandardError=append:\/var\/log\/a%%b.log$/m);
});

test('service options: flags, MONITOR_SYSTEMD_UNIT_DIR, and nothing else from the environment', () => {
  assert.equal(loadServiceOptions([], {}), {
    'config-file': '',
    'log-file': '',
    'unit-dir': '/etc/systemd/system',
  });
  assert.equal(
    loadServiceOptions(['-c', 'a.yml', '--log-file=/l'], {
      MONITOR_CONFIG_FILE: '/x',
      MONITOR_SYSTEMD_UNIT_DIR: '/u',
    }),
    { 'config-file': 'a.yml', 'log-file': '/l', 'unit-dir': '/u' },
  );
  assert.is(loadServiceOptions(['--unit-dir', '/f'], { MONITOR_SYSTEMD_UNIT_DIR: '/u' })['unit-dir'], '/f');
  assert.throws(
    () => loadServiceOptions(['--log-file', 'a\nb'], {}),
    /--log-file: must not hold line breaks/,
  );
  assert.throws(() => loadServiceOptions(['--name', 'x'], {}), /unknown flag: --name/);
  assert.throws(() => loadServiceOptions(['extra'], {}), /unexpected argument "extra"/);
});

test.run();
