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

/** `b`'s bytes from `start` to `end` as a one-byte string (Buffer's own latin1Slice: no encoding lookup, no subarray). */
const latin1 = (b: Buffer, start: number, end: number): string =>
  (Buffer.prototype as unknown as { latin1Slice(this: Buffer, s: number, e: number): string }).latin1Slice.call(b, start, end);

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
/**
 * Told the rows of a columns read as they arrive, after each piece of the answer: the columns so
 * far and how many rows they hold. `rows` 0 means start over (the read was retried, or the scan
 * gave up and the rows come from a full parse next). The arrays may be replaced as they grow:
 * read them during the call only. A consumer formats while the rest is on its way.
 */
export type RowsSoFar = (timestampsMs: Float64Array, values: Float64Array, rows: number, digits?: ValueDigits) => void;

/** The longest value text ValueDigits keeps (a sign, 17 digits, a point and leading zeros): printers reserve room for it. */
export const MAX_DIGITS_TEXT = 24;

/**
 * Each row's value with the digits the node wrote, for a printer that would otherwise turn the
 * parsed double back into text (String() of a double costs more than reading it): row r's are
 * `bytes[r === 0 ? 0 : ends[r - 1]]` up to `bytes[ends[r]]`. Kept only for a plain decimal of at
 * most 17 significant digits that JavaScript would not shorten by a trailing zero or a sign
 * (`-0`): no exponent, so the digits are the exact number the node sent, the double is the
 * nearest to them. Empty for null, and for any other spelling (then print the double).
 */
export interface ValueDigits {
  /** The digits of every row, one after the other (at most MAX_DIGITS_TEXT bytes a row). */
  bytes: Uint8Array;
  ends: Int32Array;
}

export class NumericRowStream {
  private carry: Buffer | undefined;
  /** 0: before the outer `[`; 1: before a row (or `]` of an empty array); 2: after a row; 3: after the outer `]`. */
  private stage = 0;
  private bad = false;
  private chunks: Buffer[] = [];
  private ts: Float64Array;
  private vals: Float64Array;
  private n = 0;
  /** The number numberAt() read last (a double from the start: a field that starts as a small integer and later holds a fraction deoptimises the code that read it). */
  private num = Number.NaN;
  /** Whether that number's text is one ValueDigits keeps. */
  private plain = false;
  /** ValueDigits being kept (undefined: not asked for); `digitsEnd`: bytes in use. */
  private digits: ValueDigits | undefined;
  private digitsEnd = 0;

  /**
   * `rows`: how many rows the answer should hold (the columns start that long, at most 2^18 rows;
   * they grow past it). `keepDigits`: keep each value's digits (ValueDigits) for a printer.
   */
  constructor(
    rows = 1024,
    private readonly onRows?: RowsSoFar,
    keepDigits = false,
  ) {
    const n = Math.max(16, Math.min(rows, 1 << 18));
    this.ts = new Float64Array(n);
    this.vals = new Float64Array(n);
    if (keepDigits) this.digits = { bytes: new Uint8Array(n * 18), ends: new Int32Array(n) };
  }

  start(): void {
    this.carry = undefined;
    this.stage = 0;
    this.bad = false;
    this.chunks = [];
    this.n = 0;
    this.digitsEnd = 0;
    this.onRows?.(this.ts, this.vals, 0, this.digits);
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
    else {
      this.carry = i < b.length ? b.subarray(i) : undefined;
      this.onRows?.(this.ts, this.vals, this.n, this.digits);
    }
  }

