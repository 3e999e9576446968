import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { runService as runFor, type ServiceContext } from '../../lib/service/command.ts';
import { unitText, unitWord } from '../../lib/service/systemd.ts';
import { loadServiceOptions as loadFor } from '../../lib/service/options.ts';
import { AGENT_SERVICE } from '../../agent/service.ts';
import { BACKEND_SERVICE } from '../../gateway/node/service-unit.ts';

// The service command of both programs (lib/service): the agent's, and the backend's differences.

const runService = (argv: string[], c: ServiceContext) => runFor(AGENT_SERVICE, argv, c);
const loadServiceOptions = (argv: string[], env: NodeJS.ProcessEnv) =>
  loadFor(argv, env, AGENT_SERVICE.flags);

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
  assert.is(AGENT_SERVICE.windowsName, 'MonitorAgent');
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
  const base = {
    program: 'monitor-agent',
    description: 'monitor agent',
    defaultConfig: '/etc/monitor/agent.yml',
  };
  const t = unitText({
    ...base,
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
  assert.match(t, /^# Configuration: \/etc\/monitor\/agent.yml$/m);
  assert.match(t, /^EnvironmentFile=-\/etc\/default\/monitor-agent$/m);
  const l = unitText({ ...base, command: ['/n', '/a'], configFile: '', logFile: '/var/log/a%b.log' });
  assert.match(l, /^# Configuration: \/etc\/monitor\/agent.yml \(the default file/m);
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

test('backend: its unit, flags and usage; no Windows service, so win32 is an unsupported platform', () => {
  const c = ctx('win32');
  assert.is(runFor(BACKEND_SERVICE, ['install'], c), 1);
  assert.equal(c.errLines, [
    'monitor-backend: service install is supported on Linux (systemd) only, not on win32',
  ]);
  const h = ctx('linux');
  assert.is(runFor(BACKEND_SERVICE, ['--help'], h), 0);
  assert.match(h.outLines[0]!, /^Usage: monitor-backend service install/);
  assert.match(h.outLines[0]!, /monitor-backend\.service/);
  assert.not.match(h.outLines[0]!, /Windows/);
  const u = ctx('linux');
  assert.is(runFor(BACKEND_SERVICE, ['restart'], u), 2);
  assert.equal(u.errLines, ['monitor-backend: unknown service command "restart" (install or uninstall)']);
  assert.equal(loadFor(['-c', 'b.yml'], { MONITOR_SYSTEMD_UNIT_DIR: '/u' }, BACKEND_SERVICE.flags), {
    'config-file': 'b.yml',
    'log-file': '',
    'unit-dir': '/u',
  });
  const t = unitText({
    program: BACKEND_SERVICE.name,
    description: BACKEND_SERVICE.description,
    defaultConfig: BACKEND_SERVICE.defaultConfig,
    command: ['/usr/bin/node', '/opt/x/monitor-backend'],
    configFile: '',
    logFile: '',
    settings: BACKEND_SERVICE.settings,
  });
  assert.match(t, /^ExecStart=\/usr\/bin\/node \/opt\/x\/monitor-backend start$/m);
  assert.match(t, /^# Configuration: \/etc\/monitor\/backend.yml \(the default file/m);
  assert.match(t, /^EnvironmentFile=-\/etc\/sysconfig\/monitor-backend$/m);
  assert.match(t, /^LimitNOFILE=65536$/m);
  assert.match(t, /^TimeoutStopSec=30$/m);
});

test.run();
