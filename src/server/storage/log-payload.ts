/**
 * The payload of one ingest-log frame: a write's entries (slot 0 holding the series id) and the
 * parts of the records that have them, as Float64 numbers:
 * `[n, n × LOG_ENTRY, then per record with parts: index, period, pieces, 7 × pieces]`.
 */
import { LOG_ENTRY, type StoredParts } from '../packed-write.js';

/** One logged write: its records in arrival order. */
export interface LoggedBatch {
  entries: Float64Array;
  /** Parts by record index, for the records that have them. */
  parts: Map<number, StoredParts> | null;
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

export function decodeLog(blob: Buffer): LoggedBatch {
  const all = new Float64Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
  const n = all[0]!;
  const entries = all.subarray(1, 1 + n * LOG_ENTRY);
  let parts: Map<number, StoredParts> | null = null;
  for (let o = 1 + n * LOG_ENTRY; o < all.length;) {
    const i = all[o]!;
    const period = all[o + 1]!;
    const len = all[o + 2]! * 7;
    const pieces = all.slice(o + 3, o + 3 + len);
    (parts ??= new Map()).set(i, { period, blob: Buffer.from(pieces.buffer) });
    o += 3 + len;
  }
  return { entries, parts };
}
