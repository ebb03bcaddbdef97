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

/**
 * JSON whitespace (space, line feed, carriage return, tab) from `i` on. Every read of `b` here and
 * below stays inside it: a read past the end deoptimises the scan, which a year of rows feels.
 */
function skipWs(b: Uint8Array, i: number): number {
  const n = b.length;
  while (i < n) {
    const c = b[i]!;
    if (c !== 32 && c !== 10 && c !== 13 && c !== 9) return i;
    i++;
  }
  return i;
}

/** Every member present, null where the node left one out. */
export function fillAll(v: Partial<Record<keyof RollupAll, number | null | undefined>>): RollupAll {
  const out = {} as RollupAll;
  for (const key of ROLLUP_MEMBERS) out[key] = v[key] ?? null;
  return out;
}

/** parseRow's answers besides an index: the row runs past the bytes seen so far, or is not of the shape. */
const MORE = -1;
const BAD = -2;

/** Powers of ten a double holds exactly (10^22 is the last). */
const EXACT_POW10 = Array.from({ length: 23 }, (_, k) => Number(`1e${k}`));

/** Whether `b[i]` is a digit (false past the end). */
const digitAt = (b: Uint8Array, i: number): boolean => i < b.length && b[i]! >= 48 && b[i]! <= 57;

/**
 * `[[seconds, number|null], ...]` read into two Float64Arrays as the answer arrives in chunks (a
 * BodySink), straight from the bytes: no string per chunk, no array per row. Each complete row is
 * read as its chunk arrives; only an unfinished row's bytes are carried to the next chunk. Strict
 * JSON grammar for this shape. The raw bytes are kept until the end, so an answer that does not fit
 * (another shape, bad JSON) still goes to the schema and its messages (`text()`), which name the
 * row at fault.
 */
export class NumericRowStream {
  private carry: Buffer | undefined;
  /** 0: before the outer `[`; 1: before a row (or `]` of an empty array); 2: after a row; 3: after the outer `]`. */
  private stage = 0;
  private bad = false;
  private chunks: Buffer[] = [];
  private ts: Float64Array;
  private vals: Float64Array;
  private n = 0;
  /** The number numberAt() read last. */
  private num = 0;

  /** `rows`: how many rows the answer should hold (the columns start that long, at most 2^18 rows; they grow past it). */
  constructor(rows = 1024) {
    const n = Math.max(16, Math.min(rows, 1 << 18));
    this.ts = new Float64Array(n);
    this.vals = new Float64Array(n);
  }

  start(): void {
    this.carry = undefined;
    this.stage = 0;
    this.bad = false;
    this.chunks = [];
    this.n = 0;
  }

  chunk(bytes: Buffer): void {
    this.chunks.push(bytes);
    if (this.bad) return;
    const b = this.carry ? Buffer.concat([this.carry, bytes]) : bytes;
    // Only up to the last `]`: rows are read whole, so a well-formed answer never sends numberAt
    // or row to their MORE paths, which V8 would meet for the first time in optimised code (a
    // deoptimisation and a second compile); the rest is carried to the next chunk.
    const i = this.scan(b.subarray(0, b.lastIndexOf(93) + 1));
    if (i === BAD) this.bad = true;
    else this.carry = i < b.length ? b.subarray(i) : undefined;
  }

  /** The columns, or undefined when the answer is not `[[seconds, number|null], ...]` (then use text()). */
  end(): { timestampsMs: Float64Array; values: Float64Array } | undefined {
    if (this.bad || this.stage !== 3 || (this.carry && skipWs(this.carry, 0) !== this.carry.length)) return undefined;
    const out = { timestampsMs: this.ts.subarray(0, this.n), values: this.vals.subarray(0, this.n) };
    // Handed over without a copy: a later start() writes into new columns.
    this.ts = new Float64Array(16);
    this.vals = new Float64Array(16);
    return out;
  }

