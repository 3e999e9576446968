import type { Command } from 'commander';
import { usageError } from '../errors.ts';
import type { CommandGroup } from './registry.ts';

// `monitorctl completion bash|zsh`: a completion script made from the command tree as registered,
// so commands added by any group complete too. The script walks the words typed so far to the
// deepest known command (aliases included) and offers its subcommands and options.

interface Tree {
  /** `'|check'` or `'check|list'` → the canonical path `check list`, for every name and alias. */
  children: [string, string][];
  /** Canonical path → the words offered there. */
  words: [string, string[]][];
}

const longOptions = (cmd: Command) =>
  cmd.options
    .filter((o) => !o.hidden)
    .flatMap((o) => [o.long, o.short].filter((x): x is string => Boolean(x)));

function walk(cmd: Command, path: string, globals: string[], tree: Tree): void {
  const subs = cmd.commands.filter((c) => !(c as Command & { _hidden?: boolean })._hidden);
  const words = [...subs.map((c) => c.name()), ...longOptions(cmd), ...globals, '--help'];
  if (path === '' && subs.length) words.unshift('help');
  tree.words.push([path, [...new Set(words)]]);
  for (const c of subs) {
    const childPath = path ? `${path} ${c.name()}` : c.name();
    for (const n of [c.name(), ...c.aliases()]) tree.children.push([`${path}|${n}`, childPath]);
    walk(c, childPath, globals, tree);
  }
}

const quote = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;

/** The two lookup functions both shells run (POSIX `case`, valid in bash and zsh alike). */
function functions(program: Command): string {
  const tree: Tree = { children: [], words: [] };
  walk(program, '', longOptions(program), tree);
  const child = tree.children.map(([k, v]) => `    ${quote(k)}) echo ${quote(v)} ;;`).join('\n');
  const words = tree.words.map(([k, v]) => `    ${quote(k)}) echo ${quote(v.join(' '))} ;;`).join('\n');
  return `_monitorctl_child() {
  case "$1" in
${child}
  esac
}
_monitorctl_words() {
  case "$1" in
${words}
  esac
}
`;
}

function bash(program: Command): string {
  return `# bash completion of monitorctl: source <(monitorctl completion bash)
${functions(program)}_monitorctl() {
  local cur="\${COMP_WORDS[COMP_CWORD]}" cpath="" next i
  for ((i = 1; i < COMP_CWORD; i++)); do
    case "\${COMP_WORDS[i]}" in -*) continue ;; esac
    next="$(_monitorctl_child "$cpath|\${COMP_WORDS[i]}")"
    [ -n "$next" ] && cpath="$next"
  done
  COMPREPLY=($(compgen -W "$(_monitorctl_words "$cpath")" -- "$cur"))
}
complete -F _monitorctl monitorctl
`;
}

function zsh(program: Command): string {
  return `#compdef monitorctl
# zsh completion of monitorctl: source <(monitorctl completion zsh) after compinit,
# or save it as _monitorctl in a folder of $fpath.
${functions(program)}_monitorctl() {
  local cpath="" next i
  for ((i = 2; i < CURRENT; i++)); do
    case "\${words[i]}" in -*) continue ;; esac
    next="$(_monitorctl_child "$cpath|\${words[i]}")"
    [ -n "$next" ] && cpath="$next"
  done
  compadd -- \${=$(_monitorctl_words "$cpath")}
}
if [ "$funcstack[1]" = "_monitorctl" ]; then
  _monitorctl "$@"
else
  compdef _monitorctl monitorctl
fi
`;
}

export const completionCommand: CommandGroup = {
  register(program, deps) {
    program
      .command('completion')
      .argument('<shell>', 'bash or zsh')
      .description('print a shell completion script (bash: source <(monitorctl completion bash))')
      .action((shell: string) => {
        if (shell === 'bash') deps.out.write(bash(program));
        else if (shell === 'zsh') deps.out.write(zsh(program));
        else throw usageError(`completion: "${shell}" is not bash or zsh`);
      });
  },
};
