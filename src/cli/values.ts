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

/** A value for an error message: quoted, shortened (a pasted blob must not flood the terminal). */
export function quote(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

// ---------------------------------------------------------------------------------------------
// Durations

export const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS_MS;
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)?$/;
export const DURATION_FORMS = 'a number and a unit: 500ms, 2s, 30m, 6h, 1d, 1w';

export interface DurationOptions {
  /** Smallest allowed value in ms (default 1: zero is refused). */
  min?: number;
  /** Largest allowed value in ms. */
  max?: number;
  /** The unit of a bare number (`--pace 250` = 250ms). Without it a bare number is refused: `30` could be seconds or ms. */
  bareUnit?: DurationUnit;
}

/** `2s`, `500ms`, `1.5m`, `6h`, `1d`, `1w` -> milliseconds (a whole number). */
export function parseDuration(text: string, field: string, opts: DurationOptions = {}): number {
  const t = text.trim();
  const m = DURATION_RE.exec(t);
  const unit = (m?.[2] ?? opts.bareUnit) as DurationUnit | undefined;
  if (!m || unit === undefined) {
    const bare = m && !m[2] ? ` (a bare number has no unit: ${t}s or ${t}ms?)` : '';
    throw new InvalidValueError(field, text, `${quote(text)} is not a duration${bare}`, `use ${DURATION_FORMS}`);
  }
  const ms = Math.round(Number(m[1]) * DURATION_UNITS_MS[unit]);
  // 9999...9s overflows to Infinity; no caller can use that.
  if (!Number.isSafeInteger(ms)) throw new InvalidValueError(field, text, `${quote(text)} is too long`, 'use a smaller number or a larger unit');
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
export function formatDuration(ms: number): string {
  const units: DurationUnit[] = ['w', 'd', 'h', 'm', 's'];
  for (const u of units) if (ms >= DURATION_UNITS_MS[u] && ms % DURATION_UNITS_MS[u] === 0) return `${ms / DURATION_UNITS_MS[u]}${u}`;
  return `${ms}ms`;
}

/** Node's timers hold at most 2^31-1 ms (24.8 days); a longer timeout would fire at once. */
export const MAX_TIMER_MS = 2 ** 31 - 1;

// ---------------------------------------------------------------------------------------------
// Byte sizes: ONE rule for every flag. Binary: bare K/M/G/T and KiB/MiB/GiB/TiB (1024^n);
// decimal: KB/MB/GB/TB (1000^n); B or no unit: bytes. Case-insensitive, so `4m` = `4MiB` = 4,194,304.

export const SIZE_UNITS: Readonly<Record<string, number>> = {
  '': 1,
  b: 1,
  k: 1024,
  kib: 1024,
  kb: 1000,
  m: 1024 ** 2,
  mib: 1024 ** 2,
  mb: 1000 ** 2,
  g: 1024 ** 3,
  gib: 1024 ** 3,
  gb: 1000 ** 3,
  t: 1024 ** 4,
  tib: 1024 ** 4,
  tb: 1000 ** 4,
};
export const SIZE_FORMS = 'bytes (65536) or a size: 512KiB, 4MiB, 1GiB (binary; also 4M, 4m), 10MB (decimal)';

export interface SizeOptions {
  /** Smallest allowed size in bytes (default 1). */
  min?: number;
  max?: number;
}

/** `65536`, `512KiB`, `4MiB`, `4m`, `1.5GiB`, `10MB` -> bytes (a whole number, rounded down). */
export function parseSize(text: string, field: string, opts: SizeOptions = {}): number {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) throw new InvalidValueError(field, text, `${quote(text)} is not a size`, `use ${SIZE_FORMS}`);
  const bytes = Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) throw new InvalidValueError(field, text, `${quote(text)} is too large`, `use ${SIZE_FORMS}`);
  const min = opts.min ?? 1;
  if (bytes < min) throw new InvalidValueError(field, text, `${quote(text)} is smaller than ${formatSize(min)}`, `use at least ${formatSize(min)}`);
  if (opts.max !== undefined && bytes > opts.max)
    throw new InvalidValueError(field, text, `${quote(text)} is larger than ${formatSize(opts.max)}`, `use at most ${formatSize(opts.max)}`);
  return bytes;
}

/** A byte count the way the size flags read it back: `4MiB`, `1500B`, `1.5GiB`. */
export function formatSize(bytes: number): string {
  for (const [unit, n] of [
    ['TiB', 1024 ** 4],
    ['GiB', 1024 ** 3],
    ['MiB', 1024 ** 2],
    ['KiB', 1024],
  ] as const) {
    if (bytes >= n) return Number.isInteger(bytes / n) ? `${bytes / n}${unit}` : `${(bytes / n).toFixed(1)}${unit}`;
  }
  return `${bytes}B`;
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
