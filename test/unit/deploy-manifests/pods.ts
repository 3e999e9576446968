/** Invariants of the agent and of every workload: settings, probes, images, security, Services, budgets. */
import { writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { IVolume } from 'kubernetes-models/v1';
import * as assert from 'uvu/assert';
import { loadAgentConfig } from '../../../agent/config.ts';
import { AGENT_CONFIG_FILE, AGENT_ENV_PREFIX, agentFlags } from '../../../proto/schemas/agent-config.ts';
import { tempDir } from '../../harness/tmp.ts';
import {
  all,
  assertKnownVariables,
  container,
  environment,
  matches,
  mountOf,
  one,
  podLabels,
  podSpec,
  portNumber,
  probePort,
  secretData,
  volumeFiles,
} from './objects.ts';
import { NAMESPACE, render, VERSION, WORKLOADS, type Overlay } from './render.ts';

/** the agent's settings, through its own config loader, point at the agent Service */
export function agentSettings({ overlay }: Overlay): void {
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
}

/** every workload has probes, requests and limits, and a pinned image */
export function workloadBasics({ overlay }: Overlay): void {
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
          if (port !== undefined) assert.ok(portNumber(c, port), `${where}: probe port ${port} is declared`);
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
}

/** pods run unprivileged on a read-only root */
export function unprivileged({ overlay }: Overlay): void {
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
}

/** Services reach declared container ports; headless ones publish unready pods */
export function servicePorts({ overlay, expected }: Overlay): void {
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
}

/** a disruption budget for each StatefulSet and Deployment keeps the quorums */
export function disruptionBudgets({ overlay }: Overlay): void {
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
}
