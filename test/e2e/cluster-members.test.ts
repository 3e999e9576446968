// suite-timeout: 120
import { test } from '../harness/uvu.ts';
import * as assert from 'uvu/assert';
import { adminAuth, startBackend, type Backend } from '../harness/index.ts';

// A single backend with its embedded etcd: `GET /api/core/v2/cluster/members` lists the one member
// with the URLs the backend gave it, and `/health` reports it healthy in the reference's fields
// (docs/compatibility.md#cluster-members-and-member-health). The three-member external etcd cluster
// is test/cluster/members-and-sessions.test.ts.

let backend: Backend;

test.before(async () => {
  backend = await startBackend({ name: 'solo' });
});
test.after(async () => {
  await backend?.stop();
});

test('the embedded etcd is the one member, with the URLs the backend gave it', async () => {
  const res = await fetch(`${backend.apiUrl}/api/core/v2/cluster/members`, { headers: adminAuth });
  assert.is(res.status, 200);
  const text = await res.text();
  const body = JSON.parse(text);
  assert.is(body.members.length, 1);
  const [m] = body.members;
  assert.equal(m.clientURLs, [backend.embedded!.etcdClientUrl]);
  assert.equal(m.peerURLs, [backend.embedded!.etcdPeerUrl]);
  assert.type(m.ID, 'number');
  assert.match(text, /"ID":\d+/);
  assert.type(body.header.cluster_id, 'number');
});

test('/health reports the embedded member healthy beside our own fields', async () => {
  const res = await fetch(`${backend.apiUrl}/health?timeout=3`);
  assert.is(res.status, 200);
  const text = await res.text();
  const body = JSON.parse(text);
  assert.is(body.node, 'solo');
  assert.is(body.etcd.healthy, true);
  assert.is(body.ClusterHealth.length, 1);
  const [h] = body.ClusterHealth;
  assert.is(h.Healthy, true);
  assert.is(h.Err, '');
  const id = /"MemberID":(\d+)/.exec(text)![1]!;
  assert.is(h.MemberIDHex, BigInt(id).toString(16));
  assert.is(body.Alarms, null);
  assert.match(text, /"Header":\{"cluster_id":\d+/);
});

test.run();
