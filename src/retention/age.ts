/**
 * Retention ages: how long a rule keeps data, in the one duration grammar (`90d`, `12h`, `30m`,
 * `1w`, decimals like `1.5d`, `y` = 365 days). An age is a whole number of seconds because a
 * cut-off is sent in whole seconds: `ms` is refused rather than silently rounded, and so is any
 * age that does not come to whole seconds (`0.5s`). Arithmetic is exact (BigInt), so `0.1h` is
 * 360 s, not 360.00000000000006.
 */
import { quoteValue, readDuration } from '../protocol/units.js';
import { RetentionError } from './errors.js';

/** Seconds per unit. `y` is 365 days: a fixed length, never a calendar year. */
export const AGE_UNITS: Readonly<Record<string, number>> = { s: 1, m: 60, h: 3_600, d: 86_400, w: 604_800, y: 31_536_000 };

export const AGE_EXPECTED = 'a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y';

/** The longest age accepted: 10,000 years, far beyond any epoch a node can hold. */
export const MAX_AGE_SECONDS = 10_000 * 31_536_000;

export type AgeCheck = { ok: true; seconds: number } | { ok: false; problem: string; hint?: string };

/**
 * Checks an age without throwing, so callers can name their own context (file, line, rule). The
 * grammar is the one every duration uses (protocol/units.ts); an age adds that it is whole
 * seconds (a cut-off is sent in whole seconds) and more than zero.
 */
export function checkAge(text: string): AgeCheck {
  const t = text.trim();
  const shown = quoteValue(t.length > 40 ? `${t.slice(0, 37)}...` : t);
  if (/^\d+(\.\d+)?ms$/.test(t)) {
    return { ok: false, problem: `${shown} is in milliseconds`, hint: 'cut-offs are whole seconds: give the age in s, m, h, d, w or y' };
  }
  if (/^\d+(\.\d+)?$/.test(t) && Number(t) !== 0) return { ok: false, problem: `${shown} has no unit`, hint: `add one, e.g. ${t}d for days` };
  const r = readDuration(t, { noun: 'age', bareUnit: 's' });
  if (!r.ok) return r.hint === undefined ? { ok: false, problem: r.problem } : { ok: false, problem: r.problem, hint: r.hint };
  if (r.value === 0) return { ok: false, problem: `${shown} is zero`, hint: 'an age of zero would delete everything up to now' };
  if (r.value % 1000 !== 0 || r.rounded) {
    return { ok: false, problem: `${shown} is not a whole number of seconds`, hint: 'cut-offs are whole seconds' };
  }
  const seconds = r.value / 1000;
  if (seconds > MAX_AGE_SECONDS) return { ok: false, problem: `${shown} is longer than 10000y` };
  return { ok: true, seconds };
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
