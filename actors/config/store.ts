import { etcdKeys } from '../../proto/names.ts';
import type { Logger } from '../../proto/log.ts';
import type { EtcdAdapter, EtcdRecord } from '../runtime/etcd.ts';

/**
 * Every node's view of the configuration in etcd: listed once, then kept current by a watch, so
 * reads on hot paths (agent handshakes, routing) never touch etcd.
 */
export class ConfigStore {
  private readonly values = new Map<string, unknown>();
  private watch: { close(): Promise<void> } | undefined;
  private ready!: Promise<void>;

  constructor(private readonly etcd: EtcdAdapter, private readonly log: Logger) {}

  start(): Promise<void> {
    let resolveReady!: () => void;
    this.ready = new Promise((r) => { resolveReady = r; });
    const decode = (r: EtcdRecord) => { try { return JSON.parse(r.value); } catch { return undefined; } };
    this.watch = this.etcd.watchPrefix(etcdKeys.configPrefix, {
      onSnapshot: (records) => {
        this.values.clear();
        for (const r of records) this.values.set(r.key, decode(r));
        resolveReady();
      },
      onEvent: (ev) => {
        if (ev.type === 'put') this.values.set(ev.record.key, decode(ev.record));
        else this.values.delete(ev.key);
      },
      onError: (err) => this.log.warn('configuration watch error, resyncing', { error: err.message }),
    });
    return this.ready;
  }

  get<T>(key: string): T | undefined { return this.values.get(key) as T | undefined; }

  list<T>(prefix: string): T[] {
    const out: T[] = [];
    for (const [k, v] of this.values) if (k.startsWith(prefix) && v !== undefined) out.push(v as T);
    return out;
  }

  async stop(): Promise<void> { await this.watch?.close(); }
}
