import type { Command } from 'commander';
import { authenticator } from './auth/credentials.ts';
import { ApiClient } from './client/api-client.ts';
import { parseBaseUrl, type Endpoint } from './client/http.ts';
import { configFile } from './config/paths.ts';
import { requireUrl, resolveSettings, type GlobalFlags, type Settings } from './config/settings.ts';
import { ConfigStore } from './config/store.ts';
import { parseFormat, type Format } from './output/format.ts';
import type { Out } from './output/printer.ts';

// What every command group is handed (`register(program, deps)`): the process's streams and
// environment, the configuration file, and the settings, API client and output format of the
// command being run, resolved from its global options (docs/cli.md#extending).

export interface CliIo {
  stdout: NodeJS.WritableStream & { isTTY?: boolean; columns?: number };
  stderr: NodeJS.WritableStream;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
}

export interface CliDeps {
  io: CliIo;
  env: NodeJS.ProcessEnv;
  store: ConfigStore;
  /** stdout, fitted to the terminal's width when it is one. */
  out: Out;
  /** The global options of `cmd` (set on the program or after any subcommand). */
  flags(cmd: Command): GlobalFlags;
  /** Settings of `cmd`: flag > environment > context > default. */
  settings(cmd: Command, o?: { allowNewContext?: boolean }): Settings;
  /** The server `cmd` talks to; a usage error when no URL is configured. */
  endpoint(settings: Settings): Endpoint;
  /** An API client with the credential of `cmd`'s settings (tokens refreshed and saved). */
  client(cmd: Command): ApiClient;
  /** The output format of `cmd`. */
  format(cmd: Command): Format;
  /** Whether a person can answer prompts (stdin and stdout are terminals). */
  interactive(): boolean;
}

export function makeDeps(io: CliIo, env: NodeJS.ProcessEnv): CliDeps {
  let store: ConfigStore | undefined;
  const deps: CliDeps = {
    io,
    env,
    get store() {
      store ??= new ConfigStore(configFile(env));
      return store;
    },
    out: {
      write: (text) => io.stdout.write(text),
      get width() {
        return io.stdout.isTTY ? io.stdout.columns : undefined;
      },
    },
    flags(cmd) {
      const o = cmd.optsWithGlobals<GlobalFlags>();
      return {
        url: o.url,
        apiKey: o.apiKey,
        namespace: o.namespace,
        timeout: o.timeout,
        context: o.context,
        format: o.format,
        trustedCaFile: o.trustedCaFile,
        insecureSkipTlsVerify: o.insecureSkipTlsVerify,
      };
    },
    settings: (cmd, o) => resolveSettings(deps.flags(cmd), env, deps.store.load(), o),
    endpoint: (s) => ({
      base: parseBaseUrl(requireUrl(s)),
      timeoutMs: s.timeoutMs,
      tls: { trustedCaFile: s.trustedCaFile, insecureSkipTlsVerify: s.insecureSkipTlsVerify },
    }),
    client(cmd) {
      const s = deps.settings(cmd);
      const ep = deps.endpoint(s);
      const ctx = s.contextName && s.context ? { name: s.contextName, value: s.context } : undefined;
      return new ApiClient(ep, authenticator(s.credential, ep, deps.store, ctx));
    },
    format: (cmd) => parseFormat(deps.settings(cmd).format),
    interactive: () => Boolean(io.stdin.isTTY && io.stdout.isTTY),
  };
  return deps;
}
