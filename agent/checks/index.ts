import * as v from 'valibot';
import { describeIssues } from '../../proto/schemas/common.ts';
import {
  CheckRequest,
  type RequestCheckConfig,
  type RequestHookConfig,
} from '../../proto/schemas/check-request.ts';
import type { Entity } from '../../proto/schemas/entity.ts';
import type { Event } from '../../proto/schemas/event.ts';
import type { AllowListEntry } from '../../proto/schemas/check-request.ts';
import type { Logger } from '../../lib/log.ts';
import { applyAssetEnv, type Asset, type AssetEnv } from '../../lib/assets/index.ts';
import { Asset as AssetSchema } from '../../proto/schemas/resources/assets.ts';
import { checkAllowed, DENIED_OUTPUT } from './allow-list.ts';
import { buildCheckEvent, type Execution, type ExtractMetrics, type HookResult } from './event.ts';
import { selectHooks } from './hooks.ts';
import { CheckIntake } from './intake.ts';
import { runCommand } from './run-command.ts';
import { substituteTokens, tokenData, TokenSubstitutionError } from './tokens.ts';
import {
  IN_PROGRESS_WARNING,
  legacyDuration,
  planLegacy,
  type LegacyCheckMode,
  type LegacyPlan,
} from './legacy.ts';
import { classicCheck, selectClassicHook, type ClassicHook } from '../legacy/checks/definition.ts';
import { substituteLegacyTokensDeep, unmatchedOutput } from '../legacy/checks/tokens.ts';

// Runs the checks the backend asks for, in the order of docs/compatibility.md#check-execution: tokens,
// assets, the command (allow list, env_vars, stdin, timeout), hooks, then one event to the outbox. Every
// failure before the command runs becomes a status 3 event, so the operator sees why a check did not run.

interface CheckExecutorDeps {
  log: Logger;
  /** The agent's entity now: token data, and the entity `stdin` hands to the command. */
  entity: () => Entity;
  submit: (event: Event) => Promise<void>;
  /** The environment every command starts from (agent/command-env.ts), before its own variables. */
  baseEnv: () => Record<string, string>;
  allowList?: AllowListEntry[];
  disableAssets: boolean;
  /** The asset seam (lib/assets): fetches what a command needs; rejects with a message for the event. */
  prepareAssets?: (assets: Asset[], entity: Entity) => Promise<AssetEnv>;
  /** The metric-extraction seam (agent/metrics). */
  extractMetrics?: ExtractMetrics;
  /** A legacy client's executor (docs/compatibility.md#legacy-client): its tokens, local checks, safe mode. */
  legacy?: LegacyCheckMode;
}

const NO_ASSETS: AssetEnv = { env: {}, path: [], libraryPath: [], includePath: [] };
const DEFAULT_HOOK_TIMEOUT = 60;
const NO_TOKENS_IN = new Set(['sha512']);

class CheckFailure extends Error {}

export class CheckExecutor {
  private readonly intake = new CheckIntake();
  private readonly running = new Set<Promise<void>>();
  private readonly abort = new AbortController();

  constructor(private readonly deps: CheckExecutorDeps) {}

  /** Takes a decoded `check_request` payload; never throws. */
  handle(value: unknown): void {
    if (this.abort.signal.aborted) {
      this.deps.log.debug('check request ignored: the agent is stopping');
      return;
    }
    const r = v.safeParse(CheckRequest, value);
    if (!r.success) {
      this.deps.log.warn('ignoring malformed check request', { error: describeIssues(r.issues) });
      return;
    }
    const req = r.output;
    const plan = this.deps.legacy ? planLegacy(req, this.deps.legacy) : undefined;
    const name = req.config.metadata.name;
    // A local definition's `source` names the client the check is about: it is part of the in-progress key.
    const proxy = (plan ?? req).config.proxy_entity_name || undefined;
    const admission = this.intake.admit(name, proxy, req.issued);
    if (!admission.ok) {
      const fields = { check: name, issued: req.issued, ...(proxy ? { proxy_entity_name: proxy } : {}) };
      if (admission.reason === 'in_progress' && plan) this.deps.log.warn(IN_PROGRESS_WARNING, fields);
      else if (admission.reason === 'in_progress')
        this.deps.log.info(`check request refused: ${admission.message}`, fields);
      else this.deps.log.debug(`check request refused: ${admission.message}`, fields);
      return;
    }
    this.deps.log.debug('check request accepted', { check: name, issued: req.issued });
    const p = (plan ? this.executeLegacy(req, plan, this.deps.legacy!) : this.execute(req))
      .catch((e: unknown) =>
        this.deps.log.error('check execution failed', { check: name, error: (e as Error).message }),
      )
      .finally(() => {
        this.intake.done(admission.key);
        this.running.delete(p);
      });
    this.running.add(p);
  }

