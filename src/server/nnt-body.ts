/**
 * The fast path of `/write/nnt`: parses a body of plain records straight from its bytes into
 * packed entries, without building a JavaScript object per record. JSON.parse plus validation
 * cost ~2 µs per record, more than storing it.
 *
 * It accepts only what it can check exactly: a JSON array of objects whose keys are the ten
 * record fields (no `parts`, no other keys, no repeated keys), strings without escapes, and
 * valid records. Anything else returns null and the caller takes the general path (JSON.parse
 * and validateNntRecord), which accepts the same records and words every error. So this path
 * never decides what is valid; it only makes the common case fast.
 */
import { MAX_METRIC_LENGTH } from '../protocol/index.js';
import { LOG_ENTRY as PACKED, type PackedWrite, type WriteSeries } from './ingest-log.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const MINUS = 0x2d;
const DOT = 0x2e;
const ZERO = 0x30;
const NINE = 0x39;

// Key bits; the slot each key fills in a log entry (see ingest-log.ts), -1 for the strings.
const K_METRIC = 1;
const K_ID = 2;
const K_OFFSET = 4;
const K_COUNT = 8;
const K_VALUE = 16;
const REQUIRED = K_METRIC | K_ID | K_OFFSET | K_COUNT | K_VALUE;
interface Key {
  bytes: Uint8Array;
  bit: number;
  slot: number;
}
const key = (name: string, bit: number, slot: number): Key => ({ bytes: Buffer.from(name), bit, slot });
const METRIC = key('metric', K_METRIC, -1);
const ID = key('id', K_ID, -1);
const OFFSET = key('offset', K_OFFSET, 1);
const COUNT = key('count', K_COUNT, 2);
const VALUE = key('value', K_VALUE, 4);
const STDDEV = key('stddev', 32, 5);
const DERIVATIVE = key('derivative', 64, 6);
const DERIVATIVE_STDDEV = key('derivative_stddev', 128, 7);
const COUNTER = key('counter', 256, 8);
const COUNTER_STDDEV = key('counter_stddev', 512, 9);

/** The key spelled by buf[from, from + len), if it is one of the ten. */
function keyAt(buf: Uint8Array, from: number, len: number): Key | null {
  let k: Key;
  switch (len) {
    case 2:
      k = ID;
      break;
    case 5:
      k = buf[from] === 0x63 ? COUNT : VALUE;
      break;
    case 6:
      k = buf[from] === 0x6d ? METRIC : buf[from] === 0x6f ? OFFSET : STDDEV;
      break;
    case 7:
      k = COUNTER;
      break;
    case 10:
      k = DERIVATIVE;
      break;
    case 14:
      k = COUNTER_STDDEV;
      break;
    case 17:
      k = DERIVATIVE_STDDEV;
      break;
    default:
      return null;
  }
  const b = k.bytes;
  for (let i = 0; i < len; i++) if (buf[from + i] !== b[i]) return null;
  return k;
}

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

function isWs(c: number | undefined): boolean {
  return c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;
}

/**
 * Parses the JSON number at buf[p] into out[at]; returns the position after it, or -1 when it
 * is not a number (or not a finite one).
 */
function numberAt(buf: Uint8Array, p: number, out: Float64Array, at: number): number {
  const begin = p;
  const neg = buf[p] === MINUS;
  if (neg) p++;
  let c = buf[p]!;
  let m = 0;
  let digits = 0;
  let scale = 0;
  if (c === ZERO) {
    c = buf[++p]!;
  } else if (c > ZERO && c <= NINE) {
    do {
      m = m * 10 + (c - ZERO);
      digits++;
      c = buf[++p]!;
    } while (c >= ZERO && c <= NINE);
  } else {
    return -1;
  }
  if (c === DOT) {
    c = buf[++p]!;
    if (!(c >= ZERO && c <= NINE)) return -1;
    do {
      m = m * 10 + (c - ZERO);
      digits++;
      scale--;
      c = buf[++p]!;
    } while (c >= ZERO && c <= NINE);
  }
  let v: number;
  if (c === 0x65 || c === 0x45) {
    // An exponent: rare; Number() converts it (exactly as JSON.parse would).
    c = buf[++p]!;
    if (c === 0x2b || c === MINUS) c = buf[++p]!;
    if (!(c >= ZERO && c <= NINE)) return -1;
    do c = buf[++p]!;
    while (c >= ZERO && c <= NINE);
    v = Number(Buffer.prototype.latin1Slice.call(buf, begin, p));
  } else if (digits <= 15 && scale >= -22) {
    // Clinger's fast path: m < 10^15 is exact, and so is a power of ten up to 10^22; one
    // division of the two is correctly rounded: the same double JSON.parse gives.
    v = scale === 0 ? m : m / POW10[-scale]!;
    if (neg) v = -v;
  } else {
    v = Number(Buffer.prototype.latin1Slice.call(buf, begin, p));
  }
  if (!Number.isFinite(v)) return -1;
  out[at] = v;
  return p;
}

