import type { LegacyServices } from '../env.ts';
import type { LegacyRoute } from '../router.ts';
import { aggregateRoutes } from './aggregates.ts';
import { checkRoutes } from './checks.ts';
import { silencedRoutes } from './silenced.ts';
import { stashRoutes } from './stashes.ts';
import { systemRoutes } from './system.ts';
import { registryRoutes } from './registry.ts';

/** Every route of the legacy API, in matching order (a route before another that would also match). */
/** `protectedApi`: the API has credentials of its own, so `/settings?redacted=false` may show secrets. */
export function legacyRoutes(svc: LegacyServices, protectedApi: boolean): LegacyRoute[] {
  return [
    ...systemRoutes(svc, protectedApi),
    ...registryRoutes(svc),
    ...checkRoutes(svc),
    ...aggregateRoutes(svc),
    ...silencedRoutes(svc),
    ...stashRoutes(svc),
  ];
}
