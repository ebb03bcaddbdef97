/**
 * Record validation shared by the client (before sending) and the node (before storing).
 * Hand-written rather than zod because it runs on every record at hundreds of thousands per
 * second; each rule is spelled out once here and reported as `field: reason`.
 */
import { isJsonObject } from './json-object.js';

export const UUID_RE = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** Longest metric name a node accepts, in UTF-16 code units. */
export const MAX_METRIC_LENGTH = 4096;

/** The numeric fields of a record and of each of its parts. */
export const NUMERIC_FIELDS = ['count', 'value', 'derivative', 'counter', 'stddev', 'derivative_stddev', 'counter_stddev'] as const;
export type NumericField = (typeof NUMERIC_FIELDS)[number];
export type Aggregate = Record<NumericField, number>;

export interface NntRecord extends Aggregate {
  metric: string;
  /** Lower-cased check UUID. */
  id: string;
  /** Epoch seconds. */
  offset: number;
  /** Finer raw pieces: `[period seconds, pieces]`; absent when the record has none (see isNoParts). */
  parts?: [number, Aggregate[]];
}

export interface TextRecord {
  metric: string;
  id: string;
  offset: number;
  value: string;
}

export interface HistogramRecord {
  metric: string;
  id: string;
  offset: number;
  period: number;
  /** Opaque base64. */
  histogram: string;
}

/** Why a record is invalid: the field (dotted path inside the record) and the reason. */
export interface RecordIssue {
  field: string;
  reason: string;
}

export type Validated<T> = { ok: true; record: T } | { ok: false; issue: RecordIssue };

export interface ValidateOptions {
  /** The node's smallest numeric span in seconds; enables alignment and `parts` checks when known. */
  smallestSpan?: number;
}

class Invalid extends Error {
  constructor(readonly issue: RecordIssue) {
    super(`${issue.field}: ${issue.reason}`);
  }
}
const fail = (field: string, reason: string): never => {
  throw new Invalid({ field, reason });
};

function describe(v: unknown): string {
  if (v === undefined) return 'missing';
  if (typeof v === 'string') return `got ${JSON.stringify(v.length > 40 ? `${v.slice(0, 40)}…` : v)}`;
  if (v === null || typeof v !== 'object') return `got ${String(v)}`;
  return `got ${Array.isArray(v) ? 'an array' : 'an object'}`;
}

function metricOf(o: Record<string, unknown>): string {
  const m = o.metric;
  if (typeof m !== 'string' || m.length === 0) return fail('metric', `must be a non-empty string (${describe(m)})`);
  if (m.length > MAX_METRIC_LENGTH) return fail('metric', `must be at most ${MAX_METRIC_LENGTH} characters (got ${m.length})`);
  const bad = badNameChar(m);
  if (bad >= 0) return fail('metric', nameCharReason(m, bad));
  return m;
}

/**
 * The index of the first character a name must not hold, or -1: a control character (C0, DEL,
 * C1: they would reach an operator's terminal raw) or half of a surrogate pair (invalid UTF-8 in
 * a body arrives as one, see server/http.ts; stored, it would come back as U+FFFD and merge names).
 */
export function badNameChar(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c < 0x20 || (c >= 0x7f && c <= 0x9f)) return i;
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff && i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return i;
    }
  }
  return -1;
}

/** The index of the first half of a surrogate pair standing alone, or -1. */
function loneSurrogate(s: string): number {
  for (let i = 0; i < s.length; i++) {
    const c = s.charCodeAt(i);
    if (c >= 0xd800 && c <= 0xdfff) {
      const d = c <= 0xdbff && i + 1 < s.length ? s.charCodeAt(i + 1) : 0;
      if (d >= 0xdc00 && d <= 0xdfff) i++;
      else return i;
    }
  }
  return -1;
}

function codePoint(c: number): string {
  return `U+${c.toString(16).toUpperCase().padStart(4, '0')}`;
}

function nameCharReason(s: string, i: number): string {
  const c = s.charCodeAt(i);
  if (c >= 0xd800 && c <= 0xdfff) return `must be valid Unicode: character ${i + 1} is half of a surrogate pair (${codePoint(c)}: invalid UTF-8 or a lone \\u escape)`;
  return `must not contain control characters (${codePoint(c)} at character ${i + 1})`;
}

function idOf(o: Record<string, unknown>): string {
  const id = o.id;
  if (typeof id !== 'string' || !isUuid(id)) return fail('id', `must be a UUID like 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f (${describe(id)})`);
  return id.toLowerCase();
}

function nonNegativeInt(o: Record<string, unknown>, field: string, path = field): number {
  const v = o[field];
  if (typeof v !== 'number' || !Number.isSafeInteger(v) || v < 0) return fail(path, `must be a whole number >= 0 (${describe(v)})`);
  return v;
}

function finite(o: Record<string, unknown>, field: string, path: string, required: boolean): number {
  const v = o[field];
  if (v === undefined && !required) return 0;
  if (typeof v !== 'number' || !Number.isFinite(v)) return fail(path, `must be a finite number (${describe(v)})`);
  return v;
}

