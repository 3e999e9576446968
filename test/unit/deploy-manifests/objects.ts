/** Looking things up in a rendered overlay, as the kubelet and the programs would see them. */
import { spawnSync } from 'node:child_process';
import type { IContainer, IPodSpec, IProbe, IVolume } from 'kubernetes-models/v1';
import * as assert from 'uvu/assert';
import { envName } from '../../../lib/config-loader.ts';
import { resolveBinary } from '../../../lib/embedded/binaries.ts';
import type { FlagSpec } from '../../../proto/flags.ts';
import { EXPECTED, NAME_HASH, OPERATOR_SECRETS, type K8sObject } from './render.ts';

export const all = (objs: K8sObject[], kind: string) => objs.filter((o) => o.kind === kind);

export function one(objs: K8sObject[], kind: string, name: string): K8sObject {
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
export const baseName = (name: string) => name.replace(NAME_HASH, '');

export function podSpec(w: K8sObject): IPodSpec {
  const spec = w.spec?.template?.spec as IPodSpec | undefined;
  assert.ok(spec, `${w.kind} ${w.metadata.name} has a pod template`);
  return spec!;
}
export const podLabels = (w: K8sObject): Record<string, string> => w.spec.template.metadata.labels ?? {};

export function container(w: K8sObject, name: string, init = false): IContainer {
  const list = (init ? podSpec(w).initContainers : podSpec(w).containers) ?? [];
  const c = list.find((x) => x.name === name);
  assert.ok(c, `${w.kind} ${w.metadata.name} has a container ${name}`);
  return c!;
}

export const matches = (selector: Record<string, string> | undefined, labels: Record<string, string>) =>
  selector !== undefined &&
  Object.keys(selector).length > 0 &&
  Object.entries(selector).every(([k, v]) => labels[k] === v);

export function configMapData(objs: K8sObject[], name: string): Record<string, string> {
  const cm = named(objs, 'ConfigMap', name);
  assert.ok(cm, `a ConfigMap ${name}`);
  return cm!.data ?? {};
}

export function secretData(objs: K8sObject[], overlay: string, name: string): Record<string, string> {
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
export function environment(
  objs: K8sObject[],
  overlay: string,
  c: IContainer,
  pod: Pod,
): Record<string, string> {
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
export function assertKnownVariables(
  env: Record<string, string>,
  specs: FlagSpec[],
  prefix: string,
  who: string,
) {
  const known = new Set(specs.map((s) => s.env ?? envName(prefix, s.name)));
  for (const name of Object.keys(env))
    if (name.startsWith(prefix)) assert.ok(known.has(name), `${who}: ${name} is no flag's variable`);
}

/** The volume mounted at `path` or at a directory above it, and whether the container may write there. */
export function mountOf(
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
export function volumeFiles(objs: K8sObject[], volume: IVolume): Record<string, string> {
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

export function run(bin: string | undefined, what: string, args: string[], env: Record<string, string> = {}) {
  assert.ok(bin, `${what} is not installed (make setup installs it)`);
  return spawnSync(bin!, args, { encoding: 'utf8', env: { PATH: process.env.PATH, ...env } });
}

let etcdFlagNames: Set<string> | undefined;
export function etcdFlags(): Set<string> {
  if (etcdFlagNames) return etcdFlagNames;
  const help = run(resolveBinary('etcd'), 'etcd', ['--help']);
  etcdFlagNames = new Set(
    [...`${help.stdout}${help.stderr}`.matchAll(/^\s+--([a-z0-9-]+)/gm)].map((m) => m[1]!),
  );
  assert.ok(etcdFlagNames.has('initial-cluster'), 'etcd --help lists its flags');
  return etcdFlagNames;
}

export const portNumber = (c: IContainer, port: number | string): number | undefined =>
  typeof port === 'number' ? port : c.ports?.find((p) => p.name === port)?.containerPort;

export const probePort = (probe: IProbe): number | string | undefined =>
  probe.httpGet?.port ?? probe.tcpSocket?.port;

export const seconds = (s: string) => {
  const m = /^(\d+)s$/.exec(s);
  assert.ok(m, `${s} is in seconds`);
  return Number(m![1]);
};