  /** The whole answer as text (UTF-8, a byte-order mark dropped), for the fallback. */
  text(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  /** Reads what it can of `b`; returns where the unread rest starts, or BAD. */
  private scan(b: Buffer): number {
    let i = skipWs(b, 0);
    for (;;) {
      if (i >= b.length) return i;
      const c = b[i];
      if (this.stage === 0) {
        if (c !== 91) return BAD;
        this.stage = 1;
        i = skipWs(b, i + 1);
        continue;
      } else if (this.stage === 2) {
        if (c === 93) {
          this.stage = 3;
          return i + 1;
        }
        if (c !== 44) return BAD;
        // Keep the comma with an unfinished row: the row after it is read once whole.
        const next = skipWs(b, i + 1);
        if (next >= b.length) return i;
        const end = this.row(b, next);
        if (end === MORE) return i;
        if (end === BAD) return BAD;
        i = skipWs(b, end);
        continue;
      } else if (this.stage === 3) return i;
      // stage 1: the first row, or the `]` of an empty array.
      if (c === 93) {
        this.stage = 3;
        return i + 1;
      }
      const end = this.row(b, i);
      if (end === MORE) return i;
      if (end === BAD) return BAD;
      i = skipWs(b, end);
    }
  }

  /** One `[seconds, number|null]` at `i`: stored, and the index after its `]`; MORE when `b` ends first. */
  private row(b: Buffer, i: number): number {
    if (b[i] !== 91) return BAD;
    i = this.numberAt(b, skipWs(b, i + 1));
    if (i < 0) return i;
    const ts = this.num;
    i = skipWs(b, i);
    if (i >= b.length) return MORE;
    if (b[i] !== 44) return BAD;
    i = skipWs(b, i + 1);
    if (i >= b.length) return MORE;
    let v: number;
    if (b[i] === 110) {
      if (i + 4 > b.length) return MORE;
      if (b[i + 1] !== 117 || b[i + 2] !== 108 || b[i + 3] !== 108) return BAD;
      v = NaN;
      i += 4;
    } else {
      i = this.numberAt(b, i);
      if (i < 0) return i;
      v = this.num;
    }
    i = skipWs(b, i);
    if (i >= b.length) return MORE;
    if (b[i] !== 93) return BAD;
    if (this.n === this.ts.length) {
      const grow = (a: Float64Array): Float64Array => {
        const bigger = new Float64Array(a.length * 2);
        bigger.set(a);
        return bigger;
      };
      this.ts = grow(this.ts);
      this.vals = grow(this.vals);
    }
    this.ts[this.n] = msFromSeconds(ts);
    this.vals[this.n] = v;
    this.n++;
    this.stage = 2;
    return i + 1;
  }

  /**
   * A JSON number at `i` into `this.num`: the index after it, BAD, or MORE when `b` ends inside
   * it or right after it (the next chunk could go on with it). Exact: digits that fit in 2^53
   * with at most 22 after the point are one correctly rounded division (both operands exact,
   * Clinger's fast path); anything else (an exponent, more digits) is left to Number().
   */
  private numberAt(b: Buffer, i: number): number {
    const start = i;
    const n = b.length;
    const negative = i < n && b[i] === 45;
    if (negative) i++;
    if (i >= n) return MORE;
    let m = 0;
    if (b[i] === 48) i++;
    else if (digitAt(b, i)) {
      while (digitAt(b, i)) m = m * 10 + (b[i++]! - 48);
    } else return BAD;
    let fraction = 0;
    if (i < n && b[i] === 46) {
      const first = ++i;
      while (digitAt(b, i)) m = m * 10 + (b[i++]! - 48);
      fraction = i - first;
      if (fraction === 0) return i >= n ? MORE : BAD;
    }
    let exponent = false;
    if (i < n && (b[i] === 101 || b[i] === 69)) {
      exponent = true;
      i++;
      if (i < n && (b[i] === 43 || b[i] === 45)) i++;
      if (!digitAt(b, i)) return i >= n ? MORE : BAD;
      while (digitAt(b, i)) i++;
    }
    if (i >= n) return MORE;
    if (!exponent && m <= Number.MAX_SAFE_INTEGER && fraction <= 22) {
      const v = fraction === 0 ? m : m / EXACT_POW10[fraction]!;
      this.num = negative ? -v : v;
    } else this.num = Number(b.toString('latin1', start, i));
    return i;
  }
}
