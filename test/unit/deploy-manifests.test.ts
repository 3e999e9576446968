// suite-timeout: 180
/**
 * The Kubernetes deploy (deploy/k8s), checked offline since no cluster can run here
 * (docs/operations-kubernetes.md#deploy-check): every overlay is rendered by `kubectl kustomize`, every
 * object is validated against the Kubernetes schemas (kubernetes-models), and the rendered objects
 * are held to what the programs and servers will make of them: the backend's and the agent's
 * settings go through their own config loaders, the NATS config through `nats-server -t`, etcd's
 * variables against `etcd --help`; then the topology (etcd's initial cluster, the NATS routes, the
 * backends' URL lists) against the replica counts, probes, resources, ports, images, security
 * contexts and disruption budgets.
 *
 * KUBECTL names the kubectl to render with (default `kubectl`); several, separated by spaces, must
 * render the same objects (generated names aside: each kustomize version hashes them its own way).
 */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DaemonSet, Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import type { IContainer, IPodSpec, IProbe, IVolume } from 'kubernetes-models/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import { test } from 'uvu';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';
import { loadAgentConfig } from '../../agent/config.ts';
import { envName, mergeSources, parseArgv, validateConfig } from '../../lib/config-loader.ts';
import { resolveBinary } from '../../lib/embedded/binaries.ts';
import { loadStoreAccess } from '../../gateway/node/store-access.ts';
import type { FlagSpec } from '../../proto/flags.ts';
import { AGENT_CONFIG_FILE, AGENT_ENV_PREFIX, agentFlags } from '../../proto/schemas/agent-config.ts';
import {
  BACKEND_ENV_PREFIX,
  BackendConfig,
  backendFlags,
  InitConfig,
  initFlags,
} from '../../proto/schemas/backend-config.ts';
import { tempDir } from '../harness/tmp.ts';

const ROOT = fileURLToPath(new URL('../..', import.meta.url));
const OVERLAYS = join(ROOT, 'deploy/k8s/overlays');
const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string }).version;
const KUBECTLS = (process.env.KUBECTL || 'kubectl').split(/\s+/).filter(Boolean);
const NAMESPACE = 'monitor';
/** The backend cuts an orderly stop short after this (--shutdown-timeout's default, proto/schemas/backend-config.ts). */
const BACKEND_STOP_CAP_S = 20;

/** What each overlay is for; an overlay missing here fails, so a new one gets its expectations. */
const EXPECTED: Record<
  string,
  { replicas: number; serviceType: 'ClusterIP' | 'LoadBalancer'; secrets: boolean }
> = {
  dev: { replicas: 1, serviceType: 'ClusterIP', secrets: true },
  prod: { replicas: 3, serviceType: 'LoadBalancer', secrets: false },
};

/** Secrets the operator creates for an overlay that generates none (docs/operations-kubernetes.md#credentials). */
const OPERATOR_SECRETS: Record<string, Record<string, string>> = {
  'monitor-admin': { username: 'admin', password: 'a-placeholder-password', 'api-key': randomUUID() },
  'monitor-agent': { username: 'agent', password: 'another-placeholder' },
};

interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

type Validated = new (data: never) => { validate(): void };
const MODELS: Record<string, Validated> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/Deployment': Deployment,
  'apps/v1/DaemonSet': DaemonSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};
const WORKLOADS = new Set(['StatefulSet', 'Deployment', 'DaemonSet']);

// Rendering

/** kustomize's name suffix: a hash in an alphabet without vowels, different in each kustomize version. */
const NAME_HASH = /-[bcdfghkmt2456789]{10}\b/g;

function kustomize(kubectl: string, dir: string): string {
  const r = spawnSync(kubectl, ['kustomize', dir], { encoding: 'utf8' });
  if (r.error) {
    const missing = (r.error as NodeJS.ErrnoException).code === 'ENOENT';
    throw new Error(
      missing
        ? `${kubectl} not found: \`make deploy-check\` installs it (Debian package kubernetes-client)`
        : `${kubectl}: ${r.error.message}`,
    );
  }
  if (r.status !== 0) throw new Error(`${kubectl} kustomize ${dir} failed: ${r.stderr.trim()}`);
  return r.stdout;
}

