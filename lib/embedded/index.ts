// Embedded etcd and nats-server for a backend started without external cluster URLs.
export { resolveBinary } from './binaries.ts';
export { checkPortsFree, hostPortOfUrl, parseHostPort, PortInUseError } from './ports.ts';
export { Supervisor } from './supervisor.ts';
export type { EmbeddedService } from './service.ts';
export { startEmbeddedEtcd } from './etcd.ts';
export { startEmbeddedNats } from './nats.ts';
export { claimStateDir } from './state-dir.ts';
