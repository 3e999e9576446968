import type { AgentConfig } from '../proto/schemas/agent-config.ts';
import type { Entity } from '../proto/schemas/entity.ts';
import { createLogger, type Logger } from '../lib/log.ts';
import { BackendConnection, type ConnectionOptions } from './connection.ts';
import { buildEntity } from './entity.ts';
import { readEntityConfig, withManaged, type ManagedFields } from './entity-config.ts';
import { DEREGISTER_CLOSE_REASON, ENTITY_DELETED_CLOSE } from '../proto/frames.ts';
import { EventRefusedError, prepareEvent, type EventSink } from './events/prepare.ts';
import { Outbox, type OutboxStats } from './outbox/index.ts';
import type { Event } from '../proto/schemas/event.ts';
import { buildKeepalive } from './keepalive.ts';
import type { Listener } from './listen.ts';
import { closeAll, startLocalInputs } from './listeners.ts';
import { startLegacyInputs } from './legacy/sockets/index.ts';
import { systemInfo, type SystemInfo } from '../lib/system.ts';
import { loadAgentTls, type AgentTls } from './tls.ts';
import { CheckExecutor } from './checks/index.ts';
import type { LegacyCheckMode } from './checks/legacy.ts';
import { loadAllowList } from './checks/allow-list.ts';
import type { AllowListEntry } from '../proto/schemas/check-request.ts';
import { baseCommandEnv } from './command-env.ts';
import { AssetManager } from '../lib/assets/index.ts';
import { extractMetrics } from './metrics/index.ts';
import type { LegacySettings } from '../proto/legacy/client-definition.ts';
import { entityLegacy } from './legacy/agent-config.ts';
import { StandaloneChecks } from './legacy/standalone.ts';

// Wires the agent's parts together: the connection, keepalives, the outbox every local source
// submits to (HTTP API, sockets, StatsD, the check runner), so each stays ignorant of the others.

/** How long events reuse the host facts of the last keepalive (the reference refreshes them every 20 s). */
const SYSTEM_MAX_AGE_MS = 20_000;

interface AgentOptions {
  logger?: Logger;
  /** Uniform in [0, 1): URL shuffle and backoff jitter. */
  random?: () => number;
  /** Host facts; tests replace them with fixed ones. */
  system?: () => SystemInfo;
  /** TLS material already read (bin/agent.ts reads it to report bad files); read from the config otherwise. */
  tls?: AgentTls;
  /** The allow list already read (bin/agent.ts reads it to report a bad file); read from the config otherwise. */
  allowList?: AllowListEntry[];
  /** A legacy client definition this agent runs (docs/compatibility.md#legacy-client); `config` already follows it. */
  legacy?: LegacySettings;
}

function connectionOptions(
  config: AgentConfig,
  logger: Logger,
  random?: () => number,
  tls: AgentTls = loadAgentTls(config),
): ConnectionOptions {
  return {
    urls: config['backend-url'],
    namespace: config.namespace,
    agentName: config.name,
    user: config.user,
    password: config.password,
    subscriptions: config.subscriptions,
    handshakeTimeout: config['backend-handshake-timeout'],
    heartbeatInterval: config['backend-heartbeat-interval'],
    heartbeatTimeout: config['backend-heartbeat-timeout'],
    protobuf: config.protobuf,
    retry: { min: config['retry-min'], max: config['retry-max'], multiplier: config['retry-multiplier'] },
    logger,
    random,
    tls,
  };
}

export class Agent implements EventSink {
  readonly connection: BackendConnection;
  readonly log: Logger;
  private readonly system: () => SystemInfo;
  private keepaliveTimer: NodeJS.Timeout | undefined;
  private sequence = 0;
  private stopping: Promise<void> | undefined;
  private listeners: Listener[] = [];
  private outbox: Outbox | undefined;
  /** The backend's stored entity fields (entity_config); they override the flags. */
  private managed: ManagedFields | undefined;
  private systemCache: { at: number; info: SystemInfo } | undefined;
  readonly checks: CheckExecutor;
  /** A legacy client's standalone checks (its own schedule); none otherwise. */
  private readonly standalone: StandaloneChecks | undefined;
  /** The legacy client definition this agent runs, if any. */
  readonly legacy: LegacySettings | undefined;
  /** The definition as the entity carries it (redacted, no signature), made once. */
  private readonly legacyEntity: Record<string, unknown> | undefined;

