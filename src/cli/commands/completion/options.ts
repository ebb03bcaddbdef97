/** `tsnode completion`: its flags and their types, for the declaration (command.ts) and the action alike. */
import type { Command } from 'commander';

export interface CompletionFlags {
  shell: 'bash' | 'zsh' | 'fish';
  /** The program to generate the script from (the one being declared: no import of main.ts). */
  program: Command;
}