/** Parses a body of plain records; null when it is anything else (see the top). */
export function parseNntBody(buf: Uint8Array, smallestSpan: number): PackedWrite | null {
  const len = buf.length;
  let p = 0;
  let entries = new Float64Array(Math.max(16, Math.ceil(len / 120)) * PACKED);
  const series: WriteSeries = { id: [], metric: [] };
  const bySpelling = new Spellings();
  // The previous record's id and metric bytes and series: most records repeat them.
  let idFrom = -1;
  let idTo = -1;
  let metricFrom = -1;
  let metricTo = -1;
  let k = -1;
  let n = 0;

  while (isWs(buf[p])) p++;
  if (buf[p] !== LBRACKET) return null;
  p++;
  while (isWs(buf[p])) p++;
  if (buf[p] === RBRACKET) {
    p++;
    while (isWs(buf[p])) p++;
    return p === len ? { entries: entries.subarray(0, 0), series, parts: null } : null;
  }
  for (;;) {
    if (buf[p] !== LBRACE) return null;
    p++;
    while (isWs(buf[p])) p++;
    if ((n + 1) * PACKED > entries.length) {
      const grown = new Float64Array(entries.length * 2);
      grown.set(entries);
      entries = grown;
    }
    // Fields left out stay 0: `entries` is fresh, and a slot is written once.
    const o = n * PACKED;
    let seen = 0;
    let recIdFrom = 0;
    let recIdTo = 0;
    let recMetricFrom = 0;
    let recMetricTo = 0;
    for (;;) {
      // A key: one of the ten, without escapes.
      if (buf[p] !== QUOTE) return null;
      const kFrom = ++p;
      while (p < len && buf[p] !== QUOTE) p++;
      if (p >= len) return null;
      const k = keyAt(buf, kFrom, p - kFrom);
      if (k === null || (seen & k.bit) !== 0) return null;
      seen |= k.bit;
      p++;
      while (isWs(buf[p])) p++;
      if (buf[p] !== COLON) return null;
      p++;
      while (isWs(buf[p])) p++;
      if (k.slot < 0) {
        // metric or id: a string without escapes or control characters.
        if (buf[p] !== QUOTE) return null;
        const sFrom = ++p;
        const isId = k === ID;
        // Most records repeat the previous record's series: compare with its bytes first.
        const prevFrom = isId ? idFrom : metricFrom;
        const prevLen = (isId ? idTo : metricTo) - prevFrom;
        if (prevFrom >= 0 && buf[sFrom + prevLen] === QUOTE && sameBytes(buf, sFrom, sFrom + prevLen, prevFrom, prevFrom + prevLen)) {
          p = sFrom + prevLen;
        } else {
          for (;;) {
            const c = buf[p];
            if (c === undefined || c === BACKSLASH || c < 0x20) return null;
            if (c === QUOTE) break;
            p++;
          }
        }
        if (isId) {
          recIdFrom = sFrom;
          recIdTo = p;
        } else {
          recMetricFrom = sFrom;
          recMetricTo = p;
        }
        p++;
      } else {
        p = numberAt(buf, p, entries, o + k.slot);
        if (p < 0) return null;
      }
      while (isWs(buf[p])) p++;
      const c = buf[p];
      if (c === COMMA) {
        p++;
        while (isWs(buf[p])) p++;
        continue;
      }
      if (c === RBRACE) {
        p++;
        break;
      }
      return null;
    }
    if ((seen & REQUIRED) !== REQUIRED) return null;
    const offset = entries[o + 1]!;
    const count = entries[o + 2]!;
    if (!Number.isSafeInteger(offset) || offset < 0 || offset % smallestSpan !== 0) return null;
    if (!Number.isSafeInteger(count) || count < 0) return null;
    if (!sameBytes(buf, recIdFrom, recIdTo, idFrom, idTo) || !sameBytes(buf, recMetricFrom, recMetricTo, metricFrom, metricTo)) {
      k = bySpelling.find(buf, recIdFrom, recIdTo, recMetricFrom, recMetricTo);
      if (k < 0) {
        // A spelling not seen in this body: check it, and find or add its series (an upper-case
        // id spells the same series as its lower-case form).
        const id = uuidAt(buf, recIdFrom, recIdTo);
        if (id === null) return null;
        const metric = textAt(buf, recMetricFrom, recMetricTo);
        if (metric.length === 0 || metric.length > MAX_METRIC_LENGTH) return null;
        k = bySpelling.seriesNamed(id, metric, series);
        bySpelling.add(k);
      }
      idFrom = recIdFrom;
      idTo = recIdTo;
      metricFrom = recMetricFrom;
      metricTo = recMetricTo;
    }
    entries[o] = k;
    n++;
    while (isWs(buf[p])) p++;
    const c = buf[p];
    if (c === COMMA) {
      p++;
      while (isWs(buf[p])) p++;
      continue;
    }
    if (c === RBRACKET) {
      p++;
      while (isWs(buf[p])) p++;
      return p === len ? { entries: entries.subarray(0, n * PACKED), series, parts: null } : null;
    }
    return null;
  }
}

