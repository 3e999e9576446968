import type { BackendConfig } from '../../../proto/schemas/backend-config.ts';
import { buckets, streams, subjects } from '../../../proto/names.ts';
import type { Logger } from '../../../lib/log.ts';
import type { NatsAdapter } from '../../../actors/runtime/nats.ts';
import type { ConfigStore } from '../../../actors/config/store.ts';
import { WorkflowResolver } from '../../../actors/pipeline/workflows.ts';
import { DEFAULTS as WORKER, PipelineWorker } from '../../../actors/pipeline/worker.ts';
import { JobAttempts } from '../../../actors/pipeline/attempts.ts';
import { BackendAssets } from '../../../actors/pipeline/assets.ts';
import { provider, service, type Provider, type Service } from '../service.ts';

/**
 * The work queue of pipeline jobs; it exists before any actor runs, since entity turns publish to it.
 * Beside it, the bounded stream where jobs that never finish are parked.
 */
export function pipelineStreamService(cfg: BackendConfig, nats: () => NatsAdapter): Service {
  return service('pipeline stream', async () => {
    const replicas = cfg['nats-replicas'];
    await nats().workQueue(streams.pipeline, subjects.pipelinePrefix, { replicas });
    await nats().boundedStream(streams.pipelineDead, subjects.pipelineDead, { ...WORKER.dead, replicas });
  });
}

/** The environment handlers inherit: the backend's own, without its configuration (which may hold credentials). */
const handlerEnv = (env: NodeJS.ProcessEnv) =>
  Object.fromEntries(Object.entries(env).filter(([k]) => !k.startsWith('MONITOR_')));

/** The node's share of the pipeline: filters, mutators and handlers of the jobs it takes from the queue. */
export function pipelineService(
  cfg: BackendConfig,
  deps: { nats: () => NatsAdapter; config: () => ConfigStore },
  log: Logger,
): Provider<PipelineWorker> {
  return provider(
    'pipeline',
    async () => {
      const pipelineLog = log.child({ component: 'pipeline' });
      const config = deps.config();
      const attempts = await deps.nats().kv(buckets.pipelineAttempts, {
        replicas: cfg['nats-replicas'],
        ttlMs: WORKER.attemptsTtlMs,
      });
      const assets = new BackendAssets({
        config,
        stateDir: cfg['state-dir'],
        log: pipelineLog.child({ component: 'assets' }),
        node: cfg.name,
      });
      const pipeline = new PipelineWorker({
        attempts: new JobAttempts(attempts, WORKER.maxAttempts, pipelineLog),
        nats: deps.nats(),
        resolver: new WorkflowResolver(config, pipelineLog),
        log: pipelineLog,
        concurrency: cfg['pipeline-workers'],
        exec: {
          log: pipelineLog,
          baseEnv: { ...handlerEnv(process.env), MONITOR_BACKEND_NODE: cfg.name },
          assets: assets.assets,
          filterLibraries: assets.filterLibraries,
        },
      });
      await pipeline.start();
      return pipeline;
    },
    (pipeline) => pipeline.stop(),
  );
}
