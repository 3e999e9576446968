import type { LegacySettings } from '../../../proto/legacy/client-definition.ts';
import type { Logger } from '../../../lib/log.ts';
import type { EventSink } from '../../events/prepare.ts';

/** What every legacy input needs. */
export interface LegacyInputDeps {
  /** The client definition the agent runs: `socket`, `http_socket` and `redact` are read, `/settings` shows it all. */
  settings: LegacySettings;
  /** The agent: it completes each event (entity, signature) and resolves once the outbox holds it. */
  sink: EventSink;
  /** Whether the agent is connected to a backend (shown by `GET /info`). */
  connected: () => boolean;
  log: Logger;
}
