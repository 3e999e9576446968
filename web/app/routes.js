// @ts-check
import { Events } from './pages/events.js';
import { EventDetail } from './pages/event-detail.js';
import { Entities } from './pages/entities.js';
import { EntityDetail } from './pages/entity-detail.js';
import { Checks } from './pages/checks.js';
import { CheckDetail } from './pages/check-detail.js';
import { Silences } from './pages/silences.js';
import { Config } from './pages/config.js';
import { Legacy } from './pages/legacy.js';

/**
 * The pages, first match wins; each gets the path's parameters. Query parameters (filters, sort,
 * page, namespace) are read by the page from the route.
 * @type {Array<[string, (p: { params: Record<string, string> }) => unknown]>}
 */
export const ROUTES = [
  ['/events', Events],
  ['/events/:entity/:check', EventDetail],
  ['/entities', Entities],
  ['/entities/:name', EntityDetail],
  ['/checks', Checks],
  ['/checks/:name', CheckDetail],
  ['/silences', Silences],
  ['/config', Config],
  ['/config/:kind', Config],
  ['/legacy', Legacy],
  ['/legacy/:kind', Legacy],
];
