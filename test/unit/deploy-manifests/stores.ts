/** Invariants of the stores and the backend: etcd, NATS, the backend settings, the init step. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IVolume } from 'kubernetes-models/v1';
import * as assert from 'uvu/assert';
import { mergeSources, parseArgv, validateConfig } from '../../../lib/config-loader.ts';
import { resolveBinary } from '../../../lib/embedded/binaries.ts';
import { loadStoreAccess } from '../../../gateway/node/store-access.ts';
import {
  BACKEND_ENV_PREFIX,
  BackendConfig,
  backendFlags,
  InitConfig,
  initFlags,
} from '../../../proto/schemas/backend-config.ts';
import { tempDir } from '../../harness/tmp.ts';
import {
  assertKnownVariables,
  baseName,
  container,
  environment,
  etcdFlags,
  mountOf,
  one,
  podSpec,
  portNumber,
  probePort,
  run,
  seconds,
  volumeFiles,
} from './objects.ts';
import { BACKEND_STOP_CAP_S, NAMESPACE, render, type Overlay } from './render.ts';

/** etcd's initial cluster is its replicas, each advertising its own name */
export function etcdInitialCluster({ overlay, pods }: Overlay): void {
  const objs = render(overlay);
  const sts = one(objs, 'StatefulSet', 'etcd');
  assert.is(sts.spec.podManagementPolicy, 'Parallel', 'members start together (no quorum otherwise)');
  const headless = one(objs, 'Service', sts.spec.serviceName);
  const c = container(sts, 'etcd');
  const peerPort = portNumber(c, 'peer');
  const clientPort = portNumber(c, 'client');
  const names = pods('StatefulSet', 'etcd');
  const host = (pod: string) => `${pod}.${headless.metadata.name}.${NAMESPACE}.svc`;
  for (const pod of names) {
    const env = environment(objs, overlay, c, { name: pod, namespace: NAMESPACE, node: 'node-a' });
    for (const name of Object.keys(env))
      if (name.startsWith('ETCD_'))
        assert.ok(etcdFlags().has(name.slice(5).toLowerCase().replace(/_/g, '-')), `${name} is an etcd flag`);
    assert.is(env.ETCD_NAME, pod);
    const members = env.ETCD_INITIAL_CLUSTER!.split(',').map((m) => m.split('='));
    assert.equal(
      members,
      names.map((n) => [n, `http://${host(n)}:${peerPort}`]),
      'every replica, by pod name and peer URL',
    );
    assert.is(env.ETCD_INITIAL_ADVERTISE_PEER_URLS, `http://${host(pod)}:${peerPort}`);
    assert.is(env.ETCD_ADVERTISE_CLIENT_URLS, `http://${host(pod)}:${clientPort}`);
    assert.is(env.ETCD_INITIAL_CLUSTER_STATE, 'new');
    const data = mountOf(podSpec(sts), c, env.ETCD_DATA_DIR!);
    assert.ok(data.writable);
    assert.ok(
      (sts.spec.volumeClaimTemplates as { metadata: { name: string } }[]).some(
        (t) => t.metadata.name === data.volume,
      ),
      'the data dir is on the pod volume claim',
    );
  }
}