  /** The columns, or undefined when the answer is not `[[seconds, number|null], ...]` (then use text()). */
  end(): { timestampsMs: Float64Array; values: Float64Array; digits?: ValueDigits } | undefined {
    if (this.bad || this.stage !== 3 || (this.carry && skipWs(this.carry, 0) !== this.carry.length)) return undefined;
    const out = { timestampsMs: this.ts.subarray(0, this.n), values: this.vals.subarray(0, this.n) };
    // Handed over without a copy: a later start() writes into new columns.
    this.ts = new Float64Array(16);
    this.vals = new Float64Array(16);
    const digits = this.digits;
    if (digits === undefined) return out;
    this.digits = { bytes: new Uint8Array(256), ends: new Int32Array(16) };
    return { ...out, digits: { bytes: digits.bytes.subarray(0, this.digitsEnd), ends: digits.ends.subarray(0, this.n) } };
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
        let next = i + 1;
        if (next < b.length && b[next]! <= 32) next = skipWs(b, next);
        if (next >= b.length) return i;
        const end = this.row(b, next);
        if (end === MORE) return i;
        if (end === BAD) return BAD;
        i = end < b.length && b[end]! <= 32 ? skipWs(b, end) : end;
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

  /**
   * One `[seconds, number|null]` at `i`: stored, and the index after its `]`; MORE when `b` ends first.
   * Written for the interpreter as much as for TurboFan: the first few thousand rows of a CLI read
   * run before V8 has optimised this, so whitespace is looked for only where a byte could be some
   * (`<= 32`), and no helper is called per byte.
   */
  private row(b: Buffer, i: number): number {
    const n = b.length;
    if (b[i] !== 91) return BAD;
    i++;
    if (i < n && b[i]! <= 32) i = skipWs(b, i);
    i = this.numberAt(b, i);
    if (i < 0) return i;
    const ts = this.num;
    if (i < n && b[i]! <= 32) i = skipWs(b, i);
    if (i >= n) return MORE;
    if (b[i] !== 44) return BAD;
    i++;
    if (i < n && b[i]! <= 32) i = skipWs(b, i);
    if (i >= n) return MORE;
    let v: number;
    // Where this row's digits end in ValueDigits: committed with the row, so a row read again from
    // the next piece writes over what it left.
    let digitsEnd = this.digitsEnd;
    if (b[i] === 110) {
      if (i + 4 > n) return MORE;
      if (b[i + 1] !== 117 || b[i + 2] !== 108 || b[i + 3] !== 108) return BAD;
      v = NaN;
      i += 4;
    } else {
      const start = i;
      i = this.numberAt(b, i);
      if (i < 0) return i;
      v = this.num;
      if (this.digits !== undefined && this.plain && i - start <= MAX_DIGITS_TEXT) digitsEnd = this.keepDigits(b, start, i);
    }
    if (i < n && b[i]! <= 32) i = skipWs(b, i);
    if (i >= n) return MORE;
    if (b[i] !== 93) return BAD;
    if (this.n === this.ts.length) this.grow();
    this.ts[this.n] = msFromSeconds(ts);
    this.vals[this.n] = v;
    if (this.digits !== undefined) {
      this.digits.ends[this.n] = digitsEnd;
      this.digitsEnd = digitsEnd;
    }
    this.n++;
    this.stage = 2;
    return i + 1;
  }

  /** Twice the room for rows (out of the row loop). */
  private grow(): void {
    const bigger = (a: Float64Array): Float64Array => {
      const out = new Float64Array(a.length * 2);
      out.set(a);
      return out;
    };
    this.ts = bigger(this.ts);
    this.vals = bigger(this.vals);
    if (this.digits !== undefined) {
      const ends = new Int32Array(this.ts.length);
      ends.set(this.digits.ends);
      this.digits.ends = ends;
    }
  }

  /** Copies `b[start..end)` after the kept digits; returns where they end. */
  private keepDigits(b: Buffer, start: number, end: number): number {
    const d = this.digits!;
    let at = this.digitsEnd;
    if (at + (end - start) > d.bytes.length) {
      const bigger = new Uint8Array(Math.max(2 * d.bytes.length, at + (end - start)));
      bigger.set(d.bytes.subarray(0, at));
      d.bytes = bigger;
    }
    const out = d.bytes;
    for (let k = start; k < end; k++) out[at++] = b[k]!;
    return at;
  }

  /**
   * A JSON number at `i` into `this.num`: the index after it, BAD, or MORE when `b` ends inside
   * it or right after it (the next chunk could go on with it). Exact: digits that fit in 2^53
   * with at most 22 after the point are one correctly rounded division (both operands exact,
   * Clinger's fast path); anything else (more digits, an exponent) is left to Number(). `c` is
   * the byte at `i`, or -1 past the end.
   */
  private numberAt(b: Buffer, i: number): number {
    const start = i;
    const n = b.length;
    let c = i < n ? b[i]! : -1;
    const negative = c === 45;
    if (negative) c = ++i < n ? b[i]! : -1;
    let m = 0;
    if (c === 48) c = ++i < n ? b[i]! : -1;
    else if (c >= 49 && c <= 57) {
      do {
        m = m * 10 + (c - 48);
        c = ++i < n ? b[i]! : -1;
      } while (c >= 48 && c <= 57);
    } else return c < 0 ? MORE : BAD;
    let fraction = 0;
    if (c === 46) {
      const first = ++i;
      c = i < n ? b[i]! : -1;
      while (c >= 48 && c <= 57) {
        m = m * 10 + (c - 48);
        c = ++i < n ? b[i]! : -1;
      }
      fraction = i - first;
      if (fraction === 0) return c < 0 ? MORE : BAD;
    }
    if (c === 101 || c === 69) return this.exponentAt(b, start, i);
    if (c < 0) return MORE;
    // ValueDigits' test: at most 17 significant digits, no `-0`, no trailing zero after the point.
    this.plain = m < 1e17 && (m !== 0 || !negative) && (fraction === 0 || b[i - 1] !== 48);
    if (m <= Number.MAX_SAFE_INTEGER && fraction <= 22) {
      const v = fraction === 0 ? m : m / EXACT_POW10[fraction]!;
      this.num = negative ? -v : v;
    } else this.num = Number(latin1(b, start, i));
    return i;
  }

  /** The rest of numberAt for a number with an exponent at `i` (rare: out of the hot function). */
  private exponentAt(b: Buffer, start: number, i: number): number {
    const n = b.length;
    i++;
    if (i < n && (b[i] === 43 || b[i] === 45)) i++;
    if (!digitAt(b, i)) return i >= n ? MORE : BAD;
    while (digitAt(b, i)) i++;
    if (i >= n) return MORE;
    this.num = Number(latin1(b, start, i));
    this.plain = false;
    return i;
  }
}
