import type { Command } from 'commander';
import type { CliConfigFile, CliContext } from '../../proto/schemas/cli-config.ts';
import { checkFormat, ENV, type Settings } from '../config/settings.ts';
import type { CliDeps } from '../deps.ts';
import { usageError } from '../errors.ts';
import { unixTime, type Column } from '../output/columns.ts';
import { printItem, printList, type Printable } from '../output/printer.ts';
import type { CommandGroup } from './registry.ts';

// `monitorctl config ...`: look at and change the contexts of the configuration file. Nothing here
// ever prints a token or an API key: `view` says which credential is in use, never its value.

type Row = Record<string, string>;

/** A printable of flat string records: one column per key, the record as its own wrapped form. */
const rowsPrintable = (keys: [string, string][]): Printable<Row> => ({
  columns: keys.map(([key, header]): Column<Row> => ({ header, value: (r) => r[key] ?? '' })),
  wrap: (r) => r,
});

function credentialText(s: Settings): string {
  const c = s.credential;
  if (c.kind === 'none') return 'none';
  const from = c.source === 'flag' ? 'flag' : c.source === 'env' ? 'environment' : 'context';
  if (c.kind === 'api-key') return `API key (${from})`;
  const exp =
    c.source === 'context' && s.context?.expires_at ? `, expires ${unixTime(s.context.expires_at)}` : '';
  return `access token (${from}${exp})`;
}

const sourceText = (src: string) => (src === 'env' ? 'environment' : src);

function authText(ctx: CliContext): string {
  if (ctx.api_key) return 'API key';
  if (ctx.access_token) return ctx.username ? `user "${ctx.username}"` : 'access token';
  return 'none';
}

/** The context a `config set-*` changes: --context or MONITOR_CONTEXT, else the current one. */
function targetContext(deps: CliDeps, cmd: Command, file: CliConfigFile): string {
  const name = deps.flags(cmd).context || deps.env[ENV.context] || file.current_context;
  if (!name) throw usageError('no current context: run `monitorctl configure` first');
  if (!file.contexts[name]) throw usageError(`no context "${name}"`);
  return name;
}

export const configCommands: CommandGroup = {
  register(program, deps) {
    const config = program
      .command('config')
      .description('show and change the saved contexts (~/.config/monitor/monitorctl.json)')
      .usage('<command> [options]');

    config
      .command('view')
      .description('show the settings in effect and where each comes from (secrets never shown)')
      .action((_o: unknown, cmd: Command) => {
        const s = deps.settings(cmd);
        const row: Row = {
          config_file: deps.store.path,
          context: s.contextName ? `${s.contextName}${s.context ? '' : ' (not configured)'}` : '',
          url: s.url ?? '',
          url_source: sourceText(s.sources.url),
          namespace: s.namespace,
          namespace_source: sourceText(s.sources.namespace),
          format: s.format,
          format_source: sourceText(s.sources.format),
          timeout: `${s.timeoutMs / 1000}s`,
          trusted_ca_file: s.trustedCaFile ?? '',
          insecure_skip_tls_verify: String(s.insecureSkipTlsVerify),
          username:
            s.context && s.credential.kind !== 'none' && s.credential.source === 'context'
              ? (s.context.username ?? '')
              : '',
          credential: credentialText(s),
        };
        printItem(
          deps.out,
          deps.format(cmd),
          rowsPrintable([
            ['config_file', 'Config file'],
            ['context', 'Context'],
            ['url', 'API URL'],
            ['url_source', '  from'],
            ['namespace', 'Namespace'],
            ['namespace_source', '  from'],
            ['format', 'Format'],
            ['format_source', '  from'],
            ['timeout', 'Timeout'],
            ['trusted_ca_file', 'Trusted CA file'],
            ['insecure_skip_tls_verify', 'Insecure TLS'],
            ['username', 'Username'],
            ['credential', 'Credential'],
          ]),
          row,
        );
      });

    config
      .command('list-contexts')
      .description('list the saved contexts (* marks the current one)')
      .action((_o: unknown, cmd: Command) => {
        const file = deps.store.load();
        const rows: Row[] = Object.entries(file.contexts).map(([name, ctx]) => ({
          current: name === file.current_context ? '*' : '',
          name,
          url: ctx.url,
          namespace: ctx.namespace,
          format: ctx.format,
          auth: authText(ctx),
        }));
        printList(
          deps.out,
          deps.format(cmd),
          rowsPrintable([
            ['current', 'Current'],
            ['name', 'Name'],
            ['url', 'URL'],
            ['namespace', 'Namespace'],
            ['format', 'Format'],
            ['auth', 'Auth'],
          ]),
          rows,
        );
      });

    config
      .command('use-context')
      .argument('<name>')
      .description('make a saved context the current one')
      .action((name: string) => {
        deps.store.update((cfg) => {
          if (!cfg.contexts[name])
            throw usageError(
              `no context "${name}"; known: ${Object.keys(cfg.contexts).join(', ') || 'none'}`,
            );
          cfg.current_context = name;
        });
        deps.out.write(`Using context "${name}"\n`);
      });

    config
      .command('delete-context')
      .argument('<name>')
      .description('forget a saved context and its credentials (no logout: see `monitorctl logout`)')
      .action((name: string) => {
        deps.store.update((cfg) => {
          if (!cfg.contexts[name]) throw usageError(`no context "${name}"`);
          delete cfg.contexts[name];
          if (cfg.current_context === name) delete cfg.current_context;
        });
        deps.out.write(`Deleted context "${name}"\n`);
      });

    config
      .command('set-namespace')
      .argument('<namespace>')
      .description('set the namespace of the current context (or of --context NAME)')
      .action((namespace: string, _o: unknown, cmd: Command) => {
        const name = targetContext(deps, cmd, deps.store.load());
        deps.store.patchContext(name, { namespace });
        deps.out.write(`Namespace of context "${name}" set to "${namespace}"\n`);
      });

    config
      .command('set-format')
      .argument('<format>', 'tabular, json, wrapped-json, yaml, template=TEXT or jsonpath=TEXT')
      .description('set the output format of the current context (or of --context NAME)')
      .action((format: string, _o: unknown, cmd: Command) => {
        checkFormat(format, 'config set-format');
        const name = targetContext(deps, cmd, deps.store.load());
        deps.store.patchContext(name, { format });
        deps.out.write(`Format of context "${name}" set to "${format}"\n`);
      });
  },
};
