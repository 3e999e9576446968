/**
 * `make cluster-down`: stops every process of the cluster by its pid file (and only a process whose
 * command line is the one started), the agent and HAProxy first, then the backends (so they hand
 * their shards over while NATS and etcd still serve), then NATS, then etcd. The data stays unless
 * CLUSTER_WIPE=1 or `make cluster-wipe`.
 */
import { existsSync, rmSync } from 'node:fs';
import { clusterDir, savedConfig, savedConfigFile } from './config.ts';
import { stopProcess } from './processes.ts';
import { processes, STOP_ORDER, type ProcessSpec } from './topology.ts';

/** Stops `specs` kind by kind in STOP_ORDER (the members of one kind together); false when one would not die. */
export async function stopAll(specs: ProcessSpec[], report: (line: string) => void): Promise<boolean> {
  let allGone = true;
  for (const kind of STOP_ORDER) {
    const results = await Promise.all(
      specs.filter((s) => s.kind === kind).map(async (s) => ({ s, r: await stopProcess(s) })),
    );
    for (const { s, r } of results) {
      if (r.outcome === 'still running') allGone = false;
      const how =
        r.outcome === 'killed'
          ? `killed (no exit within ${s.stopTimeoutMs / 1000}s of SIGTERM)`
          : r.outcome === 'not ours'
            ? 'not running (the pid in its pid file is another program now: left alone)'
            : r.outcome;
      report(`  ${s.name.padEnd(10)} ${r.pid === undefined ? '' : `pid ${r.pid} `}${how}`);
    }
  }
  return allGone;
}

/** `down`: returns the exit status. */
export async function down(root: string, wipe: boolean): Promise<number> {
  const dir = clusterDir(process.env, root);
  const c = savedConfig(dir);
  if (!c) {
    process.stdout.write(`no cluster in ${dir} (nothing to stop)\n`);
    return 0;
  }
  process.stdout.write(`stopping the cluster in ${dir}\n`);
  const allGone = await stopAll(processes(c), (line) => process.stdout.write(`${line}\n`));
  if (!allGone) {
    process.stderr.write('make cluster-down: a process would not die even after SIGKILL; data kept\n');
    return 1;
  }
  // Only a folder `up` made (it holds cluster.json) is removed, whatever CLUSTER_DIR says.
  if (wipe && existsSync(savedConfigFile(dir))) {
    rmSync(dir, { recursive: true, force: true });
    process.stdout.write(`removed ${dir}\n`);
  } else {
    process.stdout.write(`data kept in ${dir} (make cluster-wipe removes it)\n`);
  }
  return 0;
}
