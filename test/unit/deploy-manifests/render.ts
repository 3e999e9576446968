/** Rendering deploy/k8s overlays with `kubectl kustomize`, and what this suite expects of each one. */
import { spawnSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { readdirSync, readFileSync } from 'node:fs';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { DaemonSet, Deployment, StatefulSet } from 'kubernetes-models/apps/v1';
import { PodDisruptionBudget } from 'kubernetes-models/policy/v1';
import { ConfigMap, Namespace, Secret, Service } from 'kubernetes-models/v1';
import * as assert from 'uvu/assert';
import { parseAllDocuments } from 'yaml';

const ROOT = fileURLToPath(new URL('../../..', import.meta.url));
const OVERLAYS = join(ROOT, 'deploy/k8s/overlays');
export const VERSION = (JSON.parse(readFileSync(join(ROOT, 'package.json'), 'utf8')) as { version: string })
  .version;
const KUBECTLS = (process.env.KUBECTL || 'kubectl').split(/\s+/).filter(Boolean);
export const NAMESPACE = 'monitor';
/** The backend cuts an orderly stop short after this (--shutdown-timeout's default, proto/schemas/backend-config.ts). */
export const BACKEND_STOP_CAP_S = 20;

/** What each overlay is for; an overlay missing here fails, so a new one gets its expectations. */
export const EXPECTED: Record<
  string,
  { replicas: number; serviceType: 'ClusterIP' | 'LoadBalancer'; secrets: boolean }
> = {
  dev: { replicas: 1, serviceType: 'ClusterIP', secrets: true },
  prod: { replicas: 3, serviceType: 'LoadBalancer', secrets: false },
};

/** Secrets the operator creates for an overlay that generates none (docs/operations-kubernetes.md#credentials). */
export const OPERATOR_SECRETS: Record<string, Record<string, string>> = {
  'monitor-admin': { username: 'admin', password: 'a-placeholder-password', 'api-key': randomUUID() },
  'monitor-agent': { username: 'agent', password: 'another-placeholder' },
  // Optional: the legacy API's Basic credentials (docs/operations-kubernetes.md#legacy-api).
  'monitor-legacy-api': { username: 'legacy', password: 'a-third-placeholder' },
};

export interface K8sObject {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  spec?: any;
  data?: Record<string, string>;
}

type Validated = new (data: never) => { validate(): void };
export const MODELS: Record<string, Validated> = {
  'v1/Namespace': Namespace,
  'v1/ConfigMap': ConfigMap,
  'v1/Secret': Secret,
  'v1/Service': Service,
  'apps/v1/StatefulSet': StatefulSet,
  'apps/v1/Deployment': Deployment,
  'apps/v1/DaemonSet': DaemonSet,
  'policy/v1/PodDisruptionBudget': PodDisruptionBudget,
};
export const WORKLOADS = new Set(['StatefulSet', 'Deployment', 'DaemonSet']);

// Rendering

/** kustomize's name suffix: a hash in an alphabet without vowels, different in each kustomize version. */
export const NAME_HASH = /-[bcdfghkmt2456789]{10}\b/g;

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
export function render(overlay: string): K8sObject[] {
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

export const overlays = readdirSync(OVERLAYS, { withFileTypes: true })
  .filter((e) => e.isDirectory())
  .map((e) => e.name)
  .sort();

/** One overlay under test: its name, what it is expected to be, and the pod names of a workload. */
export interface Overlay {
  overlay: string;
  expected: (typeof EXPECTED)[string];
  pods(kind: string, name: string): string[];
}
