import { etcdKeys } from '../../proto/names.ts';
import type { EtcdAdapter } from '../../actors/runtime/etcd.ts';
import type { Logger } from '../../proto/log.ts';
import { hashPassword } from './passwords.ts';
import { AGENTS_GROUP, DEFAULT_AGENT_PASSWORD, DEFAULT_AGENT_USER, type StoredUser } from './users.ts';

/**
 * First start of a cluster: the `default` namespace and the `agent` user with the built-in
 * password, so agents can connect out of the box. Done once per cluster (guarded by a flag key),
 * so an operator who deletes them later does not see them come back.
 */
export async function seedCluster(etcd: EtcdAdapter, log: Logger): Promise<void> {
  if (await etcd.get(etcdKeys.seeded)) return;
  const agent: StoredUser = { username: DEFAULT_AGENT_USER, password_hash: await hashPassword(DEFAULT_AGENT_PASSWORD), groups: [AGENTS_GROUP], disabled: false };
  const seeded = await etcd.createAllIfAbsent(etcdKeys.seeded, String(Math.floor(Date.now() / 1000)), [
    [etcdKeys.namespace('default'), JSON.stringify({ name: 'default' })],
    [etcdKeys.user(DEFAULT_AGENT_USER), JSON.stringify(agent)],
  ]);
  if (seeded) log.info('seeded the cluster: namespace "default" and user "agent"');
}
