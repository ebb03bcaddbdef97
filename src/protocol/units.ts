/**
 * The one grammar for durations and byte sizes, for flags, retention policies, profiles and the
 * node's own config alike: `--before 1y` reads as a policy's `1y` does. Pure and import-free: each
 * caller wraps a failed reading in its own error type, naming its field.
 *
 * Durations: a number (decimals allowed) and a unit `ms`, `s`, `m`, `h`, `d`, `w` or `y` (365
 * days: a fixed length, never a calendar year). Units are lower case (`1M` would be ambiguous).
 * Arithmetic is exact (BigInt), so `0.1h` is 360 s, not 360.00000000000006.
 *
 * Sizes: a number and an optional unit, case-insensitive. Binary: bare K/M/G/T and KiB/MiB/GiB/TiB
 * (1024^n); decimal: KB/MB/GB/TB (1000^n); B or no unit: bytes. So `4m` = `4MiB` = 4,194,304.
 */

export const DURATION_UNITS_MS = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000, w: 604_800_000, y: 31_536_000_000 } as const;
export type DurationUnit = keyof typeof DURATION_UNITS_MS;

export const DURATION_FORMS = 'a number and a unit: 500ms, 2s, 30m, 6h, 1d, 1w or 1y (365 days)';

/**
 * A reading: the value, or what is wrong with the text (a sentence about the quoted text) and a
 * hint. `rounded` (durations): the text came to a fraction of a millisecond (`1.0004s`) and was rounded.
 */
export type Reading = { ok: true; value: number; rounded?: true } | { ok: false; problem: string; hint?: string };

/** A value for a message: quoted, shortened (a pasted blob must not flood the terminal). */
export function quoteValue(text: string): string {
  return JSON.stringify(text.length > 60 ? `${text.slice(0, 57)}...` : text);
}

/** `a duration`, `an age`. */
function article(noun: string): string {
  return `${/^[aeiou]/.test(noun) ? 'an' : 'a'} ${noun}`;
}

const DURATION_RE = /^(\d+)(?:\.(\d+))?([a-zA-Z]*)$/;

export interface ReadDurationOptions {
  /** The unit of a bare number (`--pace 250` = 250 ms; a node's `3600` = seconds). Without it a bare number is refused. */
  bareUnit?: DurationUnit;
  /** What the text is called in a problem (`duration`, `age`, `time span`). */
  noun?: string;
}

/**
 * Reads a duration into milliseconds, exactly. `value` is whole milliseconds (rounded to the
 * nearest); a caller that needs whole seconds checks `value % 1000` itself.
 */
export function readDuration(text: string, opts: ReadDurationOptions = {}): Reading {
  const t = text.trim();
  const shown = quoteValue(t);
  const noun = opts.noun ?? 'duration';
  if (t === '') return { ok: false, problem: `no ${noun} given`, hint: `use ${DURATION_FORMS}` };
  if (t.startsWith('-')) return { ok: false, problem: `${shown} is negative`, hint: `use ${DURATION_FORMS}` };
  const m = DURATION_RE.exec(t);
  if (!m) return { ok: false, problem: `${shown} is not ${article(noun)}`, hint: `use ${DURATION_FORMS}` };
  const [, whole, frac = '', unitText] = m as unknown as [string, string, string | undefined, string];
  const unit = (unitText === '' ? opts.bareUnit : unitText) as DurationUnit | undefined;
  if (unit === undefined) {
    if (Number(t) === 0) return { ok: true, value: 0 };
    return { ok: false, problem: `${shown} is not ${article(noun)} (a bare number has no unit: ${t}s or ${t}ms?)`, hint: `use ${DURATION_FORMS}` };
  }
  const perUnit = DURATION_UNITS_MS[unit];
  if (perUnit === undefined) {
    const hint = /^(mo|mon|month|months|M)$/.test(unitText)
      ? 'months differ in length: use days, e.g. 30d'
      : /^(MS|Ms|[SHDWY])$/.test(unitText)
        ? `units are lower case: ${whole}${frac ? `.${frac}` : ''}${unitText.toLowerCase()}`
        : `use ${DURATION_FORMS}`;
    return { ok: false, problem: `${shown} has an unknown unit ${JSON.stringify(unitText)}`, hint };
  }
  if (whole.length + frac.length > 30) return { ok: false, problem: `${shown} is too long`, hint: 'use a smaller number or a larger unit' };
  // value = whole.frac * perUnit, exactly: (whole*10^f + frac) * perUnit / 10^f, rounded to whole ms
  const scale = 10n ** BigInt(frac.length);
  const numerator = (BigInt(whole) * scale + BigInt(frac || '0')) * BigInt(perUnit);
  const ms = (numerator * 2n + scale) / (2n * scale);
  if (ms > BigInt(Number.MAX_SAFE_INTEGER)) return { ok: false, problem: `${shown} is too long`, hint: 'use a smaller number or a larger unit' };
  return numerator % scale === 0n ? { ok: true, value: Number(ms) } : { ok: true, value: Number(ms), rounded: true };
}

/** A duration in the largest unit that divides it: 90000 -> `90s`, 3600000 -> `1h`, 1500 -> `1500ms`. */
export function formatDurationMs(ms: number): string {
  for (const u of ['y', 'w', 'd', 'h', 'm', 's'] as const) {
    const per = DURATION_UNITS_MS[u];
    if (ms >= per && ms % per === 0) return `${ms / per}${u}`;
  }
  return `${ms}ms`;
}

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

/** `65536`, `512KiB`, `4MiB`, `4m`, `1.5GiB`, `10MB` -> bytes (a whole number, rounded down). */
export function readSize(text: string): Reading {
  const m = /^(\d+(?:\.\d+)?)\s*([a-z]*)$/i.exec(text.trim());
  const unit = m ? SIZE_UNITS[m[2]!.toLowerCase()] : undefined;
  if (!m || unit === undefined) return { ok: false, problem: `${quoteValue(text)} is not a size`, hint: `use ${SIZE_FORMS}` };
  const bytes = Math.floor(Number(m[1]) * unit);
  if (!Number.isSafeInteger(bytes)) return { ok: false, problem: `${quoteValue(text)} is too large`, hint: `use ${SIZE_FORMS}` };
  return { ok: true, value: bytes };
}

/** A byte count the way sizes read it back: `4MiB`, `1500B`, `1.5GiB`. */
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