  constructor(
    readonly config: AgentConfig,
    opts: AgentOptions = {},
  ) {
    this.log = opts.logger ?? createLogger(config['log-level'], { component: 'agent' });
    this.legacy = opts.legacy;
    this.legacyEntity = opts.legacy ? entityLegacy(opts.legacy.client) : undefined;
    this.system = opts.system ?? systemInfo;
    this.connection = new BackendConnection(connectionOptions(config, this.log, opts.random, opts.tls));
    this.connection.on('connected', ({ url, backendId }) => {
      this.log.info('connected to backend', { url, ...(backendId ? { backend_id: backendId } : {}) });
      this.startKeepalives();
      const queued = this.outbox?.stats;
      if (queued?.queued)
        this.log.info('sending queued events', { queued: queued.queued, bytes: queued.bytes });
      this.outbox?.connected();
    });
    this.connection.on('disconnected', ({ url, code, reason, retryIn }) => {
      this.stopKeepalives();
      this.outbox?.disconnected();
      const fields = { url, code, reason, ...(retryIn !== undefined ? { retry_in_seconds: retryIn } : {}) };
      // Not an outage: someone deleted this agent's entity (docs/compatibility.md#deleting-an-agents-entity-ends-its-session).
      if (code === ENTITY_DELETED_CLOSE.code)
        this.log.warn(
          'the backend ended the session: this entity was deleted; reconnecting registers it again',
          fields,
        );
      else this.log.info('disconnected', fields);
    });
    this.connection.on('ack', (a) => this.outbox?.ack(a));
    this.connection.on('entity_config', (value) => this.applyEntityConfig(value));
    const checkLog = this.log.child({ component: 'checks' });
    const assets = new AssetManager({
      cacheDir: config['cache-dir'],
      rateLimit: config['assets-rate-limit'],
      burstLimit: config['assets-burst-limit'],
      disabled: config['disable-assets'],
      log: this.log.child({ component: 'assets' }),
      ...(config['trusted-ca-file'] ? { trustedCaFile: config['trusted-ca-file'] } : {}),
    });
    this.checks = new CheckExecutor({
      log: checkLog,
      // Host facts as events reuse them (SYSTEM_MAX_AGE_MS): a busy schedule must not collect them per check.
      entity: () => this.entity(new Date(), false),
      submit: (event) => this.submit(event),
      baseEnv: () => baseCommandEnv({ warn: (msg, fields) => checkLog.warn(msg, fields) }),
      allowList: opts.allowList ?? (config['allow-list'] ? loadAllowList(config['allow-list']) : undefined),
      disableAssets: config['disable-assets'],
      prepareAssets: (list, entity) => assets.prepare(list, entity),
      extractMetrics,
      ...(opts.legacy ? { legacy: legacyCheckMode(opts.legacy) } : {}),
    });
    this.connection.on('check_request', (value) => this.checks.handle(value));
    if (opts.legacy)
      this.standalone = new StandaloneChecks({
        clientName: opts.legacy.client.name,
        checks: opts.legacy.checks,
        request: (value) => this.checks.handle(value),
        log: checkLog,
      });
  }

  get connected(): boolean {
    return this.connection.connected;
  }

  /**
   * This agent's entity: the flags and host facts, with the backend's stored fields over them. As the
   * next keepalive carries it unless `freshFacts` is false, which lets events reuse recent host facts.
   */
  entity(now: Date = new Date(), freshFacts = true): Entity {
    const entity = withManaged(
      buildEntity(this.config, this.systemFacts(now, freshFacts), now),
      this.managed,
    );
    if (this.legacyEntity) entity.legacy = this.legacyEntity;
    return entity;
  }

  /** A legacy client's signature, sent with its keepalives and events (docs/compatibility.md#legacy-client). */
  private get signature(): { signature?: string } {
    const s = this.legacy?.client.signature;
    return s ? { signature: s } : {};
  }

  /**
   * Host facts: collected afresh for every keepalive, reused for at most SYSTEM_MAX_AGE_MS by
   * events, because collecting them (network interfaces above all) cost a quarter of the agent's
   * time per event under API load.
   */
  private systemFacts(now: Date, fresh = false): SystemInfo {
    const at = now.getTime();
    if (fresh || !this.systemCache || at - this.systemCache.at >= SYSTEM_MAX_AGE_MS)
      this.systemCache = { at, info: this.system() };
    return this.systemCache.info;
  }

