import { Argument, type Command } from 'commander';
import type { Runner } from '../../action.js';

export interface CompletionFlags {
  shell: 'bash' | 'zsh';
}

/** `tsnode completion bash|zsh`: prints a completion script generated from this very program. */
export function declareCompletion(program: Command, runner: Runner): void {
  program
    .command('completion')
    .description('print a shell completion script (bash or zsh) to stdout')
    .addArgument(new Argument('<shell>', 'the shell to complete in').choices(['bash', 'zsh']))
    .addHelpText(
      'after',
      `
Examples:
  $ source <(tsnode completion bash)                  try it in this shell
  $ echo 'source <(tsnode completion bash)' >> ~/.bashrc
  $ echo 'source <(tsnode completion zsh)' >> ~/.zshrc
  $ tsnode completion bash > ~/.local/share/bash-completion/completions/tsnode`,
    )
    .action((shell: 'bash' | 'zsh') => runner(() => import('./action.js').then((m) => m.completionAction), { shell }));
}