  /** Resolves when every check running now has finished. */
  async idle(): Promise<void> {
    while (this.running.size) await Promise.allSettled([...this.running]);
  }

  /**
   * The agent is stopping: no new checks, running commands and hooks are killed (their process
   * groups) and their results dropped, as the reference's agent cancels them on shutdown.
   */
  async stop(): Promise<void> {
    if (this.running.size) this.deps.log.info('stopping running checks', { running: this.running.size });
    this.abort.abort();
    await this.idle();
  }

  private async execute(req: CheckRequest): Promise<void> {
    const issued = req.issued;
    const entity = this.deps.entity();
    let config: RequestCheckConfig = req.config;
    let hooks: RequestHookConfig[] = req.hooks ?? [];
    let assets = req.assets ?? [];
    let hookAssets = req.hook_assets ?? {};
    const fail = (message: string, status = 3) =>
      this.send(buildCheckEvent({ config, issued, run: failed(message, status), log: this.deps.log }));
    // The backend could not resolve a secret (docs/compatibility.md#secrets): not run without it.
    if (req.secret_errors?.length)
      return fail(`check secrets could not be resolved by the backend: ${req.secret_errors.join('; ')}`);
    try {
      const data = tokenData(entity);
      config = substituteTokens(req.config, data);
      hooks = substituteTokens(hooks, data);
      // An asset's checksum is what it is; only its URL, headers and filters take tokens.
      assets = substituteTokens(assets, data, NO_TOKENS_IN);
      hookAssets = substituteTokens(hookAssets, data, NO_TOKENS_IN);
    } catch (e) {
      if (e instanceof TokenSubstitutionError) return fail(e.message);
      throw e;
    }
    const prepared = await this.commandEnv(config, assets as Asset[], req.secrets, entity);
    if ('fail' in prepared) return fail(prepared.fail, prepared.status);
    const stdin = config.stdin ? JSON.stringify({ entity, check: { ...config, issued } }) + '\n' : undefined;
    const run = await this.runCheck(config, prepared.env, stdin);
    if (!run) return;
    const selection = selectHooks(config, hooks, run.status);
    if (selection.missing.length)
      this.deps.log.warn('check hooks missing from the request', {
        check: config.metadata.name,
        hooks: selection.missing,
      });
    const hookResults: HookResult[] = [];
    for (const hook of selection.hooks) {
      if (this.abort.signal.aborted) return;
      hookResults.push(await this.runHook(hookAssets, hook, issued, entity, config));
    }
    if (this.abort.signal.aborted) return;
    await this.send(
      buildCheckEvent({
        config,
        issued,
        run,
        hooks: hookResults,
        extractMetrics: this.deps.extractMetrics,
        log: this.deps.log,
      }),
    );
  }

  /**
   * A legacy client's run (docs/compatibility.md#legacy-client): the plan (local definition, safe mode),
   * `:::attr|default:::` tokens from the client definition (unmatched: not run, status 3), `{client, check}`
   * on stdin, the legacy hook by status or severity name; the result keeps the command and hooks as
   * defined, so a secret a token filled in is never published.
   */
  private async executeLegacy(req: CheckRequest, plan: LegacyPlan, mode: LegacyCheckMode): Promise<void> {
    const issued = req.issued;
    const entity = this.deps.entity();
    const refuse = (config: RequestCheckConfig, message: string) =>
      this.send(
        buildCheckEvent({
          config: { ...config, handle: false },
          issued,
          run: failed(message),
          log: this.deps.log,
        }),
      );
    if (!plan.run) return refuse(plan.config, plan.output);
    const client = mode.client();
    const substituted = substituteLegacyTokensDeep(plan.config, client);
    if (substituted.unmatched.length) return refuse(plan.config, unmatchedOutput(substituted.unmatched));
    const config = substituted.value;
    const fail = (message: string, status = 3) =>
      this.send(
        buildCheckEvent({
          config: { ...config, command: plan.config.command },
          issued,
          run: failed(message, status),
          log: this.deps.log,
        }),
      );
    const prepared = await this.commandEnv(config, (req.assets ?? []) as Asset[], req.secrets, entity);
    if ('fail' in prepared) return fail(prepared.fail, prepared.status);
    const stdinOf = (check: RequestCheckConfig) =>
      JSON.stringify({
        client,
        check: classicCheck(
          check,
          issued,
          plan.hooks && substituteLegacyTokensDeep(plan.hooks, client).value,
        ),
      }) + '\n';
    const run = await this.runCheck(config, prepared.env, config.stdin ? stdinOf(config) : undefined);
    if (!run) return;
    const hookResults: HookResult[] = [];
    let classic: Record<string, ClassicHook> | undefined;
    if (plan.hooks) {
      const chosen = selectClassicHook(plan.hooks, run.status);
      classic = { ...plan.hooks };
      if (chosen)
        classic[chosen.key] = await this.runClassicHook(chosen.hook, client, stdinOf({ ...config, ...run }));
    } else {
      const selection = selectHooks(config, req.hooks ?? [], run.status);
      for (const hook of selection.hooks) {
        if (this.abort.signal.aborted) return;
        const sub = substituteLegacyTokensDeep(hook, client);
        hookResults.push(
          sub.unmatched.length
            ? { ...hook, ...failed(unmatchedOutput(sub.unmatched)), issued }
            : await this.runHook(req.hook_assets ?? {}, sub.value, issued, entity, config),
        );
      }
    }
    if (this.abort.signal.aborted) return;
    const event = buildCheckEvent({
      config,
      issued,
      run: { ...run, duration: legacyDuration(run.duration) },
      hooks: hookResults,
      extractMetrics: this.deps.extractMetrics,
      log: this.deps.log,
    });
    await this.send({
      ...event,
      check: { ...event.check!, command: plan.config.command, ...(classic ? { hooks: classic } : {}) },
    });
  }

