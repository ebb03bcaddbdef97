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

/** Every member present, null where the node left one out. */
export function fillAll(v: Partial<Record<keyof RollupAll, number | null | undefined>>): RollupAll {
  const out = {} as RollupAll;
  for (const key of ROLLUP_MEMBERS) out[key] = v[key] ?? null;
  return out;
}

/**
 * Whether a number that ends at `j` may go on in the next chunk: `s` ends there, or with a `.`,
 * `e` or `E` (and at most a sign) after it, which the next chunk could complete (`1.` + `5`).
 */
function cutShort(s: string, j: number): boolean {
  if (j >= s.length) return true;
  const c = s.charCodeAt(j);
  return (c === 46 || c === 101 || c === 69) && s.length - j <= 2;
}

/** parseRow's answers besides an index: the row runs past the text seen so far, or is not of the shape. */
const MORE = -1;
const BAD = -2;

/**
 * `[[seconds, number|null], ...]` read into two Float64Arrays as the answer arrives in chunks (a
 * BodySink), without JSON.parse's array per row: each complete row is read as its chunk arrives;
 * only an unfinished row's text is carried to the next chunk. Strict JSON grammar for this shape.
 * The raw bytes are kept until the end, so an answer that does not fit (another shape, bad JSON)
 * still goes to the schema and its messages (`text()`).
 */
export class NumericRowStream {
  private carry = '';
  /** 0: before the outer `[`; 1: before a row (or `]` of an empty array); 2: after a row; 3: after the outer `]`. */
  private stage = 0;
  private bad = false;
  private chunks: Buffer[] = [];
  private ts: Float64Array = new Float64Array(1024);
  private vals: Float64Array = new Float64Array(1024);
  private n = 0;

  start(): void {
    this.carry = '';
    this.stage = 0;
    this.bad = false;
    this.chunks = [];
    this.n = 0;
  }

  chunk(bytes: Buffer): void {
    this.chunks.push(bytes);
    if (this.bad) return;
    // The shape is ASCII; latin1 maps each byte to one char, so anything else fails the scan below.
    const s = this.carry === '' ? bytes.toString('latin1') : this.carry + bytes.toString('latin1');
    const i = this.scan(s);
    if (i === BAD) this.bad = true;
    else this.carry = s.slice(i);
  }

  /** The columns, or undefined when the answer is not `[[seconds, number|null], ...]` (then use text()). */
  end(): { timestampsMs: Float64Array; values: Float64Array } | undefined {
    if (this.bad || this.stage !== 3 || skipWs(this.carry, 0) !== this.carry.length) return undefined;
    return { timestampsMs: this.ts.slice(0, this.n), values: this.vals.slice(0, this.n) };
  }

  /** The whole answer as text (UTF-8, a byte-order mark dropped), for the fallback. */
  text(): string {
    const text = Buffer.concat(this.chunks).toString('utf8');
    return text.charCodeAt(0) === 0xfeff ? text.slice(1) : text;
  }

  /** Reads what it can of `s`; returns where the unread rest starts, or BAD. */
  private scan(s: string): number {
    let i = skipWs(s, 0);
    for (;;) {
      if (i >= s.length) return i;
      const c = s.charCodeAt(i);
      if (this.stage === 0) {
        if (c !== 91) return BAD;
        this.stage = 1;
        i = skipWs(s, i + 1);
        continue;
      } else if (this.stage === 2) {
        if (c === 93) {
          this.stage = 3;
          return i + 1;
        }
        if (c !== 44) return BAD;
        // Keep the comma with an unfinished row: the row after it is read once whole.
        const next = skipWs(s, i + 1);
        if (next >= s.length) return i;
        const end = this.row(s, next);
        if (end === MORE) return i;
        if (end === BAD) return BAD;
        i = skipWs(s, end);
        continue;
      } else if (this.stage === 3) return i;
      // stage 1: the first row, or the `]` of an empty array.
      if (s.charCodeAt(i) === 93) {
        this.stage = 3;
        return i + 1;
      }
      const end = this.row(s, i);
      if (end === MORE) return i;
      if (end === BAD) return BAD;
      i = skipWs(s, end);
    }
  }

  /** One `[seconds, number|null]` at `i`: stored, and the index after its `]`; MORE when `s` ends first. */
  private row(s: string, i: number): number {
    if (s.charCodeAt(i) !== 91) return BAD;
    i = skipWs(s, i + 1);
    JSON_NUMBER.lastIndex = i;
    if (!JSON_NUMBER.test(s)) return i >= s.length || (s.charCodeAt(i) === 45 && i + 1 >= s.length) ? MORE : BAD;
    let j = JSON_NUMBER.lastIndex;
    if (cutShort(s, j)) return MORE;
    const ts = Number(s.slice(i, j));
    i = skipWs(s, j);
    if (i >= s.length) return MORE;
    if (s.charCodeAt(i) !== 44) return BAD;
    i = skipWs(s, i + 1);
    if (i >= s.length) return MORE;
    let v: number;
    if (s.charCodeAt(i) === 110) {
      if (i + 4 > s.length) return MORE;
      if (s.charCodeAt(i + 1) !== 117 || s.charCodeAt(i + 2) !== 108 || s.charCodeAt(i + 3) !== 108) return BAD;
      v = NaN;
      i += 4;
    } else {
      JSON_NUMBER.lastIndex = i;
      if (!JSON_NUMBER.test(s)) return i + 1 >= s.length ? MORE : BAD;
      j = JSON_NUMBER.lastIndex;
      if (cutShort(s, j)) return MORE;
      v = Number(s.slice(i, j));
      i = j;
    }
    i = skipWs(s, i);
    if (i >= s.length) return MORE;
    if (s.charCodeAt(i) !== 93) return BAD;
    if (this.n === this.ts.length) {
      const grow = (a: Float64Array): Float64Array => {
        const b = new Float64Array(a.length * 2);
        b.set(a);
        return b;
      };
      this.ts = grow(this.ts);
      this.vals = grow(this.vals);
    }
    this.ts[this.n] = Math.round(ts * 1000);
    this.vals[this.n] = v;
    this.n++;
    this.stage = 2;
    return i + 1;
  }
}