/** A standard deviation: absent (0) or a finite number >= 0. */
function deviation(o: Record<string, unknown>, field: string, path: string): number {
  const v = finite(o, field, path, false);
  if (v < 0) return fail(path, `must be >= 0, it is a standard deviation (got ${v})`);
  return v;
}

function aggregateOf(o: Record<string, unknown>, prefix: string): Aggregate {
  return {
    count: nonNegativeInt(o, 'count', `${prefix}count`),
    value: finite(o, 'value', `${prefix}value`, true),
    derivative: finite(o, 'derivative', `${prefix}derivative`, false),
    counter: finite(o, 'counter', `${prefix}counter`, false),
    stddev: deviation(o, 'stddev', `${prefix}stddev`),
    derivative_stddev: deviation(o, 'derivative_stddev', `${prefix}derivative_stddev`),
    counter_stddev: deviation(o, 'counter_stddev', `${prefix}counter_stddev`),
  };
}

function partsOf(raw: unknown, smallestSpan: number | undefined): [number, Aggregate[]] {
  if (!Array.isArray(raw) || raw.length !== 2) return fail('parts', `must be [period, [pieces...]] (${describe(raw)})`);
  const [period, pieces] = raw as [unknown, unknown];
  if (typeof period !== 'number' || !Number.isSafeInteger(period) || period <= 0) {
    return fail('parts[0]', `period must be a whole number of seconds > 0 (${describe(period)})`);
  }
  if (!Array.isArray(pieces)) return fail('parts[1]', `must be an array of pieces (${describe(pieces)})`);
  if (smallestSpan !== undefined) {
    if (smallestSpan % period !== 0) return fail('parts[0]', `period ${period} must divide the smallest span ${smallestSpan}`);
    const want = smallestSpan / period;
    if (pieces.length !== want) return fail('parts[1]', `must hold ${want} pieces of ${period}s for a ${smallestSpan}s record (got ${pieces.length})`);
  }
  return [period, pieces.map((p, i) => (isJsonObject(p) ? aggregateOf(p, `parts[1][${i}].`) : fail(`parts[1][${i}]`, `must be an object (${describe(p)})`)))];
}

function offsetOf(o: Record<string, unknown>, smallestSpan: number | undefined): number {
  const offset = nonNegativeInt(o, 'offset');
  if (smallestSpan !== undefined && offset % smallestSpan !== 0) {
    fail('offset', `must be aligned to the smallest span ${smallestSpan}s (got ${offset}; nearest ${offset - (offset % smallestSpan)})`);
  }
  return offset;
}

function guard<T>(input: unknown, build: (o: Record<string, unknown>) => T): Validated<T> {
  if (!isJsonObject(input)) return { ok: false, issue: { field: '(record)', reason: `must be an object (${describe(input)})` } };
  try {
    return { ok: true, record: build(input) };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, issue: err.issue };
    throw err;
  }
}

/** `UUID_RE.test(s)` without the regular expression (this runs for every record written). */
export function isUuid(s: string): boolean {
  if (s.length !== 36) return false;
  for (let i = 0; i < 36; i++) {
    const c = s.charCodeAt(i);
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== 0x2d) return false;
    } else if (!((c >= 0x30 && c <= 0x39) || ((c | 0x20) >= 0x61 && (c | 0x20) <= 0x66))) return false; // 0-9, a-f, A-F (| 0x20 lower-cases A-F and maps nothing else there)
  }
  return true;
}

/**
 * The spellings of "no parts" besides leaving the field out: `null`, and a period of 0 with no
 * pieces, `[0,null]` or `[0,[]]`. The production Go client sends `[0,null]` (the zero value of
 * its Parts type) for every record it has no parts for.
 */
export function isNoParts(parts: unknown): boolean {
  if (parts === null) return true;
  if (!Array.isArray(parts) || parts.length !== 2 || parts[0] !== 0) return false;
  const pieces: unknown = parts[1];
  return pieces === null || (Array.isArray(pieces) && pieces.length === 0);
}

/** An optional numeric field is fine: absent, or a finite number. */
const optionalFinite = (v: unknown): boolean => v === undefined || (typeof v === 'number' && Number.isFinite(v));
/** An optional standard deviation is fine: absent, or a finite number >= 0. */
const optionalDeviation = (v: unknown): boolean => v === undefined || (typeof v === 'number' && Number.isFinite(v) && v >= 0);

/**
 * The one-pass check: true for a record without `parts` whose every field is valid. Plain property
 * reads and no object built, because it runs for every record written. A false here decides
 * nothing: the field-by-field checks of `validateNntRecord` then find the bad field (or accept
 * the record, e.g. one with parts).
 */
