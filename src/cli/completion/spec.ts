/**
 * Shell completion scripts (bash.ts, zsh.ts, fish.ts) generated from the commander program itself, so a
 * new command, flag or choice is completed the moment it is declared (nothing to keep in sync).
 *
 * All three scripts share one model: walk the words before the cursor (a subcommand name extends
 * the command path, a flag that takes a value swallows the next word), then offer the values of
 * the flag being completed, the options, the subcommands, or the positional arguments' values.
 * Profile names are asked for when completing (`tsnode profile list --names`), not baked in.
 */
import type { Argument, Command, Option } from 'commander';
import { HEADER_PREFIXES } from '../../protocol/headers.js';
import { DATA_TYPES, ENGINES, ROLLUP_TYPES } from '../../protocol/types.js';
import { completionHintOf, type CompletionHint } from '../completion-hints.js';

export const SHELLS = ['bash', 'zsh', 'fish'] as const;
export type Shell = (typeof SHELLS)[number];

export interface OptionSpec {
  /** `-o`, `--output`. */
  flags: string[];
  description: string;
  /** Takes a value in the next word (`<value>`; an optional `[value]` does not swallow the next word). */
  takesValue: boolean;
  value: CompletionHint;
}

export interface CompletionSpec {
  /** Space-separated path from the root: '' for `tsnode`, 'cluster up' for `tsnode cluster up`. */
  path: string;
  subcommands: Array<{ name: string; description: string }>;
  /** This command's options and every ancestor's: commander reads a parent's options anywhere after it. */
  options: OptionSpec[];
  /** What the positional arguments are completed with. */
  args: CompletionHint;
}

/** Value lists of flags declared without choices (the commands' own declarations win). */
const KNOWN_VALUES: Readonly<Record<string, CompletionHint>> = {
  '--types': { kind: 'list', values: DATA_TYPES },
  '--type': { kind: 'values', values: ROLLUP_TYPES },
  '--engine': { kind: 'values', values: ENGINES },
  '--header-prefix': { kind: 'values', values: HEADER_PREFIXES },
  '--kind': { kind: 'values', values: DATA_TYPES },
  '--profile': { kind: 'profiles' },
};
const OUTPUT_WORDS = ['table', 'json', 'csv', 'chart', 'text'];

function hidden(cmd: Command): boolean {
  return (cmd as unknown as { _hidden?: boolean })._hidden === true;
}

function valueHint(o: Option): CompletionHint {
  const attached = completionHintOf(o);
  if (attached) return attached;
  if (o.argChoices) return { kind: 'values', values: o.argChoices };
  const known = o.long ? KNOWN_VALUES[o.long] : undefined;
  if (known) return known;
  if (o.long === '--output') {
    const named = OUTPUT_WORDS.filter((w) => new RegExp(`\\b${w}\\b`).test(o.description));
    return { kind: 'values', values: named.length ? named : ['table', 'json', 'csv'] };
  }
  // `<file>`, `<dir>`, `<file|list>`: a path; anything else (`<time>`, `<n>`) is free text.
  return /<[^>]*(file|dir|path)[^>]*>/i.test(o.flags) ? { kind: 'files' } : { kind: 'none' };
}

function argsHint(cmd: Command): CompletionHint {
  const args: readonly Argument[] = cmd.registeredArguments;
  if (args.length === 0) return { kind: 'none' };
  const first = args[0]!;
  const attached = completionHintOf(first);
  if (attached) return attached;
  if (first.argChoices) return { kind: 'values', values: first.argChoices };
  return /file|dir|path/i.test(first.name()) ? { kind: 'files' } : { kind: 'none' };
}

function optionSpec(o: Option): OptionSpec {
  return {
    flags: [o.short, o.long].filter((f): f is string => Boolean(f)),
    description: o.description,
    takesValue: o.required,
    value: o.required || o.optional ? valueHint(o) : { kind: 'none' },
  };
}

/** Flattens the program into one spec per command path, root first. */
export function completionSpecs(program: Command): CompletionSpec[] {
  const specs: CompletionSpec[] = [];
  const help: OptionSpec = { flags: ['-h', '--help'], description: 'show help', takesValue: false, value: { kind: 'none' } };
  const visit = (cmd: Command, path: string, inherited: OptionSpec[]): void => {
    // `--version` belongs to the program alone; offering it after a command is noise.
    const own = cmd.options.filter((o) => !o.hidden && !(cmd !== program && o.long === '--version')).map(optionSpec);
    const options = [...own, ...inherited, help];
    const visible = cmd.commands.filter((c) => !hidden(c));
    const subcommands = visible.flatMap((c) => [c.name(), ...c.aliases()].map((name) => ({ name, description: c.description() })));
    // commander adds an implicit `help [command]` to commands with subcommands.
    if (visible.length > 0 && !subcommands.some((s) => s.name === 'help')) subcommands.push({ name: 'help', description: 'show help for a command' });
    specs.push({ path, subcommands, options, args: argsHint(cmd) });
    if (visible.length > 0) specs.push({ path: path ? `${path} help` : 'help', subcommands: [], options: [help], args: { kind: 'values', values: visible.map((c) => c.name()) } });
    const passDown = [...own.filter((o) => !(cmd === program && o.flags.includes('--version'))), ...inherited];
    for (const sub of visible) visit(sub, path ? `${path} ${sub.name()}` : sub.name(), passDown);
  };
  visit(program, '', []);
  return specs;
}

/** A hint as one word for the scripts' tables: `values:a b`, `list:a b`, `profiles`, `files`, `none`. */
export function hintWord(h: CompletionHint): string {
  return h.kind === 'values' || h.kind === 'list' ? `${h.kind}:${h.values.join(' ')}` : h.kind;
}

/** The program's name as a shell identifier (the scripts' function names). */
export function shellIdent(program: Command): string {
  return program.name().replace(/[^a-zA-Z0-9_]/g, '_');
}
