/**
 * Finds, in a batch body's bytes, where each record ends and where its `id` and `metric` strings
 * are: what owner routing needs, without a string per record. The common shape (as
 * JSON.stringify writes a record) takes a fast path; anything else is scanned key by key.
 */
import { isWs } from '../protocol/record-scan.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
export const COMMA = 0x2c;
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
export const LBRACKET = 0x5b;
export const RBRACKET = 0x5d;

/** The end of the JSON value at buf[p] (a string, an object or array with what is inside, or a number or word). */
function skipValue(buf: Uint8Array, p: number): number {
  const c = buf[p];
  if (c === QUOTE) {
    for (p++; p < buf.length && buf[p] !== QUOTE; p++) if (buf[p] === BACKSLASH) p++;
    return p + 1;
  }
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0;
    for (; p < buf.length; p++) {
      const d = buf[p]!;
      if (d === QUOTE) {
        for (p++; p < buf.length && buf[p] !== QUOTE; p++) if (buf[p] === BACKSLASH) p++;
      } else if (d === LBRACE || d === LBRACKET) depth++;
      else if (d === RBRACE || d === RBRACKET) {
        depth--;
        if (depth === 0) return p + 1;
      }
    }
    throw new Error('a batch body ends inside a record');
  }
  // A number, true, false or null: up to the next separator.
  while (p < buf.length) {
    const d = buf[p]!;
    if (d === COMMA || d === RBRACE || d === RBRACKET || isWs(d)) return p;
    p++;
  }
  return p;
}

/**
 * Where the record object at buf[p] ends, and where its `id` and `metric` strings are (the bytes
 * between the quotes). Only what routing needs: other values are skipped, not read. A key or an
 * id or metric with an escape sets `escaped` (the caller parses that record instead).
 */
export interface Located {
  end: number;
  idFrom: number;
  idTo: number;
  metricFrom: number;
  metricTo: number;
  escaped: boolean;
}

const ID_KEY = [0x69, 0x64]; // id
const METRIC_KEY = [0x6d, 0x65, 0x74, 0x72, 0x69, 0x63]; // metric

function keyIs(buf: Uint8Array, from: number, to: number, key: readonly number[]): boolean {
  if (to - from !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (buf[from + i] !== key[i]) return false;
  return true;
}

const METRIC_OPEN = Buffer.from('{"metric":"');
const ID_OPEN = Buffer.from('{"id":"');
const THEN_ID = Buffer.from('","id":"');
const THEN_METRIC = Buffer.from('","metric":"');

function startsWith(buf: Uint8Array, p: number, prefix: Uint8Array): boolean {
  for (let i = 0; i < prefix.length; i++) if (buf[p + i] !== prefix[i]) return false;
  return true;
}

/**
 * The end of a string's text from `p` (its closing quote), or -1 when it has an escape or no end.
 * One pass in JavaScript: an id or a metric is a few dozen bytes, less than a call into
 * Buffer.indexOf costs (and its text would be read a second time for the escapes).
 */
function plainStringEnd(buf: Buffer, p: number): number {
  for (let i = p; i < buf.length; i++) {
    const c = buf[i];
    if (c === QUOTE) return i;
    if (c === BACKSLASH) return -1;
  }
  return -1;
}

/**
 * The common shape, as JSON.stringify writes a record: `{"metric":"...","id":"...",...}` (or id
 * first) with no object or array after them. Anything else (spaces around the first two keys,
 * escapes, parts) returns false and `locate` scans the record key by key.
 */
function locateFast(buf: Buffer, p: number, out: Located): boolean {
  let idFirst: boolean;
  if (startsWith(buf, p, METRIC_OPEN)) idFirst = false;
  else if (startsWith(buf, p, ID_OPEN)) idFirst = true;
  else return false;
  const aFrom = p + (idFirst ? ID_OPEN.length : METRIC_OPEN.length);
  const aTo = plainStringEnd(buf, aFrom);
  if (aTo < 0) return false;
  const then = idFirst ? THEN_METRIC : THEN_ID;
  if (!startsWith(buf, aTo, then)) return false;
  const bFrom = aTo + then.length;
  const bTo = plainStringEnd(buf, bFrom);
  if (bTo < 0) return false;
  // The rest, up to the `}` that closes the record: one pass that only tracks whether it is inside
  // a string; an escape, an object or an array (parts) is left to the full scan.
  let end = -1;
  let inString = false;
  for (let i = bTo + 1; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === QUOTE) inString = false;
      else if (c === BACKSLASH) return false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === RBRACE) {
      end = i;
      break;
    } else if (c === LBRACE || c === LBRACKET) return false;
  }
  if (end < 0) return false;
  out.end = end + 1;
  out.escaped = false;
  if (idFirst) {
    out.idFrom = aFrom;
    out.idTo = aTo;
    out.metricFrom = bFrom;
    out.metricTo = bTo;
  } else {
    out.metricFrom = aFrom;
    out.metricTo = aTo;
    out.idFrom = bFrom;
    out.idTo = bTo;
  }
  return true;
}

export function locate(buf: Buffer, p: number, out: Located): void {
  if (locateFast(buf, p, out)) return;
  out.idFrom = out.idTo = out.metricFrom = out.metricTo = -1;
  out.escaped = false;
  if (buf[p] !== LBRACE) throw new Error('a batch record is not a JSON object');
  p++;
  for (;;) {
    while (isWs(buf[p])) p++;
    if (buf[p] === RBRACE) break;
    if (buf[p] !== QUOTE) throw new Error('a batch record has a malformed key');
    const kFrom = ++p;
    while (p < buf.length && buf[p] !== QUOTE) {
      if (buf[p] === BACKSLASH) {
        out.escaped = true;
        p++;
      }
      p++;
    }
    const kTo = p++;
    while (isWs(buf[p])) p++;
    if (buf[p] !== COLON) throw new Error('a batch record has a key without a value');
    p++;
    while (isWs(buf[p])) p++;
    const isId = keyIs(buf, kFrom, kTo, ID_KEY);
    const isMetric = !isId && keyIs(buf, kFrom, kTo, METRIC_KEY);
    const vFrom = p;
    p = skipValue(buf, p);
    if ((isId || isMetric) && buf[vFrom] === QUOTE) {
      for (let i = vFrom + 1; i < p - 1; i++) if (buf[i] === BACKSLASH) out.escaped = true;
      // The last of a repeated key wins, as in JSON.parse.
      if (isId) {
        out.idFrom = vFrom + 1;
        out.idTo = p - 1;
      } else {
        out.metricFrom = vFrom + 1;
        out.metricTo = p - 1;
      }
    }
    while (isWs(buf[p])) p++;
    if (buf[p] === COMMA) p++;
  }
  out.end = p + 1;
  if (out.idFrom < 0 || out.metricFrom < 0) out.escaped = true;
}
