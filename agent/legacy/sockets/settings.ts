import type { Logger } from '../../../lib/log.ts';
import type { EventSink } from '../../events/prepare.ts';

// What the legacy sockets read of a client definition. A structural subset of the definition's type
// (proto/legacy/client-definition.ts), so the full settings fit it as they are.

interface SocketBlock {
  enabled: boolean;
  bind: string;
  port: number;
}

interface LegacySocketSettings {
  client: {
    name: string;
    signature?: string;
    redact?: string[];
    socket: SocketBlock;
    http_socket: SocketBlock & { user?: string; password?: string; protect_all_endpoints: boolean };
  };
}

/** What every legacy input needs. */
export interface LegacyInputDeps {
  settings: LegacySocketSettings;
  sink: EventSink;
  /** Whether the agent is connected to a backend (shown by `GET /info`). */
  connected: () => boolean;
  log: Logger;
}