const rendered = new Map<string, K8sObject[]>();
function render(overlay: string): K8sObject[] {
  const cached = rendered.get(overlay);
  if (cached) return cached;
  const dir = join(OVERLAYS, overlay);
  const outputs = KUBECTLS.map((k) => kustomize(k, dir));
  outputs.slice(1).forEach((out, i) => {
    assert.fixture(
      out.replace(NAME_HASH, '-HASH'),
      outputs[0]!.replace(NAME_HASH, '-HASH'),
      `${KUBECTLS[i + 1]} renders ${overlay} differently from ${KUBECTLS[0]}`,
    );
  });
  const objects = parseAllDocuments(outputs[0]!).map((doc) => {
    assert.equal(doc.errors, [], `${overlay}: YAML errors`);
    return doc.toJS() as K8sObject;
  });
  rendered.set(overlay, objects);
  return objects;
}

const overlays = readdirSync(OVERLAYS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

// Looking things up in a rendering

const all = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);

function one(objs: K8sObject[], kind: string, name: string): K8sObject {
  const found = objs.filter((o) => o.kind === kind && o.metadata.name === name);
  assert.is(found.length, 1, `one ${kind} named ${name}`);
  return found[0]!;
}

/** A generated object, whatever its hash suffix; kustomize rewrote the references to it the same way. */
function named(objs: K8sObject[], kind: string, name: string): K8sObject | undefined {
  return objs.find(
    (o) => o.kind === kind && (o.metadata.name === name || baseName(o.metadata.name) === name),
  );
}
const baseName = (name: string) => name.replace(NAME_HASH, '');

function podSpec(w: K8sObject): IPodSpec {
  const spec = w.spec?.template?.spec as IPodSpec | undefined;
  assert.ok(spec, `${w.kind} ${w.metadata.name} has a pod template`);
  return spec!;
}
const podLabels = (w: K8sObject): Record<string, string> => w.spec.template.metadata.labels ?? {};

function container(w: K8sObject, name: string, init = false): IContainer {
  const list = (init ? podSpec(w).initContainers : podSpec(w).containers) ?? [];
  const c = list.find((x) => x.name === name);
  assert.ok(c, `${w.kind} ${w.metadata.name} has a container ${name}`);
  return c!;
}

const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels[k] === v);

function configMapData(objs: K8sObject[], name: string): Record<string, string> {
  const cm = named(objs, 'ConfigMap', name);
  assert.ok(cm, `a ConfigMap ${name}`);
  return cm!.data ?? {};
}

function secretData(objs: K8sObject[], overlay: string, name: string): Record<string, string> {
  const s = named(objs, 'Secret', name);
  if (!s) {
    assert.not.ok(EXPECTED[overlay]!.secrets, `${overlay} generates the Secret ${name}`);
    const placeholder = OPERATOR_SECRETS[baseName(name)];
    assert.ok(placeholder, `${name} is neither rendered nor one the operator is told to create`);
    return placeholder!;
  }
  return Object.fromEntries(
    Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]),
  );
}

interface Pod {
  name: string;
  namespace: string;
  node: string;
}

/**
 * The container's environment as the kubelet makes it: downward API fields, ConfigMap and Secret keys
 * (a missing one is an error unless optional), and $(VAR) references to variables defined before.
 */
