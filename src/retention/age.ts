/**
 * Retention ages: how long a rule keeps data. The CLI's age syntax (`90d`, `12h`, `30m`, `1w`,
 * decimals like `1.5d`) plus `y` = 365 days. An age is a whole number of seconds because a
 * cut-off is sent in whole seconds: `ms` is refused rather than silently rounded, and so is any
 * age that does not come to whole seconds (`0.5s`). Arithmetic is exact (BigInt), so `0.1h` is
 * 360 s, not 360.00000000000006.
 */
import { RetentionError } from './errors.js';

/** Seconds per unit. `y` is 365 days: a fixed length, never a calendar year. */
export const AGE_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800, y: 31_536_000 };

export const AGE_EXPECTED = 'a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y';

/** The longest age accepted: 10,000 years, far beyond any epoch a node can hold. */
export const MAX_AGE_SECONDS = 10_000 * 31_536_000;

const AGE_RE = /^(\d+)(?:\.(\d+))?([a-zA-Z]+)$/;

export type AgeCheck = { ok: true; seconds: number } | { ok: false; problem: string; hint?: string };

/** Checks an age without throwing, so callers can name their own context (file, line, rule). */
export function checkAge(text: string): AgeCheck {
  const t = text.trim();
  const shown = JSON.stringify(t.length > 40 ? `${t.slice(0, 37)}...` : t);
  if (t === '') return { ok: false, problem: 'no age given' };
  if (/^\d+(\.\d+)?$/.test(t)) {
    // Zero in any unit is still zero: no "0d" suggestion for it.
    if (Number(t) === 0) return { ok: false, problem: `${shown} is zero`, hint: 'an age of zero would delete everything up to now' };
    return { ok: false, problem: `${shown} has no unit`, hint: `add one, e.g. ${t}d for days` };
  }
  if (/^-/.test(t)) return { ok: false, problem: `${shown} is negative` };
  const m = AGE_RE.exec(t);
  if (!m) return { ok: false, problem: `${shown} is not an age` };
  const [, whole, frac = '', unit] = m as unknown as [string, string, string | undefined, string];
  if (unit === 'ms') {
    return { ok: false, problem: `${shown} is in milliseconds`, hint: 'cut-offs are whole seconds: give the age in s, m, h, d, w or y' };
  }
  const perUnit = AGE_UNITS[unit];
  if (perUnit === undefined) {
    const hint = /^(mo|mon|month|months|M)$/.test(unit)
      ? 'months differ in length: use days, e.g. 30d'
      : /^[SHDWY]$/.test(unit)
        ? `units are lower case: ${whole}${frac ? `.${frac}` : ''}${unit.toLowerCase()}`
        : undefined;
    return { ok: false, problem: `${shown} has an unknown unit ${JSON.stringify(unit)}`, ...(hint ? { hint } : {}) };
  }
  if (whole.length + frac.length > 30) return { ok: false, problem: `${shown} is too long` };
  // value = whole.frac * perUnit, exactly: (whole*10^f + frac) * perUnit / 10^f
  const scale = 10n ** BigInt(frac.length);
  const numerator = (BigInt(whole) * scale + BigInt(frac || '0')) * BigInt(perUnit);
  if (numerator % scale !== 0n) return { ok: false, problem: `${shown} is not a whole number of seconds`, hint: 'cut-offs are whole seconds' };
  const seconds = numerator / scale;
  if (seconds === 0n) return { ok: false, problem: `${shown} is zero`, hint: 'an age of zero would delete everything up to now' };
  if (seconds > BigInt(MAX_AGE_SECONDS)) return { ok: false, problem: `${shown} is longer than 10000y` };
  return { ok: true, seconds: Number(seconds) };
}

/** Parses an age into whole seconds; throws RetentionError (`invalid_age`) naming `field`. */
export function parseAge(text: string, field: string): number {
  const r = checkAge(text);
  if (!r.ok) throw new RetentionError('invalid_age', `${field}: ${r.problem} (expected ${AGE_EXPECTED})`, r.hint);
  return r.seconds;
}

/** The shortest exact spelling of an age in seconds: 2592000 -> `30d`, 31536000 -> `1y`, 90 -> `90s`. */
export function formatAge(seconds: number): string {
  for (const unit of ['y', 'w', 'd', 'h', 'm'] as const) {
    const per = AGE_UNITS[unit]!;
    if (seconds % per === 0) return `${seconds / per}${unit}`;
  }
  return `${seconds}s`;
}
