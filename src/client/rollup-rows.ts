/**
 * Rollup rows read straight from an answer's text: a year of 300 s buckets is 105,120 rows, so
 * the plain numeric shape is read by hand (as points, or as two columns with no array per row)
 * and anything else is left to the schema and its messages.
 */
import { msFromSeconds, ROLLUP_MEMBERS, type RollupAll } from '../protocol/index.js';

export interface RollupPoint<V> {
  /** Bucket start, epoch milliseconds. */
  timestampMs: number;
  value: V;
}

/** `[[ts, number|null], ...]` as points, or undefined when the text is anything else. */
export function numericPoints(text: string): RollupPoint<number | null>[] | undefined {
  let json: unknown;
  try {
    json = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (!Array.isArray(json)) return undefined;
  const points = new Array<RollupPoint<number | null>>(json.length);
  for (let i = 0; i < json.length; i++) {
    const row: unknown = json[i];
    if (!Array.isArray(row) || row.length !== 2) return undefined;
    const ts: unknown = row[0];
    const v: unknown = row[1];
    if (typeof ts !== 'number' || (v !== null && typeof v !== 'number')) return undefined;
    points[i] = { timestampMs: msFromSeconds(ts), value: v };
  }
  return points;
}

const JSON_NUMBER = /-?(?:0|[1-9]\d*)(?:\.\d+)?(?:[eE][+-]?\d+)?/y;

function skipWs(text: string, i: number): number {
  for (;;) {
    const c = text.charCodeAt(i);
    if (c === 32 || c === 10 || c === 13 || c === 9) i++;
    else return i;
  }
}

/**
 * `[[seconds, number|null], ...]` straight from the text into two Float64Arrays, without
 * JSON.parse's array per row. Strict JSON grammar for this shape; anything else (another shape,
 * bad JSON) returns undefined and the caller falls back to JSON.parse + the schema's messages.
 */
export function scanNumericRows(text: string): { timestampsMs: Float64Array; values: Float64Array } | undefined {
  // Rows are at least `[0,0]` plus a comma: an upper bound for the arrays, trimmed at the end.
  const cap = Math.max(0, Math.floor(text.length / 6) + 1);
  let timestampsMs = new Float64Array(cap);
  let values = new Float64Array(cap);
  let n = 0;
  let i = skipWs(text, 0);
  if (text.charCodeAt(i) !== 91 /* [ */) return undefined;
  i = skipWs(text, i + 1);
  if (text.charCodeAt(i) === 93 /* ] */) {
    i = skipWs(text, i + 1);
    return i === text.length ? { timestampsMs: new Float64Array(0), values: new Float64Array(0) } : undefined;
  }
  for (;;) {
    if (text.charCodeAt(i) !== 91) return undefined;
    i = skipWs(text, i + 1);
    // Timestamp: whole seconds are read digit by digit (exact below 2^53); anything else via Number.
    let ts = 0;
    let j = i;
    let c = text.charCodeAt(j);
    while (c >= 48 && c <= 57) {
      ts = ts * 10 + (c - 48);
      c = text.charCodeAt(++j);
    }
    const digits = j - i;
    if (digits === 0 || digits > 15 || (digits > 1 && text.charCodeAt(i) === 48) || c === 46 || c === 101 || c === 69) {
      JSON_NUMBER.lastIndex = i;
      if (!JSON_NUMBER.test(text)) return undefined;
      j = JSON_NUMBER.lastIndex;
      ts = Number(text.slice(i, j));
    }
    if (n === cap) return undefined; // cannot happen for valid JSON of this shape
    timestampsMs[n] = Math.round(ts * 1000);
    i = skipWs(text, j);
    if (text.charCodeAt(i) !== 44 /* , */) return undefined;
    i = skipWs(text, i + 1);
    c = text.charCodeAt(i);
    if (c === 110 /* n */) {
      if (text.charCodeAt(i + 1) !== 117 || text.charCodeAt(i + 2) !== 108 || text.charCodeAt(i + 3) !== 108) return undefined;
      values[n] = NaN;
      i += 4;
    } else {
      JSON_NUMBER.lastIndex = i;
      if (!JSON_NUMBER.test(text)) return undefined;
      j = JSON_NUMBER.lastIndex;
      values[n] = Number(text.slice(i, j));
      i = j;
    }
    n++;
    i = skipWs(text, i);
    if (text.charCodeAt(i) !== 93) return undefined;
    i = skipWs(text, i + 1);
    c = text.charCodeAt(i);
    if (c === 44) {
      i = skipWs(text, i + 1);
      continue;
    }
    if (c !== 93) return undefined;
    i = skipWs(text, i + 1);
    if (i !== text.length) return undefined;
    break;
  }
  timestampsMs = timestampsMs.slice(0, n);
  values = values.slice(0, n);
  return { timestampsMs, values };
}

/** Every member present, null where the node left one out. */
export function fillAll(v: Partial<Record<keyof RollupAll, number | null | undefined>>): RollupAll {
  const out = {} as RollupAll;
  for (const key of ROLLUP_MEMBERS) out[key] = v[key] ?? null;
  return out;
}
