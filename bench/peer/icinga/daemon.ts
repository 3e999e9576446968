/**
 * One Icinga 2 instance as a child process of the benchmark: `icinga2 daemon` in the foreground in
 * its own process group (no systemd, no init script), ready once its REST API answers
 * `GET /v1/status` with our API user. The daemon runs as several processes (the umbrella we
 * spawn, the worker it forks, a process spawner for check commands), all in that group: memory and
 * CPU are summed over the group, and stopping signals the whole group (SIGTERM, SIGKILL after a
 * timeout), then checks that none of them is left. The harness's process registry SIGKILLs the
 * group if the benchmark dies or is interrupted first.
 */
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { freePort } from '../../../test/harness/ports.ts';
import { processGroupMembers, Proc, sleep, within } from '../../../test/harness/proc.ts';
import { note } from '../../lib/format.ts';
import { rssMb } from '../../lib/procstat.ts';
import { apiGet, basicAuth } from './api.ts';
import { icingaConf } from './objects.ts';
import { defines, instanceDirs, type InstanceDirs } from './paths.ts';
import { installCerts, type Pki } from './pki.ts';

const API_USER = 'bench';

export interface IcingaInstance {
  /** https://127.0.0.1:<port> */
  url: string;
  /** The Authorization header value (Basic). */
  auth: string;
  proc: Proc;
  dirs: InstanceDirs;
  /** Spawn until the first 200 from GET /v1/status, ms. */
  startupMs: number;
  /** Live processes of the instance (its process group). */
  pids(): number[];
  /** Resident memory of all of them together, MB. */
  rssMb(): number;
  /** SIGTERM to the group, SIGKILL after `timeoutMs`; resolves once no process of it is left. */
  stop(timeoutMs?: number): Promise<void>;
}

export interface InstanceOptions {
  bin: string;
  /** An empty directory for this instance's files. */
  root: string;
  pki: Pki;
  hosts: number;
  services: number;
  readyTimeoutMs?: number;
}

/** Writes the instance's directories, certificates and configuration; returns the config file. */
function prepare(o: InstanceOptions, port: number, password: string): { dirs: InstanceDirs; file: string } {
  const dirs = instanceDirs(o.root);
  installCerts(o.pki, dirs);
  const file = path.join(dirs.config, 'icinga2.conf');
  fs.writeFileSync(
    file,
    icingaConf({ port, user: API_USER, password, hosts: o.hosts, services: o.services }),
  );
  return { dirs, file };
}

/**
 * `icinga2 daemon -C`: loads and validates the configuration and exits; how long that takes, ms.
 * A separate figure from the start-up, which includes the same work.
 */
export function validateMs(o: InstanceOptions): number {
  // The port is not bound by a validation run.
  const { dirs, file } = prepare(o, 0, 'unused');
  const t = performance.now();
  try {
    execFileSync(o.bin, ['daemon', '-C', '-x', 'warning', '-c', file, ...defines(dirs)], {
      stdio: ['ignore', 'pipe', 'pipe'],
      encoding: 'utf8',
    });
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    throw new Error(`icinga2 daemon -C failed: ${(e.stdout ?? '') + (e.stderr ?? '') || e.message}`);
  }
  return performance.now() - t;
}

export async function startIcinga(o: InstanceOptions): Promise<IcingaInstance> {
  const port = await freePort();
  const password = `bench-${process.pid}-${port}`;
  const { dirs, file } = prepare(o, port, password);
  const url = `https://127.0.0.1:${port}`;
  const auth = basicAuth(API_USER, password);
  const t0 = performance.now();
  // Console log at warning: the information level prints a line per object type at start-up and
  // more under load, which would cost the daemon CPU and the harness memory for nothing.
  const proc = Proc.start(`icinga2:${port}`, o.bin, [
    'daemon',
    '-x',
    'warning',
    '-c',
    file,
    ...defines(dirs),
  ]);
  const pgid = proc.pid;
  const inst: IcingaInstance = {
    url,
    auth,
    proc,
    dirs,
    startupMs: NaN,
    pids: () => processGroupMembers(pgid),
    rssMb: () => processGroupMembers(pgid).reduce((a, pid) => a + (rssMb(pid) ?? 0), 0),
    async stop(timeoutMs = 15_000) {
      // SIGTERM to the umbrella process only, as its systemd unit does: it stops the worker and
      // reaps it. A SIGTERM to the whole group makes the children exit on their own, and one that
      // outlives its parent becomes a zombie of pid 1 for a while.
      if (proc.running) {
        try {
          process.kill(pgid, 'SIGTERM');
        } catch {
          /* already gone */
        }
        if ((await within(proc.exited, timeoutMs)) === undefined)
          note(`icinga2 ${pgid}: no exit ${timeoutMs} ms after SIGTERM, SIGKILL`);
      }
      await proc.stop(1000); // SIGKILL to the group if the leader is still there, then to any straggler
      for (let i = 0; i < 100 && groupPids(pgid).length > 0; i++) await sleep(20);
      const left = processGroupMembers(pgid);
      if (left.length) throw new Error(`icinga2 processes ${left.join(', ')} still running after stop`);
    },
  };
  try {
    inst.startupMs = (await waitForApi(inst, o.readyTimeoutMs ?? 60_000)) - t0;
  } catch (err) {
    await inst.stop(2000).catch(() => undefined);
    throw err;
  }
  return inst;
}

/** Polls GET /v1/status every 10 ms; resolves with the time of the first 200. */
async function waitForApi(inst: IcingaInstance, timeoutMs: number): Promise<number> {
  const end = performance.now() + timeoutMs;
  let last = 'no answer yet';
  while (performance.now() < end) {
    if (!inst.proc.running) {
      await inst.proc.drained(500);
      throw new Error(
        `icinga2 exited (${JSON.stringify(inst.proc.exit)}) before its API answered:\n${inst.proc.tail(30)}`,
      );
    }
    try {
      const r = await apiGet(inst.url, '/v1/status/IcingaApplication', inst.auth, 2000);
      if (r.status === 200) return performance.now();
      last = `${r.status} ${r.body.slice(0, 200)}`;
    } catch (err) {
      last = (err as Error).message;
    }
    await sleep(10);
  }
  throw new Error(
    `icinga2's API did not answer within ${timeoutMs} ms (last: ${last}):\n${inst.proc.tail(30)}`,
  );
}

/** Every pid in process group `pgid`, zombies included (processGroupMembers leaves them out). */
function groupPids(pgid: number): number[] {
  const out: number[] = [];
  for (const e of fs.readdirSync('/proc')) {
    if (!/^\d+$/.test(e)) continue;
    try {
      const stat = fs.readFileSync(`/proc/${e}/stat`, 'utf8');
      if (Number(stat.slice(stat.lastIndexOf(')') + 2).split(' ')[2]) === pgid) out.push(Number(e));
    } catch {
      /* gone */
    }
  }
  return out;
}
