import type { LegacyServices } from '../env.ts';
import type { LegacyRoute } from '../router.ts';
import { clientRoutes } from './clients.ts';
import { eventRoutes } from './events.ts';
import { resultRoutes } from './results.ts';

/** The legacy registry's routes: events (and resolve), results, clients. */
export function registryRoutes(svc: LegacyServices): LegacyRoute[] {
  return [...eventRoutes(svc), ...resultRoutes(svc), ...clientRoutes(svc)];
}
