/**
 * Typed flag values: the one set of rules every command parses its flags with (durations, byte
 * sizes, counts, numbers, spans, choices, output formats). Pure; every error is an
 * InvalidValueError naming the flag, the value and what would be valid (exit 2).
 *
 * Kept free of zod, undici and the protocol's codecs: command declarations import it at startup.
 * The rules are documented in docs/cli-conventions.md; change them there too.
 */
import { InvalidValueError } from './errors.js';
import { didYouMean } from './suggest.js';
import {
  DURATION_FORMS,
  DURATION_UNITS_MS,
  formatDurationMs,
  formatSize,
  quoteValue,
  readDuration,
  readSize,
  SIZE_FORMS,
  SIZE_UNITS,
  type DurationUnit,
} from '../protocol/units.js';

/** A value for an error message: quoted, shortened (a pasted blob must not flood the terminal). */
export const quote = quoteValue;

// ---------------------------------------------------------------------------------------------
// Durations and byte sizes: the grammar is protocol/units.ts (the same for flags, policies,
// profiles and the node's config); here they get bounds and the flag's error.

export { DURATION_FORMS, DURATION_UNITS_MS, formatSize, SIZE_FORMS, SIZE_UNITS, type DurationUnit };

export interface DurationOptions {
  /** Smallest allowed value in ms (default 1: zero is refused). */
  min?: number;
  /** Largest allowed value in ms. */
  max?: number;
  /** The unit of a bare number (`--pace 250` = 250ms). Without it a bare number is refused: `30` could be seconds or ms. */
  bareUnit?: DurationUnit;
}

/** `2s`, `500ms`, `1.5m`, `6h`, `1d`, `1w`, `1y` -> milliseconds (a whole number). */
export function parseDuration(text: string, field: string, opts: DurationOptions = {}): number {
  const r = readDuration(text, opts.bareUnit ? { bareUnit: opts.bareUnit } : {});
  if (!r.ok) throw new InvalidValueError(field, text, r.problem, r.hint);
  const ms = r.value;
  const min = opts.min ?? 1;
  if (ms < min) {
    throw new InvalidValueError(
      field,
      text,
      min <= 1 ? `${quote(text)} must be longer than zero` : `${quote(text)} is shorter than ${formatDuration(min)}`,
      `e.g. ${formatDuration(Math.max(min, 1000))}`,
    );
  }
  if (opts.max !== undefined && ms > opts.max) {
    throw new InvalidValueError(field, text, `${quote(text)} is longer than ${formatDuration(opts.max)}`, `use at most ${formatDuration(opts.max)}`);
  }
  return ms;
}

/** A duration in the largest unit that divides it: 90000 -> `90s`, 3600000 -> `1h`, 1500 -> `1500ms`. */
export const formatDuration = formatDurationMs;

/** Node's timers hold at most 2^31-1 ms (24.8 days); a longer timeout would fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

export interface SizeOptions {
  /** Smallest allowed size in bytes (default 1). */
  min?: number;
  max?: number;
}

/** `65536`, `512KiB`, `4MiB`, `4m`, `1.5GiB`, `10MB` -> bytes (a whole number, rounded down). */
export function parseSize(text: string, field: string, opts: SizeOptions = {}): number {
  const r = readSize(text);
  if (!r.ok) throw new InvalidValueError(field, text, r.problem, r.hint);
  const bytes = r.value;
  const min = opts.min ?? 1;
  if (bytes < min) throw new InvalidValueError(field, text, `${quote(text)} is smaller than ${formatSize(min)}`, `use at least ${formatSize(min)}`);
  if (opts.max !== undefined && bytes > opts.max)
    throw new InvalidValueError(field, text, `${quote(text)} is larger than ${formatSize(opts.max)}`, `use at most ${formatSize(opts.max)}`);
  return bytes;
}

// ---------------------------------------------------------------------------------------------
// Counts and numbers

export interface CountOptions {
  min?: number;
  max?: number;
}

function rangeText(min: number, max: number | undefined): string {
  return max === undefined ? `>= ${min}` : `from ${min} to ${max}`;
}

/** A whole number (digits only: no sign, no exponent, no fraction) within bounds (default >= 0). */
export function parseCount(text: string, field: string, opts: CountOptions = {}): number {
  const t = text.trim();
  const min = opts.min ?? 0;
  if (!/^\d+$/.test(t) || !Number.isSafeInteger(Number(t))) {
    throw new InvalidValueError(field, text, `${quote(text)} is not a whole number`, `use a whole number ${rangeText(min, opts.max)}`);
  }
  const n = Number(t);
  if (n < min || (opts.max !== undefined && n > opts.max)) {
    throw new InvalidValueError(field, text, `${n} is out of range`, `use a whole number ${rangeText(min, opts.max)}`);
  }
  return n;
}

export interface NumberOptions {
  min?: number;
  max?: number;
  /** The bounds themselves are not allowed (`> 0` rather than `>= 0`). */
  exclusive?: boolean;
}

