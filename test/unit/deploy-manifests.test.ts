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
 * The rendering and lookups are in ./deploy-manifests/ (render.ts, objects.ts), and so are the
 * longer checks (stores.ts: etcd, NATS, the backend and its init step; pods.ts: the agent and every
 * workload's probes, images, security, Services and budgets).
 *
 * KUBECTL names the kubectl to render with (default `kubectl`); several, separated by spaces, must
 * render the same objects (generated names aside: each kustomize version hashes them its own way).
 */
import * as assert from 'uvu/assert';
import { test } from 'uvu';
import { all, baseName, configMapData, environment, one, podSpec } from './deploy-manifests/objects.ts';
import {
  agentSettings,
  disruptionBudgets,
  servicePorts,
  unprivileged,
  workloadBasics,
} from './deploy-manifests/pods.ts';
import { backendSettings, etcdInitialCluster, initStep, natsConfig } from './deploy-manifests/stores.ts';
import {
  EXPECTED,
  MODELS,
  NAMESPACE,
  OPERATOR_SECRETS,
  overlays,
  render,
  WORKLOADS,
} from './deploy-manifests/render.ts';

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
  const ctx = { overlay, expected, pods };

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

  test(`${overlay}: etcd's initial cluster is its replicas, each advertising its own name`, () =>
    etcdInitialCluster(ctx));

  test(`${overlay}: nats-server accepts its config, and the routes are its replicas`, () => natsConfig(ctx));

  test(`${overlay}: the backend's settings, through its own config loader, name every etcd and NATS pod`, () =>
    backendSettings(ctx));

  test(`${overlay}: the init step creates the administrator from the Secret, waiting for etcd`, () =>
    initStep(ctx));

  test(`${overlay}: the agent's settings, through its own config loader, point at the agent Service`, () =>
    agentSettings(ctx));

  test(`${overlay}: every workload has probes, requests and limits, and a pinned image`, () =>
    workloadBasics(ctx));

  test(`${overlay}: pods run unprivileged on a read-only root`, () => unprivileged(ctx));

  test(`${overlay}: Services reach declared container ports; headless ones publish unready pods`, () =>
    servicePorts(ctx));

  test(`${overlay}: a disruption budget for each StatefulSet and Deployment keeps the quorums`, () =>
    disruptionBudgets(ctx));
}

test('every overlay is checked', () => {
  assert.equal(overlays, Object.keys(EXPECTED).sort());
});

test.run();
