/* eslint-disable @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access -- Buffer's latin1Slice/utf8Slice: untyped Node internals, used on purpose (no subarray per field) */
/**
 * A byte-level scanner for plain numeric records: a JSON object whose keys are the ten record
 * fields, plus at most a `parts` that says "no parts" (`null`, `[0,null]`, `[0,[]]`), no other
 * keys, no repeated keys, strings without escapes, numbers as JSON writes them, and valid
 * values. It reads such a record straight from the bytes into numbers, without the object
 * JSON.parse builds (JSON.parse plus validation cost ~2.4 µs a record, the scan ~1 µs).
 * Anything else it declines (-1), and the caller takes the general path (JSON.parse and
 * validateNntRecord), which accepts the same records and words every error. So the scanner
 * never decides what is valid; it only makes the common case fast. The node parses /write/nnt
 * bodies with it (server/nnt-body.ts).
 */
import { isUtf8 } from 'node:buffer';
import { badNameChar, MAX_METRIC_LENGTH } from './records.js';

/**
 * Numbers per scanned record: `[(free), offset, count, (flags: 0), value, stddev, derivative,
 * derivative_stddev, counter, counter_stddev]`. Slot 0 is left to the caller (the node keeps its
 * series there); a field left out stays as the caller's array has it (0 in a fresh one).
 */
export const SCAN_SLOTS = 10;

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
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
/** Only its "no parts" spellings are scanned (noPartsAt); real parts go to the general path. */
const PARTS = key('parts', 1024, -2);

/**
 * The key at buf[from] (just after its opening quote) if it is one of the ten or `parts` and a
 * quote closes it right after, else null. Its first byte (and, for the keys that share a start,
 * the byte where they part) picks the one candidate, which is then compared whole: one pass over
 * the key, not a search for its closing quote and then a comparison.
 */
function keyFrom(buf: Uint8Array, from: number): Key | null {
  let k: Key;
  switch (buf[from]) {
    case 0x6d:
      k = METRIC;
      break;
    case 0x69:
      k = ID;
      break;
    case 0x6f:
      k = OFFSET;
      break;
    case 0x76:
      k = VALUE;
      break;
    case 0x73:
      k = STDDEV;
      break;
    case 0x70:
      k = PARTS;
      break;
    case 0x63:
      k = buf[from + 5] === QUOTE ? COUNT : buf[from + 7] === QUOTE ? COUNTER : COUNTER_STDDEV;
      break;
    case 0x64:
      k = buf[from + 10] === QUOTE ? DERIVATIVE : DERIVATIVE_STDDEV;
      break;
    default:
      return null;
  }
  const b = k.bytes;
  const n = b.length;
  for (let i = 1; i < n; i++) if (buf[from + i] !== b[i]) return null;
  return buf[from + n] === QUOTE ? k : null;
}

const POW10 = Array.from({ length: 23 }, (_, i) => 10 ** i);