/** A finite decimal number (`0.5`, `1e-9`, `50000`) within bounds. */
export function parseNumber(text: string, field: string, opts: NumberOptions = {}): number {
  const t = text.trim();
  const n = /^[+-]?(\d+(\.\d*)?|\.\d+)(e[+-]?\d+)?$/i.test(t) ? Number(t) : NaN;
  const bounds = [
    opts.min === undefined ? undefined : `${opts.exclusive ? '>' : '>='} ${opts.min}`,
    opts.max === undefined ? undefined : `${opts.exclusive ? '<' : '<='} ${opts.max}`,
  ].filter(Boolean);
  const hint = `use a number${bounds.length ? ` ${bounds.join(' and ')}` : ''}, e.g. 0.5 or 1e-9`;
  if (!Number.isFinite(n)) throw new InvalidValueError(field, text, `${quote(text)} is not a number`, hint);
  const low = opts.min !== undefined && (opts.exclusive ? n <= opts.min : n < opts.min);
  const high = opts.max !== undefined && (opts.exclusive ? n >= opts.max : n > opts.max);
  if (low || high) throw new InvalidValueError(field, text, `${t} is out of range`, hint);
  return n;
}

// ---------------------------------------------------------------------------------------------
// Spans (rollup periods): whole seconds, `60`, `60s`, `5m`, `1h`, `1d`.

const SPAN_UNITS_S: Readonly<Record<string, number>> = { '': 1, s: 1, m: 60, h: 3600, d: 86_400 };
export const SPAN_FORMS = 'whole seconds: 60, 300 (or 60s, 5m, 1h, 1d)';

export function parseSpan(text: string, field: string): number {
  const m = /^(\d+)(s|m|h|d)?$/i.exec(text.trim());
  const seconds = m ? Number(m[1]) * SPAN_UNITS_S[(m[2] ?? '').toLowerCase()]! : NaN;
  if (!m || !Number.isSafeInteger(seconds) || seconds < 1) throw new InvalidValueError(field, text, `${quote(text)} is not a span`, `use ${SPAN_FORMS}`);
  return seconds;
}

/** `60,300,1800` -> [60, 300, 1800]: sorted ascending, duplicates dropped; an empty item is an error. */
export function parseSpanList(text: string, field: string): number[] {
  const items = text.split(',');
  const spans = items.map((item, i) => {
    if (item.trim() === '') throw new InvalidValueError(field, text, `item ${i + 1} of ${quote(text)} is empty`, `use a comma list of spans: ${SPAN_FORMS}`);
    return parseSpan(item, field);
  });
  return [...new Set(spans)].sort((a, b) => a - b);
}

// ---------------------------------------------------------------------------------------------
// Choices

export interface ChoiceOptions {
  /** Accept any letter case and return the canonical spelling (`x-snowth` -> `X-Snowth`). */
  ignoreCase?: boolean;
}

function choiceHint(text: string, choices: readonly string[]): string {
  return didYouMean(text.trim(), choices) ?? `use one of: ${choices.join(', ')}`;
}

/** One of a fixed list; the error lists the allowed values and suggests the closest. */
export function parseChoice<C extends string>(text: string, field: string, choices: readonly C[], opts: ChoiceOptions = {}): C {
  const t = text.trim();
  const found = choices.find((c) => (opts.ignoreCase ? c.toLowerCase() === t.toLowerCase() : c === t));
  if (found === undefined) throw new InvalidValueError(field, text, `${quote(text)} is not one of ${choices.join(', ')}`, choiceHint(t, choices));
  return found;
}

/** A comma list of choices (`nnt,histogram`): in the order given, duplicates dropped, no empty item. */
export function parseChoiceList<C extends string>(text: string, field: string, choices: readonly C[], opts: ChoiceOptions = {}): C[] {
  const out: C[] = [];
  text.split(',').forEach((item, i) => {
    if (item.trim() === '') throw new InvalidValueError(field, text, `item ${i + 1} of ${quote(text)} is empty`, `use a comma list of ${choices.join(', ')}`);
    const t = item.trim();
    const found = choices.find((c) => (opts.ignoreCase ? c.toLowerCase() === t.toLowerCase() : c === t));
    if (found === undefined) throw new InvalidValueError(field, text, `${quote(t)} is not one of ${choices.join(', ')}`, choiceHint(t, choices));
    if (!out.includes(found)) out.push(found);
  });
  return out;
}

/** Output formats: the same three everywhere (plus `chart` for `read`). */
export const OUTPUT_FORMATS = ['table', 'json', 'csv'] as const;
export type OutputFormat = (typeof OUTPUT_FORMATS)[number];

export function parseOutput<C extends string = OutputFormat>(text: string, field = '--output', formats: readonly C[] = OUTPUT_FORMATS as unknown as readonly C[]): C {
  return parseChoice(text, field, formats);
}
