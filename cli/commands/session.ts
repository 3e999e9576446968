import type { Command } from 'commander';
import { authenticator } from '../auth/credentials.ts';
import { logout, refresh } from '../auth/session-api.ts';
import { ENV } from '../config/settings.ts';
import type { CliDeps } from '../deps.ts';
import { CliError, usageError } from '../errors.ts';
import type { CommandGroup } from './registry.ts';

// `monitorctl logout` ends the context's session on the server and forgets its credentials;
// `monitorctl env` prints the settings as shell variables, with a freshly refreshed token.

/** A value as one single-quoted shell word. */
const shellQuote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

async function logoutAction(deps: CliDeps, cmd: Command): Promise<void> {
  const s = deps.settings(cmd);
  const name = s.contextName;
  const ctx = s.context;
  if (!name || !ctx) throw usageError('no current context: nothing to log out of');
  let problem: string | undefined;
  if (ctx.access_token) {
    const ep = deps.endpoint({ ...s, url: ctx.url });
    try {
      let access = ctx.access_token;
      // The logout route takes a valid access token: an expired one is refreshed first.
      if (ctx.refresh_token && ctx.expires_at !== undefined && ctx.expires_at <= Date.now() / 1000)
        access = (await refresh(ep, { access_token: access, refresh_token: ctx.refresh_token })).access_token;
      await logout(ep, access);
    } catch (err) {
      // A session the server no longer knows is as good as logged out.
      if (!(err instanceof CliError && err.kind === 'auth')) problem = (err as Error).message;
    }
  }
  deps.store.patchContext(name, {
    access_token: undefined,
    refresh_token: undefined,
    expires_at: undefined,
    api_key: undefined,
  });
  if (problem)
    throw new CliError(
      'failure',
      `credentials of context "${name}" forgotten, but the server's logout failed: ${problem}`,
    );
  deps.out.write(`Logged out of context "${name}"\n`);
}

async function envAction(deps: CliDeps, cmd: Command, o: { unset?: boolean }): Promise<void> {
  const names = [
    ENV.url,
    ENV.namespace,
    ENV.format,
    ENV.accessToken,
    ENV.apiKey,
    ENV.trustedCaFile,
    ENV.insecureSkipTlsVerify,
  ];
  if (o.unset) {
    deps.out.write(names.map((n) => `unset ${n}\n`).join(''));
    return;
  }
  const s = deps.settings(cmd);
  const ep = deps.endpoint(s);
  const vars: [string, string][] = [
    [ENV.url, ep.base.href.replace(/\/+$/, '')],
    [ENV.namespace, s.namespace],
    [ENV.format, s.format],
  ];
  const c = s.credential;
  if (c.kind === 'api-key') vars.push([ENV.apiKey, c.key]);
  else if (c.kind === 'token') {
    const ctx = s.contextName && s.context ? { name: s.contextName, value: s.context } : undefined;
    const auth = authenticator(c, ep, deps.store, ctx);
    // A fresh token: its whole lifetime is left for the shell that takes it.
    await auth.renew();
    vars.push([ENV.accessToken, (await auth.header())!.replace(/^Bearer /, '')]);
  }
  if (s.trustedCaFile) vars.push([ENV.trustedCaFile, s.trustedCaFile]);
  if (s.insecureSkipTlsVerify) vars.push([ENV.insecureSkipTlsVerify, 'true']);
  deps.out.write(
    vars.map(([k, v]) => `export ${k}=${shellQuote(v)}\n`).join('') +
      '# Configure your shell with:\n#   eval "$(monitorctl env)"\n',
  );
}

export const sessionCommands: CommandGroup = {
  register(program, deps) {
    program
      .command('logout')
      .description("end the context's session on the server and forget its tokens (or its API key)")
      .action((_o: unknown, cmd: Command) => logoutAction(deps, cmd));

    program
      .command('env')
      .description('print shell commands that set MONITOR_ variables to the settings in effect')
      .option('--unset', 'print commands that unset them instead')
      .action((o: { unset?: boolean }, cmd: Command) => envAction(deps, cmd, o));
  },
};
