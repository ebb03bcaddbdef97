import { Argument, type Command } from 'commander';
import type { Runner } from '../../action.js';
import { type CompletionFlags } from './options.js';

/** `tsnode completion bash|zsh|fish`: prints a completion script generated from this very program. */
export function declareCompletion(program: Command, runner: Runner): void {
  program
    .command('completion')
    .description('print a shell completion script (bash, zsh or fish) to stdout')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(['bash', 'zsh', 'fish']))
    .addHelpText(
      'after',
      `
Commands, flags, fixed values (--types, --type, --engine, --output, --header-prefix) and
profile names are completed; the script comes from the command definitions, so it is never stale.

Examples:
  $ source <(tsnode completion bash)                  try it in this shell
  $ echo 'source <(tsnode completion bash)' >> ~/.bashrc
  $ echo 'source <(tsnode completion zsh)' >> ~/.zshrc
  $ tsnode completion fish > ~/.config/fish/completions/tsnode.fish
  $ tsnode completion bash > ~/.local/share/bash-completion/completions/tsnode`,
    )
    .action((shell: CompletionFlags['shell']) => runner(() => import('./action.js').then((m) => m.completionAction), { shell, program }));
}