  /** Assets, the allow list, `env_vars` and secrets: the command's environment, or why it cannot run. */
  private async commandEnv(
    config: RequestCheckConfig,
    assets: Asset[],
    secrets: CheckRequest['secrets'],
    entity: Entity,
  ): Promise<{ env: Record<string, string | undefined> } | { fail: string; status: number }> {
    let env: Record<string, string | undefined>;
    try {
      env = await this.environment(config.runtime_assets ?? [], assets, entity);
    } catch (e) {
      if (e instanceof CheckFailure) return { fail: e.message, status: 3 };
      throw e;
    }
    const decision = checkAllowed(this.deps.allowList, config.command, env.PATH);
    if (!decision.allowed) {
      this.deps.log.warn('check command denied by the allow list', {
        check: config.metadata.name,
        reason: decision.reason,
      });
      return { fail: DENIED_OUTPUT, status: denyStatus(config) };
    }
    // Secrets reach the command's environment only; they are never logged.
    return {
      env: withEnvVars(
        decision.enableEnv ? withEnvVars(env, config.env_vars ?? []) : env,
        secretVars(secrets),
      ),
    };
  }

  /** Runs the check's command; undefined when the agent stopped it (nothing is to be sent). */
  private async runCheck(
    config: RequestCheckConfig,
    env: Record<string, string | undefined>,
    stdin: string | undefined,
  ): Promise<Execution | undefined> {
    const run = await runCommand({
      command: config.command,
      env,
      timeout: config.timeout,
      stdin,
      signal: this.abort.signal,
    });
    if (!run.cancelled) return run;
    this.deps.log.info('check cancelled: the agent is stopping', { check: config.metadata.name });
    return undefined;
  }

  /** A legacy hook: its own tokens (unmatched: not run, status 3), 60 s by default; its fields plus the run. */
  private async runClassicHook(
    hook: ClassicHook,
    client: Record<string, unknown>,
    stdin: string,
  ): Promise<ClassicHook> {
    const sub = substituteLegacyTokensDeep(hook, client);
    if (sub.unmatched.length) return { ...hook, ...failed(unmatchedOutput(sub.unmatched)) };
    const decision = checkAllowed(this.deps.allowList, sub.value.command, this.deps.baseEnv().PATH);
    if (!decision.allowed)
      return { ...hook, ...failed(DENIED_OUTPUT.replace('check command', 'hook command')) };
    const run = await runCommand({
      command: sub.value.command,
      env: this.deps.baseEnv(),
      timeout: typeof sub.value.timeout === 'number' ? sub.value.timeout : DEFAULT_HOOK_TIMEOUT,
      stdin: sub.value.stdin === true ? stdin : undefined,
      signal: this.abort.signal,
    });
    return {
      ...hook,
      output: run.output,
      status: run.status,
      executed: run.executed,
      duration: legacyDuration(run.duration),
    };
  }

