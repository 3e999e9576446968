import type { Logger } from '../../lib/log.ts';

/** One part of the backend node with a start and a stop: a listener, a client, a background loop. */
export interface Service {
  name: string;
  start(): Promise<void>;
  stop(): Promise<void>;
}

/** A service that makes something the services started after it use (a client, a store). */
export interface Provider<T> extends Service {
  /** What start made; throws before start, so a wrong start order fails loudly, not with undefined. */
  readonly get: () => T;
  /** Started and not stopped yet. */
  readonly started: () => boolean;
}

/** A Provider from a start that returns the product and a stop that ends it. */
export function provider<T>(
  name: string,
  start: () => Promise<T>,
  stop: (value: T) => Promise<void> = async () => {},
): Provider<T> {
  let made: { value: T } | undefined;
  return {
    name,
    get: () => {
      if (!made) throw new Error(`${name} is used before it started`);
      return made.value;
    },
    started: () => made !== undefined,
    start: async () => {
      made = { value: await start() };
    },
    stop: async () => {
      if (!made) return;
      const { value } = made;
      made = undefined;
      await stop(value);
    },
  };
}

/** A service that makes nothing for the others: a step at start, and perhaps one at stop. */
export function service(
  name: string,
  start: () => Promise<void>,
  stop: () => Promise<void> = async () => {},
): Service {
  return { name, start, stop };
}

/**
 * Starts services one after the other and stops them in the reverse order. A start that fails stops
 * the services already started (not the failed one: each start leaves nothing behind when it throws)
 * and rethrows. A stop that fails is logged and the next one still runs, so one stuck part does not
 * keep the others (and the embedded children) alive.
 */
export class ServiceRunner {
  private readonly started: Service[] = [];

  constructor(private readonly log: Logger) {}

  async start(services: Service[]): Promise<void> {
    for (const s of services) {
      const since = Date.now();
      try {
        await s.start();
      } catch (err) {
        this.log.error('service start failed', { service: s.name, error: (err as Error).message });
        await this.stop();
        throw err;
      }
      this.started.push(s);
      this.log.info('service started', { service: s.name, ms: Date.now() - since });
    }
  }

  /** Stops what started, last first; a second call finds nothing left to stop. */
  async stop(): Promise<void> {
    for (let s = this.started.pop(); s; s = this.started.pop()) {
      try {
        await s.stop();
        this.log.info('service stopped', { service: s.name });
      } catch (err) {
        this.log.warn('stop step failed', { service: s.name, error: (err as Error).message });
      }
    }
  }
}
