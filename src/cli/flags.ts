/**
 * Declaring flags so that their parsed values are typed by the declaration itself: a command lists
 * its flags in one table, `addFlags` adds them to the commander Command, and `FlagValues<typeof table>`
 * is the type of what the action receives. A flag cannot be declared and left untyped, and its
 * value is parsed (and refused, exit 2) while commander reads the command line, before any action runs.
 *
 *   const sweepFlags = {
 *     timeout: flag.duration('--timeout <duration>', 'stop waiting after this long', { default: '6h' }),
 *     types: flag.choiceList('--types <list>', 'data types to delete', DATA_TYPES, { default: 'nnt' }),
 *     dryRun: flag.boolean('--dry-run', 'print the requests, send nothing'),
 *   };
 *   type SweepFlags = FlagValues<typeof sweepFlags>;   // { timeout: number; types: DataType[]; dryRun: boolean }
 *   addFlags(cmd, sweepFlags);
 *
 * Defaults are given as the text a user would type and parsed by the same rule, so `--help`
 * shows `(default: 6h)` and the action gets 21600000.
 */
import { Option, type Command } from 'commander';
import { completeWith, type CompletionHint } from './completion-hints.js';
import {
  parseChoice,
  parseChoiceList,
  parseCount,
  parseDuration,
  parseNumber,
  parseOutput,
  parseSize,
  parseSpan,
  parseSpanList,
  type ChoiceOptions,
  type CountOptions,
  type DurationOptions,
  type NumberOptions,
  type SizeOptions,
} from './values.js';

declare const VALUE: unique symbol;

/** A declared flag whose parsed value has type T. */
export interface Flag<T> {
  readonly option: Option;
  /** Type-level only: never set. */
  readonly [VALUE]?: T;
}

/** The options object an action receives for a table of flags. */
export type FlagValues<S> = { -readonly [K in keyof S]: S[K] extends Flag<infer T> ? T : never };

interface Common {
  /** Kept out of --help (still parsed). */
  hidden?: boolean;
  /**
   * For a flag declared with an optional value (`--watch [interval]`): the text a bare flag
   * stands for, parsed by the same rule (`--watch` = `--watch 2s`).
   */
  preset?: string;
  /** What shell completion offers for the value (default: files for value flags). */
  complete?: CompletionHint;
}

type WithDefault<O> = O & Common & { default: string };
type WithoutDefault<O> = O & Common & { default?: undefined };

/** A value flag whose text is turned into T by `parse` (with the flag's name for its errors). */
export interface ValuedFlag<T, O> {
  (flags: string, description: string, opts: WithDefault<O>): Flag<T>;
  (flags: string, description: string, opts?: WithoutDefault<O>): Flag<T | undefined>;
}

function fieldOf(option: Option): string {
  return option.long ?? option.short ?? option.flags;
}

function finish(option: Option, opts: Common): Option {
  if (opts.hidden) option.hideHelp();
  if (opts.preset !== undefined) {
    if (!option.optional) throw new Error(`flag ${option.flags}: a preset needs an optional [value]`);
    option.preset(opts.preset);
  }
  if (opts.complete) completeWith(option, opts.complete);
  return option;
}

function valued<T, O extends object>(parse: (text: string, field: string, opts: O) => T, prepare?: (option: Option, opts: O) => void): ValuedFlag<T, O> {
  return (flags: string, description: string, opts: (O & Common & { default?: string }) | undefined) => {
    const o = (opts ?? {}) as O & Common & { default?: string };
    const option = new Option(flags, description);
    if (!option.required && !option.optional) throw new Error(`flag ${flags}: a value flag needs <value> in its declaration`);
    // A bare `--flag` of an optional value would hand the action `true`, which T does not allow.
    if (option.optional && o.preset === undefined) throw new Error(`flag ${flags}: an optional [value] needs a preset (what the bare flag means)`);
    prepare?.(option, o);
    const field = fieldOf(option);
    option.argParser((text: string) => parse(text, field, o));
    if (o.default !== undefined) option.default(parse(o.default, field, o), o.default);
    return { option: finish(option, o) };
  };
}

const collect = (value: string, previous: string[] | undefined): string[] => [...(previous ?? []), value];

type ChoiceOpts = Common & ChoiceOptions;

function choiceFlag<C extends string>(flags: string, description: string, choices: readonly C[], opts: ChoiceOpts & { default: string }): Flag<C>;
function choiceFlag<C extends string>(flags: string, description: string, choices: readonly C[], opts?: ChoiceOpts & { default?: undefined }): Flag<C | undefined>;
function choiceFlag<C extends string>(flags: string, description: string, choices: readonly C[], opts: ChoiceOpts & { default?: string } = {}): Flag<C | undefined> {
  // .choices() first: it records the list (help, completion), then our parser replaces commander's check.
  const option = new Option(flags, description).choices(choices);
  const field = fieldOf(option);
  option.argParser((text: string) => parseChoice(text, field, choices, opts));
  if (opts.default !== undefined) option.default(parseChoice(opts.default, field, choices, opts), opts.default);
  return { option: finish(option, opts) };
}