/** The text of buf[from, to): ASCII is sliced as is, anything else decoded as UTF-8. */
function textAt(buf: Uint8Array, from: number, to: number): string {
  for (let i = from; i < to; i++) {
    if (buf[i]! >= 0x80) return Buffer.prototype.utf8Slice.call(buf, from, to) as string;
  }
  return Buffer.prototype.latin1Slice.call(buf, from, to) as string;
}

/**
 * The (id, metric) spellings of one body by the hash of their bytes, each with its series: a
 * body interleaving many series checks and decodes each spelling once, not once per record.
 */
class Spellings {
  private readonly head = new Map<number, number>();
  private readonly next: number[] = [];
  private readonly ranges: number[] = [];
  private readonly seriesOf: number[] = [];
  private readonly names = new Map<string, number>();
  private hash = 0;
  private from: [number, number, number, number] = [0, 0, 0, 0];

  /** The series of this spelling, or -1 when it is new (then `add` may follow). */
  find(buf: Uint8Array, idFrom: number, idTo: number, metricFrom: number, metricTo: number): number {
    let h = 0x811c9dc5;
    for (let i = idFrom; i < idTo; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    for (let i = metricFrom; i < metricTo; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
    this.hash = h;
    this.from = [idFrom, idTo, metricFrom, metricTo];
    const r = this.ranges;
    for (let s = this.head.get(h) ?? -1; s >= 0; s = this.next[s]!) {
      const o = s * 4;
      if (sameBytes(buf, idFrom, idTo, r[o]!, r[o + 1]!) && sameBytes(buf, metricFrom, metricTo, r[o + 2]!, r[o + 3]!)) return this.seriesOf[s]!;
    }
    return -1;
  }

  /** The index of the series with these names in `series`, added when new. */
  seriesNamed(id: string, metric: string, series: WriteSeries): number {
    const key = `${id}\n${metric}`;
    let k = this.names.get(key);
    if (k === undefined) {
      this.names.set(key, (k = series.id.length));
      series.id.push(id);
      series.metric.push(metric);
    }
    return k;
  }

  /** Remembers the spelling `find` was last asked about as series k. */
  add(k: number): void {
    const s = this.seriesOf.length;
    this.seriesOf.push(k);
    this.ranges.push(...this.from);
    this.next.push(this.head.get(this.hash) ?? -1);
    this.head.set(this.hash, s);
  }
}

function sameBytes(buf: Uint8Array, a: number, b: number, c: number, d: number): boolean {
  if (b - a !== d - c) return false;
  for (let i = 0; i < b - a; i++) if (buf[a + i] !== buf[c + i]) return false;
  return true;
}

/** The lower-cased UUID in buf[from, to), or null when it is not one. */
function uuidAt(buf: Uint8Array, from: number, to: number): string | null {
  if (to - from !== 36) return null;
  let upper = false;
  for (let i = 0; i < 36; i++) {
    const c = buf[from + i]!;
    if (i === 8 || i === 13 || i === 18 || i === 23) {
      if (c !== MINUS) return null;
    } else if (!((c >= ZERO && c <= NINE) || (c >= 0x61 && c <= 0x66))) {
      if (c >= 0x41 && c <= 0x46) upper = true;
      else return null;
    }
  }
  const s: string = Buffer.prototype.latin1Slice.call(buf, from, to);
  return upper ? s.toLowerCase() : s;
}