  private async runHook(
    hookAssets: NonNullable<CheckRequest['hook_assets']>,
    hook: RequestHookConfig,
    issued: number,
    entity: Entity,
    check: RequestCheckConfig,
  ): Promise<HookResult> {
    const result = (run: Execution): HookResult => ({
      ...hook,
      executed: run.executed,
      issued,
      output: run.output,
      status: run.status,
      duration: run.duration,
    });
    let env: Record<string, string | undefined>;
    try {
      const assets = (hookAssets[hook.metadata.name] as { assets?: Asset[] } | undefined)?.assets ?? [];
      env = await this.environment(hook.runtime_assets ?? [], assets, entity);
    } catch (e) {
      if (e instanceof CheckFailure) return result(failed(e.message));
      throw e;
    }
    const decision = checkAllowed(this.deps.allowList, hook.command, env.PATH);
    if (!decision.allowed) {
      this.deps.log.warn('hook command denied by the allow list', {
        check: check.metadata.name,
        hook: hook.metadata.name,
        reason: decision.reason,
      });
      return result(failed(DENIED_OUTPUT.replace('check command', 'hook command')));
    }
    const stdin = hook.stdin ? JSON.stringify({ entity, check: { ...check, issued } }) + '\n' : undefined;
    return result(
      await runCommand({
        command: hook.command,
        env,
        timeout: hook.timeout ?? DEFAULT_HOOK_TIMEOUT,
        stdin,
        signal: this.abort.signal,
      }),
    );
  }

  /** The command's environment with its assets; throws CheckFailure when they cannot be had. */
  private async environment(
    names: string[],
    assets: Asset[],
    entity: Entity,
  ): Promise<Record<string, string | undefined>> {
    const base = this.deps.baseEnv();
    if (names.length === 0) return base;
    if (this.deps.disableAssets)
      throw new CheckFailure(
        `assets are disabled on this agent (--disable-assets); the command needs: ${names.join(', ')}`,
      );
    if (!this.deps.prepareAssets) throw new CheckFailure('assets are not available on this agent');
    // The request's assets come from the backend: checked here, so a bad one fails this check only.
    const parsed = v.safeParse(v.array(AssetSchema), assets);
    if (!parsed.success)
      throw new CheckFailure(`invalid asset in the check request: ${describeIssues(parsed.issues)}`);
    const missing = names.filter((n) => !parsed.output.some((a) => a.metadata.name === n));
    if (missing.length)
      throw new CheckFailure(`the check request carries no definition of asset ${missing.join(', ')}`);
    let assetEnv = NO_ASSETS;
    try {
      assetEnv = await this.deps.prepareAssets(parsed.output, entity);
    } catch (e) {
      throw new CheckFailure(`cannot prepare assets ${names.join(', ')}: ${(e as Error).message}`);
    }
    return applyAssetEnv(base, assetEnv);
  }

  private async send(event: Event): Promise<void> {
    try {
      await this.deps.submit(event);
    } catch (e) {
      this.deps.log.warn('check result not queued', {
        check: event.check?.metadata.name,
        error: (e as Error).message,
      });
    }
  }
}

function failed(message: string, status = 3): Execution {
  return { status, output: message, executed: Math.floor(Date.now() / 1000), duration: 0 };
}

/** The reference lets a check choose the status of a denied command with an annotation. */
function denyStatus(config: RequestCheckConfig): number {
  const raw = config.metadata.annotations?.allow_list_on_deny_status;
  const n = raw !== undefined && /^\d{1,3}$/.test(raw.trim()) ? Number(raw) : NaN;
  return n >= 0 && n <= 255 ? n : 3;
}

/** Secrets of the request as KEY=VALUE strings (or {name, secret} pairs). */
function secretVars(secrets: CheckRequest['secrets']): string[] {
  if (!secrets) return [];
  if (!Array.isArray(secrets)) return Object.entries(secrets).map(([k, val]) => `${k}=${val}`);
  return secrets.flatMap((s) => {
    if (typeof s === 'string' && s.indexOf('=') > 0) return [s];
    if (
      s &&
      typeof s === 'object' &&
      typeof (s as { name?: unknown }).name === 'string' &&
      typeof (s as { secret?: unknown }).secret === 'string'
    ) {
      return [`${(s as { name: string }).name}=${(s as { secret: string }).secret}`];
    }
    return [];
  });
}

/** `env_vars` (KEY=VALUE) over the inherited environment. */
function withEnvVars(
  env: Record<string, string | undefined>,
  vars: string[],
): Record<string, string | undefined> {
  const out = { ...env };
  for (const kv of vars) {
    const i = kv.indexOf('=');
    if (i > 0) out[kv.slice(0, i)] = kv.slice(i + 1);
  }
  return out;
}