function environment(objs: K8sObject[], overlay: string, c: IContainer, pod: Pod): Record<string, string> {
  const env: Record<string, string> = {};
  for (const e of c.env ?? []) {
    if (e.value !== undefined) {
      env[e.name] = e.value.replace(/\$\$|\$\(([A-Za-z_][A-Za-z0-9_]*)\)/g, (m, ref: string | undefined) =>
        m === '$$' ? '$' : ref !== undefined && ref in env ? env[ref]! : m,
      );
      continue;
    }
    const from = e.valueFrom;
    assert.ok(from, `${c.name}: ${e.name} has a value`);
    if (from!.fieldRef) {
      const fields: Record<string, string> = {
        'metadata.name': pod.name,
        'metadata.namespace': pod.namespace,
        'spec.nodeName': pod.node,
      };
      const v = fields[from!.fieldRef.fieldPath];
      assert.ok(v !== undefined, `${c.name}: ${e.name} from an unexpected field ${from!.fieldRef.fieldPath}`);
      env[e.name] = v!;
    } else if (from!.configMapKeyRef) {
      const ref = from!.configMapKeyRef;
      const v = configMapData(objs, ref.name!)[ref.key];
      assert.ok(
        v !== undefined || ref.optional,
        `${c.name}: ${e.name}: ConfigMap ${ref.name} has ${ref.key}`,
      );
      if (v !== undefined) env[e.name] = v;
    } else if (from!.secretKeyRef) {
      const ref = from!.secretKeyRef;
      const v = secretData(objs, overlay, ref.name!)[ref.key];
      assert.ok(v !== undefined || ref.optional, `${c.name}: ${e.name}: Secret ${ref.name} has ${ref.key}`);
      if (v !== undefined) env[e.name] = v;
    } else assert.unreachable(`${c.name}: ${e.name}: an unexpected valueFrom`);
  }
  return env;
}

/** Every variable with the program's prefix names one of its flags: a misspelt one would be ignored. */
function assertKnownVariables(env: Record<string, string>, specs: FlagSpec[], prefix: string, who: string) {
  const known = new Set(specs.map((s) => s.env ?? envName(prefix, s.name)));
  for (const name of Object.keys(env))
    if (name.startsWith(prefix)) assert.ok(known.has(name), `${who}: ${name} is no flag's variable`);
}

/** The volume mounted at `path` or at a directory above it, and whether the container may write there. */
function mountOf(
  spec: IPodSpec,
  c: IContainer,
  path: string,
): { volume: IVolume | string; writable: boolean } {
  const mount = (c.volumeMounts ?? [])
    .filter((m) => path === m.mountPath || path.startsWith(m.mountPath.replace(/\/?$/, '/')))
    .sort((a, b) => b.mountPath.length - a.mountPath.length)[0];
  assert.ok(mount, `${c.name}: ${path} is on a mounted volume`);
  const volume = (spec.volumes ?? []).find((v) => v.name === mount!.name);
  return { volume: volume ?? mount!.name, writable: !mount!.readOnly };
}

/** The files a config volume shows: each ConfigMap's keys, or the items it maps to paths. */
function volumeFiles(objs: K8sObject[], volume: IVolume): Record<string, string> {
  const sources = volume.configMap
    ? [volume.configMap]
    : (volume.projected?.sources ?? []).map((s) => s.configMap).filter((s) => s !== undefined);
  assert.ok(sources.length > 0, `volume ${volume.name} shows ConfigMaps`);
  const files: Record<string, string> = {};
  for (const src of sources) {
    const data = configMapData(objs, src!.name!);
    if (src!.items) for (const item of src!.items) files[item.path] = data[item.key]!;
    else Object.assign(files, data);
  }
  return files;
}

function run(bin: string | undefined, what: string, args: string[], env: Record<string, string> = {}) {
  assert.ok(bin, `${what} is not installed (make setup installs it)`);
  return spawnSync(bin!, args, { encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });
}

let etcdFlagNames: Set<string> | undefined;
function etcdFlags(): Set<string> {
  if (etcdFlagNames) return etcdFlagNames;
  const help = run(resolveBinary('etcd'), 'etcd', ['--help']);
  etcdFlagNames = new Set(
    [...`${help.stdout}${help.stderr}`.matchAll(/^\s+--([a-z0-9-]+)/gm)].map((m) => m[1]!),
  );
  assert.ok(etcdFlagNames.has('initial-cluster'), 'etcd --help lists its flags');
  return etcdFlagNames;
}

const portNumber = (c: IContainer, port: number | string): number | undefined =>
  typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;

const probePort = (probe: IProbe): number | string | undefined =>
  probe.httpGet?.port ?? probe.tcpSocket?.port;

