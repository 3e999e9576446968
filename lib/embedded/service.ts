// The face an embedded engine shows the backend: where to connect, how to stop it, and how to learn
// that it died for good. Both etcd and nats-server are a Supervisor behind this.
import type { Supervisor } from './supervisor.ts';

export interface EmbeddedService {
  name: string;
  /** URLs clients use to reach it (wildcard listen addresses replaced by 127.0.0.1). */
  endpoints: string[];
  stop(): Promise<void>;
  onFatal(cb: (err: Error) => void): void;
  readonly pid: number | undefined;
}

export function serviceOf(name: string, endpoints: string[], supervisor: Supervisor): EmbeddedService {
  return {
    name,
    endpoints,
    stop: () => supervisor.stop(),
    onFatal: (cb) => supervisor.onFatal(cb),
    get pid() {
      return supervisor.pid;
    },
  };
}

/** Hosts that mean "every interface": fine to listen on, useless to connect to. */
export function connectableHost(host: string): string {
  return host === '0.0.0.0' || host === '::' || host === '[::]' || host === '' ? '127.0.0.1' : host;
}
