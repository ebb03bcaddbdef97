/**
 * Numbers for people: at most ~6 significant digits, no float noise (0.30000000000000004 -> 0.3),
 * and the same number of decimals down a column so the points line up when right-aligned.
 * Machine formats (CSV, JSON) never use this: they print exact numbers.
 */

/** Largest number of decimals a column shows; smaller magnitudes switch to exponent form. */
const MAX_DECIMALS = 6;
const SIGNIFICANT = 6;

function needsExponent(v: number): boolean {
  const a = Math.abs(v);
  return a !== 0 && (a < 1e-4 || a >= 1e15);
}

/** Decimals one value needs for SIGNIFICANT significant digits, trailing zeros dropped. */
export function decimalsFor(v: number): number {
  if (!Number.isFinite(v) || Number.isInteger(v) || needsExponent(v)) return 0;
  const text = v.toPrecision(SIGNIFICANT);
  if (text.includes('e')) return 0;
  const dot = text.indexOf('.');
  if (dot < 0) return 0;
  const frac = text.slice(dot + 1).replace(/0+$/, '');
  return Math.min(frac.length, MAX_DECIMALS);
}

/** `1.5e-7`, `2.34568e+18`: exponent form with trailing zeros of the mantissa dropped. */
function exponent(v: number): string {
  const [mant, exp] = v.toExponential(SIGNIFICANT - 1).split('e') as [string, string];
  const m = mant.includes('.') ? mant.replace(/\.?0+$/, '') : mant;
  return `${m}e${exp}`;
}

/** Formats one number on its own (no column context). */
export function formatNumber(v: number): string {
  return formatWithDecimals(v, decimalsFor(v));
}

function formatWithDecimals(v: number, decimals: number): string {
  if (Number.isNaN(v)) return 'NaN';
  if (!Number.isFinite(v)) return v > 0 ? '∞' : '-∞';
  if (needsExponent(v)) return exponent(v);
  const out = v.toFixed(decimals);
  // -0.000 reads as a negative value that is not there.
  return /^-0(\.0*)?$/.test(out) ? out.slice(1) : out;
}

/**
 * A formatter for one column: SIGNIFICANT significant digits for the column's largest value,
 * the same decimals for every value (so points line up), trailing zeros every value shares
 * dropped. A non-zero value too small to show at that precision gets its own digits
 * (0.3, 1e-9) rather than a misleading 0.
 */
export function columnFormatter(values: Iterable<number | null | undefined>): (v: number) => string {
  let maxAbs = 0;
  const finite: number[] = [];
  for (const v of values) {
    if (typeof v !== 'number' || !Number.isFinite(v) || needsExponent(v)) continue;
    finite.push(v);
    const a = Math.abs(v);
    if (a > maxAbs) maxAbs = a;
  }
  let decimals = maxAbs === 0 ? 0 : Math.min(MAX_DECIMALS, Math.max(0, SIGNIFICANT - 1 - Math.floor(Math.log10(maxAbs))));
  // Drop decimals while no value needs them (0.30000000000000004 and 0.1 -> one decimal).
  let needed = 0;
  for (const v of finite) {
    if (needed >= decimals) break;
    needed = Math.max(needed, decimalsFor(v));
  }
  decimals = Math.min(decimals, needed);
  return (v) => {
    const text = formatWithDecimals(v, decimals);
    return v !== 0 && Number.isFinite(v) && /^-?0(\.0*)?$/.test(text) ? formatNumber(v) : text;
  };
}

/**
 * `1234567` -> `1,234,567`: what `toLocaleString('en-US')` prints for a count, without it. The
 * first toLocaleString of a process sets up ICU's number formatting, 10-20 ms of CPU that a
 * one-record `tsnode write` paid for its summary (bench/startup.bench.mjs). Safe integers are
 * grouped here; anything else (fractions, 1e21, NaN: no count is one) goes to toLocaleString.
 */
export function thousands(x: number): string {
  if (!Number.isSafeInteger(x)) return x.toLocaleString('en-US');
  if (Object.is(x, -0)) return '-0';
  const digits = String(Math.abs(x));
  let out = digits.slice(0, ((digits.length - 1) % 3) + 1);
  for (let i = out.length; i < digits.length; i += 3) out += `,${digits.slice(i, i + 3)}`;
  return x < 0 ? `-${out}` : out;
}

const SI = [
  { limit: 1e12, suffix: 'T' },
  { limit: 1e9, suffix: 'G' },
  { limit: 1e6, suffix: 'M' },
  { limit: 1e3, suffix: 'k' },
];

/** Short axis labels: `1.5k`, `2.35M`, `0.25`, `-12`; at most ~4 significant digits. */
export function formatCompact(v: number): string {
  if (!Number.isFinite(v)) return formatWithDecimals(v, 0);
  const a = Math.abs(v);
  for (const { limit, suffix } of SI) {
    if (a >= limit) return `${trim((v / limit).toPrecision(4))}${suffix}`;
  }
  if (a !== 0 && a < 1e-3) return exponent(Number(v.toPrecision(3)));
  return trim(Number(v.toPrecision(4)).toString());
}

function trim(text: string): string {
  if (text.includes('e')) return text;
  return text.includes('.') ? text.replace(/\.?0+$/, '') : text;
}