/** JSON whitespace. Most bytes asked about are not: one comparison rules them out (the scan asks after every token). */
export function isWs(c: number | undefined): boolean {
  return c !== undefined && c <= 0x20 && (c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09);
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

const NULL = Buffer.from('null');

function wordAt(buf: Uint8Array, p: number, word: Uint8Array): number {
  for (let i = 0; i < word.length; i++) if (buf[p + i] !== word[i]) return -1;
  return p + word.length;
}

/**
 * The position after a `parts` value that means "no parts" (`null`, `[0,null]`, `[0,[]]`, with
 * any whitespace), or -1 for anything else: the general path reads real parts and words errors.
 */
function noPartsAt(buf: Uint8Array, p: number): number {
  if (buf[p] !== LBRACKET) return wordAt(buf, p, NULL);
  p++;
  while (isWs(buf[p])) p++;
  if (buf[p] !== ZERO) return -1;
  p++;
  while (isWs(buf[p])) p++;
  if (buf[p] !== COMMA) return -1;
  p++;
  while (isWs(buf[p])) p++;
  if (buf[p] === LBRACKET) {
    p++;
    while (isWs(buf[p])) p++;
    if (buf[p] !== RBRACKET) return -1;
    p++;
  } else {
    p = wordAt(buf, p, NULL);
    if (p < 0) return -1;
  }
  while (isWs(buf[p])) p++;
  return buf[p] === RBRACKET ? p + 1 : -1;
}

/** Where a scanned record's id and metric are (byte ranges). */
export interface ScannedStrings {
  idFrom: number;
  idTo: number;
  metricFrom: number;
  metricTo: number;
  /** The scan found the id to be a UUID (it does so when `at` came in without a previous id). */
  idIsUuid: boolean;
}

/**
 * Scans the record object at buf[p] into out[o + 1 .. o + 9] (see SCAN_SLOTS) and its string
 * ranges into `at`; returns the position after its `}`, or -1 when it is not a plain valid record
 * (then `out` and `at` hold garbage). `at` may come in holding the previous record's ranges: an id
 * or metric with the same leading bytes is compared, not scanned (neighbouring records mostly share them).
 * The id and metric texts themselves are not checked here (but see idIsUuid): see uuidAt and metricAt.
 */
// Kept long: the write path's single pass over a record's bytes, its position in a local; helpers
// per field would each take and return the position (bench/write measures this loop).
export function scanNntRecord(buf: Uint8Array, p: number, out: Float64Array, o: number, smallestSpan: number | undefined, at: ScannedStrings): number {
  if (buf[p] !== LBRACE) return -1;
  p++;
  while (isWs(buf[p])) p++;
  let seen = 0;
  let idFrom = 0;
  let idTo = 0;
  let metricFrom = 0;
  let metricTo = 0;
  let idIsUuid = false;
  for (;;) {
    // A key: one of the ten, without escapes.
    if (buf[p] !== QUOTE) return -1;
    const kFrom = p + 1;
    const k = keyFrom(buf, kFrom);
    if (k === null || (seen & k.bit) !== 0) return -1;
    seen |= k.bit;
    p = kFrom + k.bytes.length + 1;
    while (isWs(buf[p])) p++;
    if (buf[p] !== COLON) return -1;
    p++;
    while (isWs(buf[p])) p++;
    if (k.slot >= 0) {
      // The eight numeric fields first: the common case takes a single branch.
      p = numberAt(buf, p, out, o + k.slot);
      if (p < 0) return -1;
    } else if (k === PARTS) {
      p = noPartsAt(buf, p);
      if (p < 0) return -1;
    } else {
      // metric or id: a string without escapes or control characters.
      if (buf[p] !== QUOTE) return -1;
      const sFrom = ++p;
      const isId = k === ID;
      // The bytes it shares with the previous record's string were checked then: skip them.
      const prevFrom = isId ? at.idFrom : at.metricFrom;
      if (prevFrom >= 0) {
        const prevLen = (isId ? at.idTo : at.metricTo) - prevFrom;
        let i = 0;
        while (i < prevLen && buf[sFrom + i] === buf[prevFrom + i]) i++;
        p = sFrom + i;
      } else if (isId && buf[sFrom + 36] === QUOTE && isUuidAt(buf, sFrom, sFrom + 36)) {
        // Nothing to compare with (a record checked on its own, as the client checks each): a
        // UUID is checked as one in this pass, which also rules out escapes and controls in it.
        p = sFrom + 36;
        idIsUuid = true;
      }
      for (;;) {
        const c = buf[p];
        if (c === undefined || c === BACKSLASH || c < 0x20 || c === 0x7f) return -1;
        if (c === QUOTE) break;
        p++;
      }
      if (isId) {
        idFrom = sFrom;
        idTo = p;
      } else {
        metricFrom = sFrom;
        metricTo = p;
      }
      p++;
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
    return -1;
  }
  if ((seen & REQUIRED) !== REQUIRED) return -1;
  const offset = out[o + 1]!;
  const count = out[o + 2]!;
  if (!Number.isSafeInteger(offset) || offset < 0 || (smallestSpan !== undefined && offset % smallestSpan !== 0)) return -1;
  if (!Number.isSafeInteger(count) || count < 0) return -1;
  // Standard deviations are never negative (an absent one is the caller's 0).
  if (out[o + 5]! < 0 || out[o + 7]! < 0 || out[o + 9]! < 0) return -1;
  at.idFrom = idFrom;
  at.idTo = idTo;
  at.idIsUuid = idIsUuid;
  at.metricFrom = metricFrom;
  at.metricTo = metricTo;
  return p;
}

/**
 * The metric in buf[from, to) if it is a valid one (1 to MAX_METRIC_LENGTH characters, valid
 * UTF-8, no control character), else null.
 */
export function metricAt(buf: Uint8Array, from: number, to: number): string | null {
  const m = textAt(buf, from, to);
  return m === null || m.length === 0 || m.length > MAX_METRIC_LENGTH || badNameChar(m) >= 0 ? null : m;
}

/** The text of buf[from, to): ASCII is sliced as is, anything else decoded as UTF-8; null when it is not UTF-8. */
function textAt(buf: Uint8Array, from: number, to: number): string | null {
  for (let i = from; i < to; i++) {
    if (buf[i]! >= 0x80) {
      // Decoding would turn invalid bytes into U+FFFD, and two different names into one.
      if (!isUtf8(buf.subarray(from, to))) return null;
      return Buffer.prototype.utf8Slice.call(buf, from, to) as string;
    }
  }
  return Buffer.prototype.latin1Slice.call(buf, from, to) as string;
}

export function sameBytes(buf: Uint8Array, a: number, b: number, c: number, d: number): boolean {
  if (b - a !== d - c) return false;
  for (let i = 0; i < b - a; i++) if (buf[a + i] !== buf[c + i]) return false;
  return true;
}

/** 1 for the bytes a UUID's hex digits may be (either case). */
const HEX_DIGIT = new Uint8Array(256);
for (const c of Buffer.from('0123456789abcdefABCDEF')) HEX_DIGIT[c] = 1;

/** Whether buf[from, to) is a UUID (either case). */
function isUuidAt(buf: Uint8Array, from: number, to: number): boolean {
  if (to - from !== 36) return false;
  if (buf[from + 8] !== MINUS || buf[from + 13] !== MINUS || buf[from + 18] !== MINUS || buf[from + 23] !== MINUS) return false;
  for (let i = 0; i < 36; i++) {
    // The four dashes were checked above; every other byte must be a hex digit.
    if (HEX_DIGIT[buf[from + i]!] === 0 && i !== 8 && i !== 13 && i !== 18 && i !== 23) return false;
  }
  return true;
}

/** The lower-cased UUID in buf[from, to), or null when it is not one. */
export function uuidAt(buf: Uint8Array, from: number, to: number): string | null {
  return isUuidAt(buf, from, to) ? (Buffer.prototype.latin1Slice.call(buf, from, to) as string).toLowerCase() : null;
}

/** Whether buf[from, to) is a valid metric; only a non-ASCII one is decoded to count its characters. */
function isMetricAt(buf: Uint8Array, from: number, to: number): boolean {
  // The scan refused C0 controls and DEL; C1 controls are non-ASCII.
  for (let i = from; i < to; i++) if (buf[i]! >= 0x80) return metricAt(buf, from, to) !== null;
  return to - from >= 1 && to - from <= MAX_METRIC_LENGTH;
}

/**
 * The scanner for a client that validates every record before sending it (tsnode write): true
 * when a record's text is a plain valid record. False only means the scanner declined; the
 * general path (JSON.parse and validateNntRecord) then decides and words why.
 */
export class PlainRecordCheck {
  private bytes = Buffer.allocUnsafe(1024);
  private readonly numbers = new Float64Array(SCAN_SLOTS);
  /** Where the last record a check passed has its id and metric (in the bytes it was checked in). */
  readonly at: ScannedStrings = { idFrom: -1, idTo: -1, metricFrom: -1, metricTo: -1, idIsUuid: false };

  constructor(private readonly smallestSpan: number | undefined) {}

  isPlainValid(text: string): boolean {
    // UTF-8 takes at most 3 bytes per UTF-16 unit: the text always fits whole, with one byte more.
    if (this.bytes.length < text.length * 3 + 1) this.bytes = Buffer.allocUnsafe(text.length * 3 + 1);
    const buf = this.bytes;
    const n = buf.write(text, 0);
    // A control character after the text: no string or number runs on into an older text's bytes
    // (and a scan that still ends past the text is refused below).
    buf[n] = 0;
    this.at.idFrom = -1;
    this.at.metricFrom = -1;
    let p = 0;
    while (isWs(buf[p])) p++;
    p = scanNntRecord(buf, p, this.numbers, 0, this.smallestSpan, this.at);
    if (p < 0 || p > n) return false;
    while (p < n && isWs(buf[p])) p++;
    return p === n && this.validStrings(buf);
  }

  /**
   * The same check on the record's bytes where they were read, buf[from, to): no copy. The byte
   * at `to` must be a control character (an NDJSON line's CR or LF), so that no string or number
   * runs on past the record unnoticed.
   */
  isPlainValidBytes(buf: Buffer, from: number, to: number): boolean {
    this.at.idFrom = -1;
    this.at.metricFrom = -1;
    let p = from;
    while (p < to && isWs(buf[p])) p++;
    p = scanNntRecord(buf, p, this.numbers, 0, this.smallestSpan, this.at);
    if (p < 0 || p > to) return false;
    while (p < to && isWs(buf[p])) p++;
    return p === to && this.validStrings(buf);
  }

  /** The scanned record's id is a UUID (the scan may have found so already) and its metric a valid one. */
  private validStrings(buf: Uint8Array): boolean {
    const at = this.at;
    return (at.idIsUuid || isUuidAt(buf, at.idFrom, at.idTo)) && isMetricAt(buf, at.metricFrom, at.metricTo);
  }
}