  /**
   * Takes an event from any local source (check runner, HTTP API, sockets, StatsD); resolves once it
   * is durable in the outbox, which sends it until the backend acknowledges it. Rejects with
   * EventRefusedError when the outbox is full (outbox-max-bytes) or the agent is not running.
   */
  async submit(event: Event): Promise<void> {
    if (!this.outbox || this.stopping)
      throw new EventRefusedError(this.stopping ? 'the agent is stopping' : 'the agent is not started');
    const now = new Date();
    const entity = this.entity(now, false);
    const prepared = prepareEvent(event, {
      entity,
      now,
      namespace: this.config.namespace,
      agentName: this.config.name,
    });
    Object.assign(prepared, this.signature);
    await this.outbox.submit(prepared);
  }

  /**
   * Takes the cache-dir (lock) and reads the outbox back; safe to call more than once. Throws
   * OutboxOpenError (one line for the operator) when another agent holds it or it is not writable.
   */
  open(): void {
    if (this.outbox || this.stopping) return;
    const conn = this.connection;
    this.outbox = new Outbox(
      {
        get connected() {
          return conn.connected;
        },
        send: (event) => conn.send('event', event),
      },
      {
        cacheDir: this.config['cache-dir'],
        maxBytes: this.config['outbox-max-bytes'],
        rate: this.config['events-rate-limit'],
        burst: this.config['events-burst-limit'],
        log: this.log.child({ component: 'outbox' }),
      },
    );
  }

  /** Queue counters for health and logs; undefined before `open`. */
  get outboxStats(): OutboxStats | undefined {
    return this.outbox?.stats;
  }

  start(): void {
    this.open();
    this.connection.start();
    this.standalone?.start();
  }

  /** Binds the local inputs (HTTP API, sockets, StatsD); rejects with a ListenError on a taken port. */
  async listen(): Promise<void> {
    this.open();
    this.listeners = await startLocalInputs({
      config: this.config,
      sink: this,
      connected: () => this.connected,
      log: this.log,
    });
    if (this.legacy) {
      try {
        this.listeners.push(
          ...(await startLegacyInputs({
            settings: this.legacy,
            sink: this,
            connected: () => this.connected,
            log: this.log,
          })),
        );
      } catch (err) {
        await closeAll(this.listeners);
        throw err;
      }
    }
  }

  /** Closes the connection with 1000; safe to call more than once. */
  stop(): Promise<void> {
    this.stopping ??= (async () => {
      this.stopKeepalives();
      this.standalone?.stop();
      await this.checks.stop();
      await closeAll(this.listeners);
      // Deregistration is asked for in the close itself, so it needs no frame the backend might miss.
      await this.connection.close(this.entity().deregister ? DEREGISTER_CLOSE_REASON : undefined);
      if (this.outbox) {
        this.log.info('event queue closed', { ...this.outbox.stats });
        await this.outbox.close();
      }
    })();
    return this.stopping;
  }

  /** Subscriptions are kept for the check runner; re-subscribing to check requests comes with it. */
  private applyEntityConfig(value: unknown): void {
    const r = readEntityConfig(value);
    if (r.kind === 'invalid') {
      this.log.warn('ignoring malformed entity config from backend', { error: r.message });
      return;
    }
    if (r.kind === 'none') {
      this.log.debug('backend stores no entity for this agent yet');
      return;
    }
    this.managed = r.fields;
    this.log.info('entity config applied', {
      subscriptions: r.fields.subscriptions,
      deregister: r.fields.deregister,
    });
  }

  // The first keepalive goes out at once: it is what registers the agent and clears a keepalive
  // alert raised while it was away. The sequence restarts so the backend can tell a new session.
  private startKeepalives(): void {
    this.stopKeepalives();
    this.sequence = 0;
    this.sendKeepalive();
    this.keepaliveTimer = setInterval(() => this.sendKeepalive(), this.config['keepalive-interval'] * 1000);
  }

  private stopKeepalives(): void {
    clearInterval(this.keepaliveTimer);
    this.keepaliveTimer = undefined;
  }

  private sendKeepalive(): void {
    const now = new Date();
    const event = buildKeepalive({
      config: this.config,
      entity: this.entity(now),
      sequence: this.sequence + 1,
      now,
    });
    if (this.connection.send('keepalive', { ...event, ...this.signature })) this.sequence++;
  }
}

/** The check executor's legacy mode: tokens from the (unredacted) definition, its checks, safe mode. */
function legacyCheckMode(legacy: LegacySettings): LegacyCheckMode {
  return { client: () => legacy.client, checks: legacy.checks, safeMode: legacy.client.safe_mode };
}
