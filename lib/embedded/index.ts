// Embedded etcd and nats-server for a backend started without external cluster URLs.
export { resolveBinary, type EmbeddedBinary } from './binaries.ts';
export { checkPortsFree, hostPortOfUrl, parseHostPort, PortInUseError } from './ports.ts';
export { Supervisor, type SupervisorOptions } from './supervisor.ts';
export type { EmbeddedService } from './service.ts';
export { startEmbeddedEtcd, type EmbeddedEtcdOptions } from './etcd.ts';
export { startEmbeddedNats, type EmbeddedNatsOptions } from './nats.ts';
export { claimStateDir } from './state-dir.ts';
