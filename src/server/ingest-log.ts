/**
 * The ingest log: how a numeric write is made durable before it is acknowledged. A write is one
 * row (one blob) in `nnt_log`, whatever the number of series it touches; the chunks are updated
 * later, many writes at a time (see SqliteStore.flush), so a chunk is rewritten once per flush
 * instead of once per write. Pure encoding, no I/O.
 *
 * Blob: Float64 numbers `[n, n × LOG_ENTRY, then per record with parts: index, period, pieces,
 * 7 × pieces]`. A log entry is the series id followed by the raw chunk entry (see chunks.ts).
 */
import type { Aggregate, NntRecord } from '../protocol/index.js';
import { ENTRY, FLAGS } from './chunks.js';

export const LOG_ENTRY = 1 + ENTRY;

/** A record's `parts`: the piece period and the pieces as Float64 numbers (7 per piece). */
export interface StoredParts {
  period: number;
  blob: Buffer;
}

/** One logged write: its log row, and its records in arrival order. */
export interface LoggedBatch {
  seq: number;
  entries: Float64Array;
  /** Parts by record index, for the records that have them. */
  parts: Map<number, StoredParts> | null;
}

/** Writes record `i` of a batch (series id `sid`) into `entries`; returns its parts, if any. */
export function packRecord(entries: Float64Array, i: number, sid: number, r: NntRecord): StoredParts | null {
  const o = i * LOG_ENTRY;
  entries[o] = sid;
  entries[o + 1] = r.offset;
  entries[o + 2] = r.count;
  entries[o + 3] = r.parts ? FLAGS.parts : 0;
  entries[o + 4] = r.value;
  entries[o + 5] = r.stddev;
  entries[o + 6] = r.derivative;
  entries[o + 7] = r.derivative_stddev;
  entries[o + 8] = r.counter;
  entries[o + 9] = r.counter_stddev;
  return r.parts ? { period: r.parts[0], blob: encodeParts(r.parts[1]) } : null;
}

export function encodeLog(entries: Float64Array, parts: Map<number, StoredParts> | null): Buffer {
  const n = entries.length / LOG_ENTRY;
  let size = 1 + entries.length;
  if (parts) for (const p of parts.values()) size += 3 + p.blob.byteLength / 8;
  const out = new Float64Array(size);
  out[0] = n;
  out.set(entries, 1);
  if (parts) {
    let o = 1 + entries.length;
    for (const [i, p] of [...parts].sort((a, b) => a[0] - b[0])) {
      const pieces = new Float64Array(p.blob.buffer, p.blob.byteOffset, p.blob.byteLength / 8);
      out[o++] = i;
      out[o++] = p.period;
      out[o++] = pieces.length / 7;
      out.set(pieces, o);
      o += pieces.length;
    }
  }
  return Buffer.from(out.buffer);
}

export function decodeLog(seq: number, blob: Buffer): LoggedBatch {
  const all = new Float64Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
  const n = all[0]!;
  const entries = all.subarray(1, 1 + n * LOG_ENTRY);
  let parts: Map<number, StoredParts> | null = null;
  for (let o = 1 + n * LOG_ENTRY; o < all.length; ) {
    const i = all[o]!;
    const period = all[o + 1]!;
    const len = all[o + 2]! * 7;
    const pieces = all.slice(o + 3, o + 3 + len);
    (parts ??= new Map()).set(i, { period, blob: Buffer.from(pieces.buffer) });
    o += 3 + len;
  }
  return { seq, entries, parts };
}

/** Parts as Float64 numbers, 7 per piece in NUMERIC_FIELDS order. */
export function encodeParts(pieces: readonly Aggregate[]): Buffer {
  const arr = new Float64Array(pieces.length * 7);
  let i = 0;
  for (const p of pieces) {
    arr[i++] = p.count;
    arr[i++] = p.value;
    arr[i++] = p.derivative;
    arr[i++] = p.counter;
    arr[i++] = p.stddev;
    arr[i++] = p.derivative_stddev;
    arr[i++] = p.counter_stddev;
  }
  return Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
}
