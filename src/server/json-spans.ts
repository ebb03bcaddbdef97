/**
 * Where the elements of a JSON array lie in its bytes, for a body JSON.parse already took as an
 * array: a replicating node journals a peer's records as the bytes the client sent, never encoded
 * again (see replication/write-routing.ts). Strings are skipped whole, so the brackets, braces and
 * commas inside them do not count.
 */
import { isWs } from '../protocol/index.js';

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

/**
 * Element i spans bytes [spans[2i], spans[2i + 1]) of `body` (its whitespace left out). Null when
 * the body does not hold `count` elements: it is no array JSON.parse took, and nothing is sliced.
 */
export function arrayElementSpans(body: Buffer, count: number): Uint32Array | null {
  const spans = new Uint32Array(2 * count);
  let p = body.indexOf(LBRACKET) + 1;
  if (p === 0) return null;
  let depth = 0;
  let n = 0;
  let start = -1;
  let end = -1;
  for (; p < body.length; p++) {
    const c = body[p]!;
    if (c === QUOTE) {
      if (start < 0) start = p;
      p = closingQuote(body, p);
      if (p < 0) return null;
      end = p + 1;
      continue;
    }
    if (isWs(c)) continue;
    if (depth === 0 && (c === COMMA || c === RBRACKET)) {
      if (start >= 0) {
        if (n === count) return null;
        spans[2 * n] = start;
        spans[2 * n + 1] = end;
        n++;
      }
      if (c === RBRACKET) break;
      start = -1;
      continue;
    }
    if (start < 0) start = p;
    if (c === LBRACE || c === LBRACKET) depth++;
    else if (c === RBRACE || c === RBRACKET) depth--;
    end = p + 1;
  }
  return n === count ? spans : null;
}

/** Bytes of a string looked at one by one before the search goes native (indexOf). */
const SHORT_STRING = 64;

/** The closing quote of the string opening at `open` (its escapes skipped), or -1. */
function closingQuote(body: Buffer, open: number): number {
  // Most record strings are short, where a loop here beats a native call per string; a long one
  // (a histogram's base64) is searched natively, quote by quote.
  const end = Math.min(body.length, open + 1 + SHORT_STRING);
  let q = open + 1;
  for (; q < end; q++) {
    const c = body[q];
    if (c === QUOTE) return q;
    if (c === BACKSLASH) q++;
  }
  for (q = body.indexOf(QUOTE, q); q >= 0; q = body.indexOf(QUOTE, q + 1)) {
    let k = q - 1;
    while (k > open && body[k] === BACKSLASH) k--;
    if ((q - 1 - k) % 2 === 0) return q;
  }
  return -1;
}

/** The bytes between a JSON array's brackets, its outer whitespace left out: every element and the commas between them. */
export function arrayInner(body: Buffer): Buffer {
  let from = body.indexOf(LBRACKET) + 1;
  let to = body.lastIndexOf(RBRACKET);
  while (from < to && isWs(body[from])) from++;
  while (to > from && isWs(body[to - 1])) to--;
  return body.subarray(from, to);
}
