import { Hono } from 'hono';
import type { ApiEnv, ApiServices } from '../env.ts';
import { ApiError } from '../errors.ts';
import { authorize } from '../http.ts';
import { memberListBody, uint64Json } from '../cluster-shapes.ts';

/**
 * `GET /cluster/members`: the etcd cluster's members as etcd lists them, in the reference's shape.
 * `cluster` is a cluster-wide RBAC resource, so only a ClusterRoleBinding grants it
 * (docs/compatibility.md#cluster-members-and-member-health). Adding, updating and removing members
 * is etcd's own business here (etcdctl), not the API's.
 */
export function clusterRoutes(svc: ApiServices): Hono<ApiEnv> {
  const app = new Hono<ApiEnv>();
  app.get('/cluster/members', async (c) => {
    authorize(c, svc, { verb: 'list', resource: 'cluster' });
    const list = await svc.clusterMembers().catch((err: Error) => {
      throw new ApiError('unavailable', `etcd did not list its members: ${err.message}`);
    });
    return c.body(uint64Json(memberListBody(list)), 200, { 'Content-Type': 'application/json' });
  });
  return app;
}
