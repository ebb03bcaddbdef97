import { UsageError } from './errors.js';

const UNIT_MS: Record<string, number> = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000 };
const DURATION_RE = /^(\d+(?:\.\d+)?)(ms|s|m|h|d|w)$/;

export const TIME_FORMS =
  'epoch seconds (1700000000), epoch with millis (1700000000.250), ISO-8601 (2026-08-01T00:00:00Z) or an age like 90d, 12h, 30m, 1w';

/** Parses a duration such as `2s`, `500ms`, `6h`, `1.5m` into milliseconds. */
export function parseDuration(text: string, field: string): number {
  const m = DURATION_RE.exec(text.trim());
  if (!m) throw new UsageError(`${field}: ${JSON.stringify(text)} is not a duration`, 'use a number and a unit: 500ms, 2s, 30m, 6h, 1d, 1w');
  const ms = Math.round(Number(m[1]) * UNIT_MS[m[2]!]!);
  // 9999...9s overflows to Infinity (found by fuzzing); no caller can use that.
  if (!Number.isSafeInteger(ms)) throw new UsageError(`${field}: ${JSON.stringify(text.length > 40 ? `${text.slice(0, 37)}...` : text)} is too long`, 'use a smaller number or a larger unit');
  if (ms <= 0) throw new UsageError(`${field}: ${JSON.stringify(text)} must be longer than zero`, 'e.g. 2s');
  return ms;
}

/**
 * Parses a command-line time into epoch milliseconds. Relative forms are ages: `90d` means
 * ninety days before `now`. ISO times need a zone (Z or an offset) so nobody deletes by local time by accident.
 */
export function parseTime(text: string, field: string, now: number): number {
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
  if (DURATION_RE.test(t)) return now - parseDuration(t, field);
  if (/^\d{4}-\d{2}-\d{2}$/.test(t)) return isoOrThrow(`${t}T00:00:00Z`, text, field);
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}(:\d{2}(\.\d{1,9})?)?(Z|[+-]\d{2}:?\d{2})$/i.test(t)) return isoOrThrow(t.replace(' ', 'T'), text, field);
  if (/^\d{4}-\d{2}-\d{2}[T ]\d{2}:\d{2}/.test(t)) {
    throw new UsageError(`${field}: ${JSON.stringify(text)} has no time zone`, `add Z for UTC (${t}Z) or an offset like +02:00`);
  }
  throw new UsageError(`${field}: ${JSON.stringify(text)} is not a time`, `use ${TIME_FORMS}`);
}

function isoOrThrow(iso: string, original: string, field: string): number {
  const ms = Date.parse(iso);
  if (Number.isNaN(ms)) throw new UsageError(`${field}: ${JSON.stringify(original)} is not a valid date`, `use ${TIME_FORMS}`);
  return ms;
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