const seconds = (s: string) => {
  const m = /^(\d+)s$/.exec(s);
  assert.ok(m, `${s} is in seconds`);
  return Number(m![1]);
};

// The suites

for (const overlay of overlays) {
  const expected = EXPECTED[overlay];
  const pods = (kind: string, name: string) => {
    const w = one(render(overlay), kind, name);
    const n = w.spec.replicas as number;
    return Array.from({ length: n }, (_, i) => `${name}-${i}`);
  };

  test(`${overlay}: has its expectations in this suite`, () => {
    assert.ok(expected, `add the overlay ${overlay} to EXPECTED`);
  });
  if (!expected) continue;

  test(`${overlay}: renders, and every object is valid against the Kubernetes schema`, () => {
    const objs = render(overlay);
    assert.ok(objs.length > 0);
    for (const o of objs) {
      const Model = MODELS[`${o.apiVersion}/${o.kind}`];
      assert.ok(Model, `${o.apiVersion} ${o.kind} ${o.metadata?.name}: a kind this suite knows`);
      try {
        new Model!(o as never).validate();
      } catch (err) {
        assert.unreachable(`${o.kind} ${o.metadata.name}: ${(err as Error).message}`);
      }
      if (o.kind !== 'Namespace') assert.is(o.metadata.namespace, NAMESPACE, `${o.kind} ${o.metadata.name}`);
    }
    one(objs, 'Namespace', NAMESPACE);
  });

  test(`${overlay}: ${expected.replicas} of each, and every reference resolves`, () => {
    const objs = render(overlay);
    assert.is(one(objs, 'StatefulSet', 'etcd').spec.replicas, expected.replicas, 'etcd');
    assert.is(one(objs, 'StatefulSet', 'nats').spec.replicas, expected.replicas, 'nats');
    assert.is(one(objs, 'Deployment', 'backend').spec.replicas, expected.replicas, 'backend');
    for (const w of objs.filter((o) => WORKLOADS.has(o.kind))) {
      const spec = podSpec(w);
      for (const v of spec.volumes ?? []) {
        for (const src of [v.configMap, ...(v.projected?.sources ?? []).map((s) => s.configMap)]) {
          if (!src) continue;
          const data = configMapData(objs, src.name!);
          for (const item of src.items ?? []) assert.ok(item.key in data, `${src.name} has ${item.key}`);
        }
      }
      const pod = { name: `${w.metadata.name}-0`, namespace: NAMESPACE, node: 'node-a' };
      for (const c of [...(spec.initContainers ?? []), ...spec.containers])
        environment(objs, overlay, c, pod);
    }
    const secrets = all(objs, 'Secret').map((s) => baseName(s.metadata.name));
    if (expected.secrets) assert.equal(secrets.sort(), Object.keys(OPERATOR_SECRETS).sort());
    else assert.equal(secrets, [], 'no credentials shipped: the operator makes them');
  });

  test(`${overlay}: etcd's initial cluster is its replicas, each advertising its own name`, () => {
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
          assert.ok(
            etcdFlags().has(name.slice(5).toLowerCase().replace(/_/g, '-')),
            `${name} is an etcd flag`,
          );
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
  });

  test(`${overlay}: nats-server accepts its config, and the routes are its replicas`, () => {
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
  });

  test(`${overlay}: the backend's settings, through its own config loader, name every etcd and NATS pod`, () => {
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
  });

  test(`${overlay}: the init step creates the administrator from the Secret, waiting for etcd`, () => {
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
    assert.is(
      env.MONITOR_BACKEND_ETCD_CLIENT_URLS,
      mainEnv.MONITOR_BACKEND_ETCD_CLIENT_URLS,
      'the same etcd',
    );
    for (const e of init.env ?? [])
      if (/ADMIN/.test(e.name)) assert.is(baseName(e.valueFrom?.secretKeyRef?.name ?? ''), 'monitor-admin');
  });

  test(`${overlay}: the agent's settings, through its own config loader, point at the agent Service`, () => {
    const objs = render(overlay);
    const ds = one(objs, 'DaemonSet', 'agent');
    const c = container(ds, 'agent');
    const spec = podSpec(ds);
    const pod = { name: 'agent-x7k2p', namespace: NAMESPACE, node: 'node-a' };
    const env = environment(objs, overlay, c, pod);
    assertKnownVariables(env, agentFlags, AGENT_ENV_PREFIX, 'agent');
    const files = volumeFiles(objs, mountOf(spec, c, AGENT_CONFIG_FILE).volume as IVolume);
    const configFile = join(tempDir('agent-config'), 'agent.yml');
    const text = files[AGENT_CONFIG_FILE.split('/').pop()!];
    assert.type(text, 'string', `the config volume holds ${AGENT_CONFIG_FILE}`);
    writeFileSync(configFile, text!);
    assert.is(c.args?.[0], 'start');
    const cfg = loadAgentConfig(c.args!.slice(1), env, { defaultConfigFile: configFile });
    assert.is(cfg.name, pod.node, 'the entity is named after the node');
    assert.is(cfg.user, secretData(objs, overlay, 'monitor-agent').username);

    const backend = one(objs, 'Deployment', 'backend');
    const agentPort = portNumber(container(backend, 'backend'), 'agent');
    const service = all(objs, 'Service').find((s) =>
      (s.spec.ports as { targetPort: number | string }[]).some(
        (p) => portNumber(container(backend, 'backend'), p.targetPort) === agentPort,
      ),
    );
    assert.ok(service, 'a Service in front of the agent port');
    const servicePort = (service!.spec.ports as { port: number }[])[0]!.port;
    assert.equal(cfg['backend-url'], [`ws://${service!.metadata.name}.${NAMESPACE}.svc:${servicePort}`]);

    assert.ok(mountOf(spec, c, cfg['cache-dir']).writable, 'the outbox can be written');
    assert.ok(mountOf(spec, c, '/tmp').writable, '/tmp (tsx cache)');
    assert.is(cfg['api-host'], '127.0.0.1', 'events without credentials from the pod itself only');
    for (const probe of [c.readinessProbe, c.livenessProbe])
      assert.match(probe?.exec?.command?.join(' ') ?? '', `http://127.0.0.1:${cfg['api-port']}/`);
  });

  test(`${overlay}: every workload has probes, requests and limits, and a pinned image`, () => {
    const objs = render(overlay);
    for (const w of objs.filter((o) => WORKLOADS.has(o.kind))) {
      const spec = podSpec(w);
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        const where = `${w.kind} ${w.metadata.name}, container ${c.name}`;
        const isInit = spec.initContainers?.includes(c) ?? false;
        if (!isInit) {
          assert.ok(c.readinessProbe, `${where}: readiness probe`);
          assert.ok(c.livenessProbe, `${where}: liveness probe`);
          for (const probe of [c.readinessProbe, c.livenessProbe, c.startupProbe]) {
            const port = probe && probePort(probe);
            if (port !== undefined)
              assert.ok(portNumber(c, port), `${where}: probe port ${port} is declared`);
          }
        }
        assert.ok(c.resources?.requests?.cpu && c.resources.requests.memory, `${where}: requests`);
        assert.ok(c.resources?.limits?.memory, `${where}: memory limit`);
        const image = c.image ?? '';
        const m = /^([^\s:@]+(?::\d+)?(?:\/[^\s:@]+)*)(?::([\w][\w.-]*))?(?:@sha256:[0-9a-f]{64})?$/.exec(
          image,
        );
        assert.ok(m && (m[2] || image.includes('@sha256:')), `${where}: ${image} names a tag or digest`);
        assert.is.not(m![2], 'latest', `${where}: ${image} is pinned`);
        if (m![1] === 'monitor') assert.is(m![2], VERSION, `${where}: the image of this version`);
      }
    }
  });

  test(`${overlay}: pods run unprivileged on a read-only root`, () => {
    const objs = render(overlay);
    for (const w of objs.filter((o) => WORKLOADS.has(o.kind))) {
      const spec = podSpec(w);
      const where = `${w.kind} ${w.metadata.name}`;
      assert.is(spec.securityContext?.runAsNonRoot, true, `${where}: runAsNonRoot`);
      assert.ok((spec.securityContext?.runAsUser ?? 0) > 0, `${where}: a user id other than root`);
      assert.is(spec.securityContext?.seccompProfile?.type, 'RuntimeDefault', `${where}: seccomp`);
      assert.is(spec.automountServiceAccountToken, false, `${where}: no API token`);
      assert.is(spec.enableServiceLinks, false, `${where}: no <SERVICE>_PORT variables`);
      for (const c of [...(spec.initContainers ?? []), ...spec.containers]) {
        const sc = c.securityContext;
        assert.is(sc?.readOnlyRootFilesystem, true, `${where}, ${c.name}: read-only root`);
        assert.is(sc?.allowPrivilegeEscalation, false, `${where}, ${c.name}: no privilege escalation`);
        assert.ok(sc?.capabilities?.drop?.includes('ALL'), `${where}, ${c.name}: capabilities dropped`);
        assert.not.ok(sc?.capabilities?.add?.length, `${where}, ${c.name}: no capability added`);
      }
    }
  });

  test(`${overlay}: Services reach declared container ports; headless ones publish unready pods`, () => {
    const objs = render(overlay);
    const workloads = objs.filter((o) => WORKLOADS.has(o.kind));
    for (const s of all(objs, 'Service')) {
      const selected = workloads.filter((w) => matches(s.spec.selector, podLabels(w)));
      assert.ok(selected.length > 0, `Service ${s.metadata.name} selects pods`);
      for (const p of s.spec.ports as { name: string; port: number; targetPort?: number | string }[]) {
        for (const w of selected) {
          const declared = podSpec(w).containers.some((c) => portNumber(c, p.targetPort ?? p.port));
          assert.ok(declared, `Service ${s.metadata.name} port ${p.name}: ${w.metadata.name} declares it`);
        }
      }
      if (s.spec.clusterIP === 'None')
        assert.is(s.spec.publishNotReadyAddresses, true, `${s.metadata.name}: peers find each other early`);
    }
    for (const sts of all(objs, 'StatefulSet')) {
      const svc = one(objs, 'Service', sts.spec.serviceName);
      assert.is(svc.spec.clusterIP, 'None', `${sts.metadata.name}: its serviceName is headless`);
      assert.ok(
        matches(svc.spec.selector, podLabels(sts)),
        `${svc.metadata.name} selects ${sts.metadata.name}`,
      );
    }
    for (const name of ['backend-api', 'backend-agent']) {
      const s = one(objs, 'Service', name);
      assert.is(s.spec.type ?? 'ClusterIP', expected.serviceType, `${name} type`);
      if (expected.serviceType === 'LoadBalancer')
        assert.is(s.spec.externalTrafficPolicy, 'Local', `${name}: clients keep their address`);
    }
  });

  test(`${overlay}: a disruption budget for each StatefulSet and Deployment keeps the quorums`, () => {
    const objs = render(overlay);
    const budgets = all(objs, 'PodDisruptionBudget');
    for (const w of objs.filter((o) => o.kind === 'StatefulSet' || o.kind === 'Deployment')) {
      const pdb = budgets.filter((b) => matches(b.spec.selector?.matchLabels, podLabels(w)));
      assert.is(pdb.length, 1, `${w.kind} ${w.metadata.name}: one PodDisruptionBudget`);
      const spec = pdb[0]!.spec as { maxUnavailable?: number; minAvailable?: number };
      const replicas = w.spec.replicas as number;
      const left =
        spec.maxUnavailable !== undefined ? replicas - spec.maxUnavailable : (spec.minAvailable ?? replicas);
      assert.type(left, 'number', `${pdb[0]!.metadata.name}: a number, not a percentage`);
      if (w.kind === 'StatefulSet' && replicas >= 3)
        assert.ok(left > replicas / 2, `${w.metadata.name}: a majority stays up through a disruption`);
    }
  });
}

test('every overlay is checked', () => {
  assert.equal(overlays, Object.keys(EXPECTED).sort());
});

test.run();
