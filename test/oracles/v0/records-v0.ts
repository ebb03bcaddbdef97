/**
 * Record validation as it was before the client-speed work (commit 9f0e6aa), kept verbatim as a
 * test oracle: the faster validator must return exactly what this returned, issue text included.
 */
/**
 * Record validation shared by the client (before sending) and the node (before storing).
 * Hand-written rather than zod because it runs on every record at hundreds of thousands per
 * second; each rule is spelled out once here and reported as `field: reason`.
 */

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
  /** Finer raw pieces: `[period seconds, pieces]`. */
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

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function metricOf(o: Record<string, unknown>): string {
  const m = o.metric;
  if (typeof m !== 'string' || m.length === 0) return fail('metric', `must be a non-empty string (${describe(m)})`);
  if (m.length > MAX_METRIC_LENGTH) return fail('metric', `must be at most ${MAX_METRIC_LENGTH} characters (got ${m.length})`);
  return m;
}

function idOf(o: Record<string, unknown>): string {
  const id = o.id;
  if (typeof id !== 'string' || !UUID_RE.test(id)) return fail('id', `must be a UUID like 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f (${describe(id)})`);
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

function aggregateOf(o: Record<string, unknown>, prefix: string): Aggregate {
  return {
    count: nonNegativeInt(o, 'count', `${prefix}count`),
    value: finite(o, 'value', `${prefix}value`, true),
    derivative: finite(o, 'derivative', `${prefix}derivative`, false),
    counter: finite(o, 'counter', `${prefix}counter`, false),
    stddev: finite(o, 'stddev', `${prefix}stddev`, false),
    derivative_stddev: finite(o, 'derivative_stddev', `${prefix}derivative_stddev`, false),
    counter_stddev: finite(o, 'counter_stddev', `${prefix}counter_stddev`, false),
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
  return [
    period,
    pieces.map((p, i) => (isObject(p) ? aggregateOf(p, `parts[1][${i}].`) : fail(`parts[1][${i}]`, `must be an object (${describe(p)})`))),
  ];
}

function offsetOf(o: Record<string, unknown>, smallestSpan: number | undefined): number {
  const offset = nonNegativeInt(o, 'offset');
  if (smallestSpan !== undefined && offset % smallestSpan !== 0) {
    fail('offset', `must be aligned to the smallest span ${smallestSpan}s (got ${offset}; nearest ${offset - (offset % smallestSpan)})`);
  }
  return offset;
}

function guard<T>(input: unknown, build: (o: Record<string, unknown>) => T): Validated<T> {
  if (!isObject(input)) return { ok: false, issue: { field: '(record)', reason: `must be an object (${describe(input)})` } };
  try {
    return { ok: true, record: build(input) };
  } catch (err) {
    if (err instanceof Invalid) return { ok: false, issue: err.issue };
    throw err;
  }
}

/** Validates one numeric record and returns it normalised (defaults filled, id lower-cased, unknown fields dropped). */
export function validateNntRecord(input: unknown, opts: ValidateOptions = {}): Validated<NntRecord> {
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
      stddev: finite(o, 'stddev', 'stddev', false),
      derivative_stddev: finite(o, 'derivative_stddev', 'derivative_stddev', false),
      counter_stddev: finite(o, 'counter_stddev', 'counter_stddev', false),
    };
    if (o.parts !== undefined && o.parts !== null) rec.parts = partsOf(o.parts, opts.smallestSpan);
    return rec;
  });
}

export function validateTextRecord(input: unknown): Validated<TextRecord> {
  return guard(input, (o) => {
    const value = o.value;
    if (typeof value !== 'string') fail('value', `must be a string (${describe(value)})`);
    return { metric: metricOf(o), id: idOf(o), offset: nonNegativeInt(o, 'offset'), value: value as string };
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
