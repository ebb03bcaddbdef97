import type { Command } from 'commander';
import { bashCompletion } from './bash.js';
import { fishCompletion } from './fish.js';
import type { Shell } from './spec.js';
import { zshCompletion } from './zsh.js';

/** The completion script of one shell, generated from the program's declarations. */
export function completionScript(shell: Shell, program: Command): string {
  if (shell === 'bash') return bashCompletion(program);
  if (shell === 'zsh') return zshCompletion(program);
  return fishCompletion(program);
}