/** nats-server accepts its config, and the routes are its replicas */
export function natsConfig({ overlay, pods }: Overlay): void {
  const objs = render(overlay);
  const sts = one(objs, 'StatefulSet', 'nats');
  assert.is(sts.spec.podManagementPolicy, 'Parallel');
  const headless = one(objs, 'Service', sts.spec.serviceName);
  const c = container(sts, 'nats');
  const spec = podSpec(sts);
  const configPath = c.command?.[c.command.indexOf('--config') + 1];
  assert.ok(configPath && c.command?.[0] === 'nats-server', 'nats-server --config <file>');
  const volume = mountOf(spec, c, configPath!).volume;
  assert.type(volume, 'object');
  const files = volumeFiles(objs, volume as IVolume);
  const dir = tempDir('nats-config');
  for (const [name, text] of Object.entries(files)) writeFileSync(join(dir, name), text);
  const main = join(dir, configPath!.split('/').pop()!);
  const env = environment(objs, overlay, c, { name: 'nats-0', namespace: NAMESPACE, node: 'node-a' });
  const checked = run(resolveBinary('nats-server'), 'nats-server', ['-c', main, '-t'], env);
  assert.is(checked.status, 0, `nats-server -t: ${checked.stderr}${checked.stdout}`);

  const conf = Object.values(files).join('\n');
  const setting = (key: string) => new RegExp(`^\\s*${key}\\s*[:=]\\s*(\\S+)`, 'm').exec(conf)?.[1];
  assert.is(setting('server_name'), '$POD_NAME', 'each server named after its pod');
  assert.is(env.POD_NAME, 'nats-0');
  const clusterPort = portNumber(c, 'cluster');
  const routes = [...conf.matchAll(/nats:\/\/[^\s,\]]+/g)].map((m) => m[0]);
  const names = pods('StatefulSet', 'nats');
  if (names.length === 1) {
    assert.not.match(conf, /^\s*cluster\s*[{:=]/m, 'a single server runs JetStream standalone');
  } else {
    assert.equal(
      routes,
      names.map((n) => `nats://${n}.${headless.metadata.name}:${clusterPort}`),
      'a route to every replica',
    );
    const cluster = conf.slice(conf.search(/^\s*cluster\s*\{/m));
    assert.match(cluster, /^\s*no_advertise\s*[:=]\s*true\s*$/m, 'clients are given the names, not gossip');
    assert.match(cluster, new RegExp(`^\\s*listen\\s*[:=]\\s*\\S+:${clusterPort}\\s*$`, 'm'));
  }
  const store = mountOf(spec, c, setting('store_dir')!);
  assert.ok(
    (sts.spec.volumeClaimTemplates as { metadata: { name: string } }[]).some(
      (t) => t.metadata.name === store.volume,
    ),
    'the JetStream store is on the pod volume claim',
  );
  const pidFile = setting('pid_file')!;
  assert.ok(mountOf(spec, c, pidFile).writable, 'the pid file can be written');
  assert.equal(c.lifecycle?.preStop?.exec?.command, ['nats-server', '--signal', `ldm=${pidFile}`]);
  const lameDuck = seconds(setting('lame_duck_grace_period')!) + seconds(setting('lame_duck_duration')!);
  assert.ok(spec.terminationGracePeriodSeconds! > lameDuck, 'lame duck mode ends before the kill');
}

/** the backend's settings, through its own config loader, name every etcd and NATS pod */
export function backendSettings({ overlay, pods }: Overlay): void {
  const objs = render(overlay);
  const deploy = one(objs, 'Deployment', 'backend');
  const c = container(deploy, 'backend');
  const pod = { name: 'backend-5d8f7c9b6d-x2k4q', namespace: NAMESPACE, node: 'node-a' };
  const env = environment(objs, overlay, c, pod);
  assertKnownVariables(env, backendFlags, BACKEND_ENV_PREFIX, 'backend');
  assert.equal(c.args, ['start']);
  const cfg = validateConfig(
    BackendConfig,
    mergeSources({
      specs: backendFlags,
      args: parseArgv(c.args!.slice(1), backendFlags),
      env,
      envPrefix: BACKEND_ENV_PREFIX,
      configFileFlag: 'config-file',
      defaultConfigFile: join(tempDir('backend-config'), 'absent.yml'),
    }),
  );
  assert.is(cfg.name, pod.name, 'the node is named after its pod');

  const etcd = one(objs, 'StatefulSet', 'etcd');
  const etcdEnvs = pods('StatefulSet', 'etcd').map((name) =>
    environment(objs, overlay, container(etcd, 'etcd'), { name, namespace: NAMESPACE, node: 'node-a' }),
  );
  const nats = one(objs, 'StatefulSet', 'nats');
  const natsClient = portNumber(container(nats, 'nats'), 'client');
  const natsHost = `${nats.spec.serviceName}.${NAMESPACE}.svc`;
  const access = loadStoreAccess(cfg);
  assert.equal(
    access.etcd.endpoints,
    etcdEnvs.map((e) => e.ETCD_ADVERTISE_CLIENT_URLS),
  );
  assert.equal(
    access.nats.servers,
    pods('StatefulSet', 'nats').map((n) => `nats://${n}.${natsHost}:${natsClient}`),
  );
  assert.is(cfg['nats-replicas'], nats.spec.replicas, 'state buckets on every NATS server');

  assert.is(portNumber(c, 'api'), cfg['api-port']);
  assert.is(portNumber(c, 'agent'), cfg['agent-port']);
  // The legacy API: its port, named, served by the node, reached through a ClusterIP Service only,
  // with the Basic credentials of the Secret monitor-legacy-api.
  assert.is(portNumber(c, 'legacy-api'), 4567);
  assert.is(cfg['legacy-api-port'], 4567);
  const legacySvc = one(objs, 'Service', 'backend-legacy-api');
  assert.is(legacySvc.spec.type ?? 'ClusterIP', 'ClusterIP', 'the legacy API has no RBAC: not published');
  assert.equal(legacySvc.spec.ports, [{ name: 'legacy-api', port: 4567, targetPort: 'legacy-api' }]);
  for (const v of ['MONITOR_BACKEND_LEGACY_API_USER', 'MONITOR_BACKEND_LEGACY_API_PASSWORD']) {
    const e = c.env?.find((x) => x.name === v);
    assert.is(baseName(e?.valueFrom?.secretKeyRef?.name ?? ''), 'monitor-legacy-api', v);
  }
  assert.is(cfg['legacy-api-user'], 'legacy');
  assert.ok(cfg['legacy-api-password'], 'a legacy API password');
  assert.is(c.readinessProbe?.httpGet?.path, '/ready');
  assert.is(c.livenessProbe?.httpGet?.path, '/health');
  assert.is(portNumber(c, probePort(c.readinessProbe!)!), cfg['api-port']);
  assert.is(portNumber(c, probePort(c.livenessProbe!)!), cfg['api-port']);

  const spec = podSpec(deploy);
  const stateDir = mountOf(spec, c, cfg['state-dir']);
  assert.ok(
    stateDir.writable && typeof stateDir.volume === 'object' && stateDir.volume.emptyDir,
    'state dir',
  );
  const tmp = mountOf(spec, c, '/tmp');
  assert.ok(tmp.writable && typeof tmp.volume === 'object' && tmp.volume.emptyDir, '/tmp (tsx cache)');
  const sleep = c.lifecycle?.preStop?.exec?.command;
  assert.is(sleep?.[0], 'sleep');
  assert.ok(
    spec.terminationGracePeriodSeconds! >= Number(sleep![1]) + BACKEND_STOP_CAP_S,
    'the orderly stop ends before the kill',
  );
  assert.is(deploy.spec.strategy?.rollingUpdate?.maxUnavailable, 0, 'a node joins before another leaves');
}

/** the init step creates the administrator from the Secret, waiting for etcd */
export function initStep({ overlay }: Overlay): void {
  const objs = render(overlay);
  const deploy = one(objs, 'Deployment', 'backend');
  const init = container(deploy, 'init', true);
  const main = container(deploy, 'backend');
  assert.is(init.image, main.image);
  assert.is(init.args?.[0], 'init');
  assert.ok(init.args!.includes('--ignore-already-initialized') && init.args!.includes('--wait'));
  const pod = { name: 'backend-0', namespace: NAMESPACE, node: 'node-a' };
  const env = environment(objs, overlay, init, pod);
  assertKnownVariables(env, initFlags, BACKEND_ENV_PREFIX, 'init');
  const cfg = validateConfig(
    InitConfig,
    mergeSources({
      specs: initFlags,
      args: parseArgv(init.args!.slice(1), initFlags),
      env,
      envPrefix: BACKEND_ENV_PREFIX,
      configFileFlag: 'config-file',
      defaultConfigFile: join(tempDir('init-config'), 'absent.yml'),
    }),
  );
  assert.ok(cfg['ignore-already-initialized'] && cfg.wait);
  const mainEnv = environment(objs, overlay, main, pod);
  assert.is(env.MONITOR_BACKEND_ETCD_CLIENT_URLS, mainEnv.MONITOR_BACKEND_ETCD_CLIENT_URLS, 'the same etcd');
  for (const e of init.env ?? [])
    if (/ADMIN/.test(e.name)) assert.is(baseName(e.valueFrom?.secretKeyRef?.name ?? ''), 'monitor-admin');
}