function choiceListFlag<C extends string>(flags: string, description: string, choices: readonly C[], opts: ChoiceOpts & { default: string }): Flag<C[]>;
function choiceListFlag<C extends string>(flags: string, description: string, choices: readonly C[], opts?: ChoiceOpts & { default?: undefined }): Flag<C[] | undefined>;
function choiceListFlag<C extends string>(flags: string, description: string, choices: readonly C[], opts: ChoiceOpts & { default?: string } = {}): Flag<C[] | undefined> {
  const option = new Option(flags, description);
  const field = fieldOf(option);
  option.argParser((text: string) => parseChoiceList(text, field, choices, opts));
  if (opts.default !== undefined) option.default(parseChoiceList(opts.default, field, choices, opts), opts.default);
  completeWith(option, { kind: 'list', values: choices });
  return { option: finish(option, opts) };
}

export const flag = {
  /** Free text. */
  string: valued<string, object>((text) => text),
  /** A duration in milliseconds (values.ts parseDuration). */
  duration: valued<number, DurationOptions>((text, field, o) => parseDuration(text, field, o)),
  /** A byte size (values.ts parseSize: binary K/M/G and KiB/MiB/GiB, decimal KB/MB/GB). */
  size: valued<number, SizeOptions>((text, field, o) => parseSize(text, field, o)),
  /** A whole number within bounds. */
  count: valued<number, CountOptions>((text, field, o) => parseCount(text, field, o)),
  /** A finite number within bounds. */
  number: valued<number, NumberOptions>((text, field, o) => parseNumber(text, field, o)),
  /** A span in whole seconds. */
  span: valued<number, object>((text, field) => parseSpan(text, field)),
  /** A comma list of spans in seconds, sorted, no duplicates. */
  spanList: valued<number[], object>((text, field) => parseSpanList(text, field)),
  /**
   * A value with a rule of the command's own (a `--watch` interval with its own bounds): `parse`
   * gets the text and the flag's name and throws an InvalidValueError (exit 2) on a bad value.
   */
  parsed<T>(flags: string, description: string, parse: (text: string, field: string) => T, opts: Common & { default?: string } = {}): Flag<T | undefined> {
    return valued<T, object>((text, field) => parse(text, field))(flags, description, opts as Common & { default?: undefined });
  },

  /** One of a fixed list (completed by the shells, suggested on a typo). */
  choice: choiceFlag,
  /** A comma list of a fixed list's words (`--types nnt,histogram`). */
  choiceList: choiceListFlag,
  /** `-o, --output <format>`: table|json|csv (or the formats given), default table. */
  output<C extends string = 'table' | 'json' | 'csv'>(formats?: readonly C[], opts: Common & { default?: C; flags?: string } = {}): Flag<C> {
    const list = (formats ?? ['table', 'json', 'csv']) as readonly C[];
    const option = new Option(opts.flags ?? '-o, --output <format>', `result format on stdout: ${list.join(', ')}`).choices(list);
    const field = fieldOf(option);
    option.argParser((text: string) => parseOutput(text, field, list));
    option.default(opts.default ?? list[0]!);
    return { option: finish(option, opts) };
  },
  /** A switch: false unless given (`--no-x` flags default to true, as commander makes them). */
  boolean(flags: string, description: string, opts: Common = {}): Flag<boolean> {
    const option = new Option(flags, description);
    if (option.required || option.optional) throw new Error(`flag ${flags}: a boolean flag takes no <value>`);
    if (!option.negate) option.default(false);
    return { option: finish(option, opts) };
  },
  /** A repeatable text flag (`--header A --header B`): the values in order, [] when absent. */
  repeatable(flags: string, description: string, opts: Common = {}): Flag<string[]> {
    const option = new Option(flags, description).argParser(collect).default([], 'none');
    return { option: finish(option, opts) };
  },
};

/**
 * Adds a table of flags to a command. Each key must be the name commander stores the value
 * under (`--dry-run` -> `dryRun`), so the table's type is the options object's type.
 */
export function addFlags(cmd: Command, table: Record<string, Flag<unknown>>): Command {
  for (const [key, f] of Object.entries(table)) {
    const attr = f.option.attributeName();
    if (attr !== key) throw new Error(`flag ${f.option.flags}: declared under "${key}" but commander stores it as "${attr}"`);
    cmd.addOption(f.option);
  }
  return cmd;
}
