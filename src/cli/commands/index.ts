import type { Command } from 'commander';
import type { Runner } from '../action.js';

export type Declare = (program: Command, runner: Runner) => void;

/**
 * Every command by name, in help order, each with a loader of its declaration (which lazy-loads
 * its action): a run declares only the command it names (main.ts), so `tsnode read` loads none
 * of the other declarations and their flag tables.
 */
export const commands: ReadonlyArray<readonly [name: string, load: () => Promise<Declare>]> = [
  ['serve', () => import('./serve/command.js').then((m) => m.serveCommand)],
  ['write', () => import('./write/command.js').then((m) => m.declareWrite)],
  ['read', () => import('./read/command.js').then((m) => m.declareRead)],
  ['sweep', () => import('./sweep/command.js').then((m) => m.declareSweep)],
  ['retention', () => import('./retention/command.js').then((m) => m.declareRetention)],
  ['find', () => import('./find/command.js').then((m) => m.declareFind)],
  ['delete', () => import('./delete/command.js').then((m) => m.declareDelete)],
  ['status', () => import('./status/command.js').then((m) => m.declareStatus)],
  ['history', () => import('./history/command.js').then((m) => m.declareHistory)],
  ['nodes', () => import('./nodes/command.js').then((m) => m.declareNodes)],
  ['locate', () => import('./locate/command.js').then((m) => m.declareLocate)],
  ['cluster', () => import('./cluster/command.js').then((m) => m.declareCluster)],
  ['demo', () => import('./demo/command.js').then((m) => m.declareDemo)],
  ['profile', () => import('./profile/command.js').then((m) => m.declareProfile)],
  ['completion', () => import('./completion/command.js').then((m) => m.declareCompletion)],
];

/** Commands that need every other command declared: completion prints a script for the whole program. */
const WHOLE_PROGRAM = new Set(['completion']);

/**
 * The one command `args` (the arguments after the program name) runs, when it can be declared
 * alone; undefined when every command must be: no command named (`--help`, `--version`), a name
 * that is not a command (a typo deserves "did you mean"; `help <command>`), or completion.
 * `valued`: the global options that take a value, so their value is not read as the command.
 */
export function commandNamed(args: readonly string[], valued: ReadonlySet<string>): string | undefined {
  for (let i = 0; i < args.length; i++) {
    const arg = args[i]!;
    if (arg === '--') return undefined;
    if (valued.has(arg)) i++;
    else if (!arg.startsWith('-')) return commands.some(([name]) => name === arg) && !WHOLE_PROGRAM.has(arg) ? arg : undefined;
  }
  return undefined;
}