function plainValid(o: Record<string, unknown>, span: number | undefined): boolean {
  const { metric, id, offset, count, value } = o;
  return (
    (o.parts === undefined || isNoParts(o.parts)) &&
    typeof metric === 'string' &&
    metric.length > 0 &&
    metric.length <= MAX_METRIC_LENGTH &&
    badNameChar(metric) < 0 &&
    typeof id === 'string' &&
    isUuid(id) &&
    typeof offset === 'number' &&
    Number.isSafeInteger(offset) &&
    offset >= 0 &&
    (span === undefined || offset % span === 0) &&
    typeof count === 'number' &&
    Number.isSafeInteger(count) &&
    count >= 0 &&
    typeof value === 'number' &&
    Number.isFinite(value) &&
    optionalFinite(o.derivative) &&
    optionalFinite(o.counter) &&
    optionalDeviation(o.stddev) &&
    optionalDeviation(o.derivative_stddev) &&
    optionalDeviation(o.counter_stddev)
  );
}

/**
 * Validates one numeric record and returns it normalised (defaults filled, id lower-cased, unknown
 * fields dropped).
 *
 * A record that `plainValid` accepts is built straight away; anything else (parts, or any field in
 * doubt) goes through the field-by-field checks below, which name the first bad field. Both accept
 * exactly the same records and build the same normalised record (test/unit/records-fastpath.test.ts
 * compares them with the previous validator on generated input).
 */
export function validateNntRecord(input: unknown, opts: ValidateOptions = {}): Validated<NntRecord> {
  if (isJsonObject(input) && plainValid(input, opts.smallestSpan)) {
    // plainValid checked every one of these.
    const o = input as Pick<NntRecord, 'metric' | 'id' | 'offset' | 'count' | 'value'> & Partial<Aggregate>;
    return {
      ok: true,
      record: {
        metric: o.metric,
        id: o.id.toLowerCase(),
        offset: o.offset,
        count: o.count,
        value: o.value,
        derivative: o.derivative ?? 0,
        counter: o.counter ?? 0,
        stddev: o.stddev ?? 0,
        derivative_stddev: o.derivative_stddev ?? 0,
        counter_stddev: o.counter_stddev ?? 0,
      },
    };
  }
  return validateNntRecordFieldByField(input, opts);
}

/**
 * What `validateNntRecord` finds wrong with a record, or undefined when it is valid: the same
 * verdict, without building the normalised record (for callers that send the record as read).
 */
export function nntRecordIssue(input: unknown, opts: ValidateOptions = {}): RecordIssue | undefined {
  if (isJsonObject(input) && plainValid(input, opts.smallestSpan)) return undefined;
  const checked = validateNntRecordFieldByField(input, opts);
  return checked.ok ? undefined : checked.issue;
}

function validateNntRecordFieldByField(input: unknown, opts: ValidateOptions): Validated<NntRecord> {
  return guard(input, (o) => {
    // Built in one literal (no spread): this runs for every record of every write.
    const rec: NntRecord = {
      metric: metricOf(o),
      id: idOf(o),
      offset: offsetOf(o, opts.smallestSpan),
      count: nonNegativeInt(o, 'count'),
      value: finite(o, 'value', 'value', true),
      derivative: finite(o, 'derivative', 'derivative', false),
      counter: finite(o, 'counter', 'counter', false),
      stddev: deviation(o, 'stddev', 'stddev'),
      derivative_stddev: deviation(o, 'derivative_stddev', 'derivative_stddev'),
      counter_stddev: deviation(o, 'counter_stddev', 'counter_stddev'),
    };
    if (o.parts !== undefined && !isNoParts(o.parts)) rec.parts = partsOf(o.parts, opts.smallestSpan);
    return rec;
  });
}

/**
 * A text record's offset: a whole number >= 0, or the same written as a decimal string, as the
 * store's write-text example and the production Go client (whose TextData.Offset is a string) send it.
 */
function textOffsetOf(o: Record<string, unknown>): number {
  const v = o.offset;
  if (typeof v === 'string' && /^(0|[1-9]\d{0,14})$/.test(v)) return Number(v);
  if (typeof v === 'number' && Number.isSafeInteger(v) && v >= 0) return v;
  return fail('offset', `must be a whole number >= 0, or one written as a string like "1408724400" (${describe(v)})`);
}

export function validateTextRecord(input: unknown): Validated<TextRecord> {
  return guard(input, (o) => {
    const value = o.value;
    if (typeof value !== 'string') fail('value', `must be a string (${describe(value)})`);
    const lone = loneSurrogate(value as string);
    if (lone >= 0) fail('value', nameCharReason(value as string, lone));
    return { metric: metricOf(o), id: idOf(o), offset: textOffsetOf(o), value: value as string };
  });
}

const BASE64_RE = /^[A-Za-z0-9+/]*={0,2}$/;

export function validateHistogramRecord(input: unknown, periods?: readonly number[]): Validated<HistogramRecord> {
  return guard(input, (o) => {
    const rec = { metric: metricOf(o), id: idOf(o), offset: nonNegativeInt(o, 'offset'), period: nonNegativeInt(o, 'period'), histogram: '' };
    if (periods && !periods.includes(rec.period)) fail('period', `must be a configured histogram period (${periods.join(', ')}); got ${rec.period}`);
    const h = o.histogram;
    if (typeof h !== 'string' || h.length % 4 !== 0 || !BASE64_RE.test(h)) fail('histogram', `must be a base64 string (${describe(h)})`);
    rec.histogram = h as string;
    return rec;
  });
}
