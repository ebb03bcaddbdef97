import { readDuration } from '../protocol/units.js';
import { UsageError } from './errors.js';

export const TIME_FORMS = 'epoch seconds (1700000000), epoch with millis (1700000000.250), ISO-8601 (2026-08-01T00:00:00Z) or an age like 90d, 12h, 30m, 1w, 1y';

/** An age before now (`90d`, `1.5h`, `1y`) or `now`: the forms that are relative to the clock. */
export function isRelativeTime(text: string): boolean {
  return /^(now|\d+(\.\d+)?[a-zA-Z]+)$/.test(text.trim());
}

/**
 * Parses a command-line time into epoch milliseconds. Relative forms are ages: `90d` means
 * ninety days before `now`. ISO times need a zone (Z or an offset) so nobody deletes by local time
 * by accident, and must be real calendar instants: `2026-02-31` or `24:00` are errors, not rolled
 * over into the next month or day (a sweep must never delete more than was typed). Nothing before
 * 1970 is a time a node stores.
 */
export function parseTime(text: string, field: string, now: number): number {
  const ms = parseAnyTime(text, field, now);
  if (ms < 0) {
    throw new UsageError(
      `${field}: ${JSON.stringify(text)} is ${new Date(ms).toISOString()}, before 1970-01-01T00:00:00Z`,
      'nodes keep epoch seconds from 1970 on; give a later time',
    );
  }
  return ms;
}

function parseAnyTime(text: string, field: string, now: number): number {
  const t = text.trim();
  if (t === 'now') return now;
  if (/^\d+$/.test(t)) {
    if (t.length > 11) {
      throw new UsageError(`${field}: ${t} looks like milliseconds, not epoch seconds`, `use ${t.slice(0, -3)}.${t.slice(-3)} for that instant`);
    }
    return Number(t) * 1000;
  }
  const frac = /^(\d{1,11})\.(\d{1,3})$/.exec(t);
  if (frac) return Number(frac[1]) * 1000 + Number(frac[2]!.padEnd(3, '0'));
  if (isRelativeTime(t)) {
    // An age, in the one duration grammar (protocol/units.ts): `--before 1y` reads as a policy's `1y`.
    const age = readDuration(t, { noun: 'age' });
    if (!age.ok) throw new UsageError(`${field}: ${age.problem}`, age.hint ?? `use ${TIME_FORMS}`);
    if (age.value <= 0) throw new UsageError(`${field}: ${JSON.stringify(text)} is zero`, 'an age of zero means now: give a longer one, e.g. 90d');
    return now - age.value;
  }
  const iso = ISO_RE.exec(t);
  if (iso) return isoOrThrow(iso, text, field);
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?$/i.test(t)) {
    throw new UsageError(`${field}: ${JSON.stringify(text)} has no time zone`, `add Z for UTC (${t}Z) or an offset like +02:00`);
  }
  throw new UsageError(`${field}: ${JSON.stringify(text)} is not a time`, `use ${TIME_FORMS}`);
}

/** `2026-08-24`, or `2026-08-24T00:00[:00[.fff]]` with `Z` or `±hh[:]mm`. */
const ISO_RE = /^(\d{4})-(\d{2})-(\d{2})(?:[T ](\d{2}):(\d{2})(?::(\d{2})(?:\.(\d{1,9}))?)?(Z|([+-])(\d{2}):?(\d{2})))?$/i;

function daysIn(year: number, month: number): number {
  return month === 2 ? (year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28) : [4, 6, 9, 11].includes(month) ? 30 : 31;
}

/** Checks every field against the calendar and the clock, then computes the instant itself. */
function isoOrThrow(m: RegExpExecArray, original: string, field: string): number {
  const [, y, mo, d, h, mi, s, f, zone, sign, oh, om] = m;
  const year = Number(y);
  const month = Number(mo);
  const day = Number(d);
  const bad = (what: string): never => {
    throw new UsageError(`${field}: ${JSON.stringify(original)} is not a valid date: ${what}`, `use ${TIME_FORMS}`);
  };
  if (month < 1 || month > 12) bad(`month ${mo} does not exist`);
  if (day < 1 || day > daysIn(year, month)) bad(`${y}-${mo} has no day ${d}`);
  const hour = Number(h ?? 0);
  const minute = Number(mi ?? 0);
  const second = Number(s ?? 0);
  if (hour > 23) bad(`hour ${h} does not exist (00-23)`);
  if (minute > 59) bad(`minute ${mi} does not exist (00-59)`);
  if (second > 59) bad(`second ${s} does not exist (00-59)`);
  let offsetMin = 0;
  if (zone && zone.toUpperCase() !== 'Z') {
    if (Number(oh) > 23 || Number(om) > 59) bad(`offset ${zone} does not exist`);
    offsetMin = (sign === '-' ? -1 : 1) * (Number(oh) * 60 + Number(om));
  }
  const millis = f ? Math.floor(Number(`0.${f}`) * 1000) : 0;
  // Date.UTC reads years 0-99 as 1900-1999; setUTCFullYear does not.
  const at = new Date(0);
  at.setUTCFullYear(year, month - 1, day);
  at.setUTCHours(hour, minute, second, millis);
  return at.getTime() - offsetMin * 60_000;
}

/** `2026-08-24T00:00:00Z (1787529600)`: both forms, as the conventions ask for printed times. */
export function describeTime(ms: number): string {
  return `${isoTime(ms)} (${ms % 1000 === 0 ? ms / 1000 : (ms / 1000).toFixed(3)})`;
}

/** ISO UTC, with milliseconds only when the instant has them. */
export function isoTime(ms: number): string {
  const iso = new Date(ms).toISOString();
  return ms % 1000 === 0 ? iso.replace('.000Z', 'Z') : iso;
}
