/**
 * Numeric data is stored in chunks: one row per (series, span, window of CHUNK_ENTRIES buckets)
 * holding its entries packed as Float64 numbers, sorted by ts. A row per record cost ~2.4 µs of
 * SQLite work per record; a chunk row carries up to CHUNK_ENTRIES of them for about the same.
 *
 * Entry layout (ENTRY numbers):
 *   `[ts, count, records|flags, value, stddev, derivative, derivative_stddev, counter, counter_stddev]`
 * In a rollup chunk slot 2 is `records` (how many records were merged), so an entry reads as a
 * RollupRowArray. In a raw chunk (the smallest span, one entry per record) it holds FLAGS.
 *
 * Below the chunk helpers, the merge math of the flush on entries: new records as the finest
 * buckets, grouped span by span into larger ones (rawBuckets, groupBuckets), and a bucket
 * recomputed from raw entries (mergeRawInto). Pure functions, no I/O.
 */
import { pair, pool } from './rollup-math.js';

export const ENTRY = 9;

/**
 * Buckets per chunk. 48 entries are 3,456 bytes: SQLite keeps a WITHOUT ROWID row inline up to
 * ~4,000 bytes with the store's 16 KiB pages (a larger chunk would spill into overflow pages).
 * Measured on the ingest bench: 12 entries in 4 KiB pages cost twice the flush time of 48 in
 * 16 KiB pages; 96 in 32 KiB pages gained nothing more.
 */
export const CHUNK_ENTRIES = 48;

export const FLAGS = {
  /** The smallest span's rollup was swept, the raw record kept (a sweep of that span alone). */
  hidden: 1,
  /** The record has `parts`, stored in their own table. */
  parts: 2,
} as const;

/** The window (s) of one chunk of a span, and the chunk a ts falls in. */
export function chunkWindow(span: number): number {
  return span * CHUNK_ENTRIES;
}
export function chunkStart(ts: number, window: number): number {
  return ts - (ts % window);
}

/** A chunk blob as entries. Aligned blobs are viewed in place, others copied. */
export function entriesOf(blob: Buffer): Float64Array {
  if (blob.byteOffset % 8 === 0) return new Float64Array(blob.buffer, blob.byteOffset, blob.byteLength >>> 3);
  return new Float64Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
}

export function blobOf(entries: Float64Array): Buffer {
  return Buffer.from(entries.buffer, entries.byteOffset, entries.byteLength);
}

/**
 * Merges sorted `add` entries [from, to) into sorted `old` ones; on equal ts the added entry
 * wins and `onReplace(ts, oldIndex)` is told. Returns the merged entries.
 */
export function mergeEntries(old: Float64Array | undefined, add: Float64Array, from: number, to: number, onReplace?: (ts: number, oldIndex: number) => void): Float64Array {
  const nOld = old ? old.length / ENTRY : 0;
  if (nOld === 0) return add.slice(from * ENTRY, to * ENTRY);
  const out = new Float64Array((nOld + to - from) * ENTRY);
  let i = 0;
  let j = from;
  let k = 0;
  while (i < nOld || j < to) {
    const ti = i < nOld ? old![i * ENTRY]! : Infinity;
    const tj = j < to ? add[j * ENTRY]! : Infinity;
    if (tj <= ti) {
      if (tj === ti) {
        onReplace?.(tj, i);
        i++;
      }
      out.set(add.subarray(j * ENTRY, (j + 1) * ENTRY), k * ENTRY);
      j++;
    } else {
      out.set(old!.subarray(i * ENTRY, (i + 1) * ENTRY), k * ENTRY);
      i++;
    }
    k++;
  }
  return k * ENTRY === out.length ? out : out.slice(0, k * ENTRY);
}

/** The index of the entry with this ts, or -1. */
export function findEntry(entries: Float64Array, ts: number): number {
  let lo = 0;
  let hi = entries.length / ENTRY - 1;
  while (lo <= hi) {
    const mid = (lo + hi) >>> 1;
    const t = entries[mid * ENTRY]!;
    if (t === ts) return mid;
    if (t < ts) lo = mid + 1;
    else hi = mid - 1;
  }
  return -1;
}

/** The index of the first entry with ts >= `ts` (the entry count when none). */
export function lowerBound(entries: Float64Array, ts: number): number {
  let lo = 0;
  let hi = entries.length / ENTRY;
  while (lo < hi) {
    const mid = (lo + hi) >>> 1;
    if (entries[mid * ENTRY]! < ts) lo = mid + 1;
    else hi = mid;
  }
  return lo;
}

/**
 * mergeInto (rollup-math.ts) on entries: merges entry `bi` of `b` (counting as `bRecords`
 * records) into entry `ai` of `a`, without an object per aggregate. The same rules, kept equal
 * to mergeInto by a property test.
 */
export function mergeEntryInto(a: Float64Array, ai: number, b: Float64Array, bi: number, bRecords: number): void {
  if (bRecords === 0) return;
  const ao = ai * ENTRY;
  const bo = bi * ENTRY;
  const aRecords = a[ao + 2]!;
  const aCount = a[ao + 1]!;
  const bCount = b[bo + 1]!;
  if (aRecords === 0) {
    for (let k = 1; k < ENTRY; k++) a[ao + k] = b[bo + k]!;
    a[ao + 2] = bRecords;
    return;
  }
  let wa: number;
  let wb: number;
  if (aCount > 0 || bCount > 0) {
    wa = aCount;
    wb = bCount;
  } else {
    wa = aRecords;
    wb = bRecords;
  }
  if (wb === 0) {
    a[ao + 2] = aRecords + bRecords;
    return;
  }
  if (wa === 0) {
    for (let k = 1; k < ENTRY; k++) a[ao + k] = b[bo + k]!;
    a[ao + 2] = aRecords + bRecords;
    return;
  }
  for (let k = 3; k < ENTRY; k += 2) {
    pool(wa, a[ao + k]!, a[ao + k + 1]!, wb, b[bo + k]!, b[bo + k + 1]!, pair);
    a[ao + k] = pair[0];
    a[ao + k + 1] = pair[1];
  }
  a[ao + 1] = aCount + bCount;
  a[ao + 2] = aRecords + bRecords;
}

/**
 * Merges the raw entries of `chunks` (in ts order) with from <= ts < to into entry `i` of `out`,
 * each counting as one record: a bucket recomputed from the raw data.
 */
export function mergeRawInto(out: Float64Array, i: number, chunks: readonly Float64Array[], from: number, to: number): void {
  for (const e of chunks) {
    for (let k = lowerBound(e, from), n = e.length / ENTRY; k < n && e[k * ENTRY]! < to; k++) mergeEntryInto(out, i, e, k, 1);
  }
}

/** Buckets of one span as entries (ts = bucket start, ascending) to merge in; `recompute`: from raw instead. */
export interface Buckets {
  n: number;
  data: Float64Array;
  recompute: Uint8Array;
}

/** The raw entries as the finest buckets (one record each); a replaced record's is recomputed. */
export function rawBuckets(raw: Float64Array, replaced: Set<number> | null): Buckets {
  const n = raw.length / ENTRY;
  const data = raw.slice();
  const recompute = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    data[i * ENTRY + 2] = 1; // slot 2 held the flags
    if (replaced?.has(data[i * ENTRY]!)) recompute[i] = 1;
  }
  return { n, data, recompute };
}

/** Finer buckets merged into the buckets of `span` (a multiple of theirs). */
export function groupBuckets(finer: Buckets, span: number): Buckets {
  const data = new Float64Array(finer.n * ENTRY);
  const recompute = new Uint8Array(finer.n);
  let m = -1;
  let b = -1;
  for (let i = 0; i < finer.n; i++) {
    const ts = finer.data[i * ENTRY]!;
    const bi = ts - (ts % span);
    if (bi !== b) {
      b = bi;
      m++;
      data.set(finer.data.subarray(i * ENTRY, (i + 1) * ENTRY), m * ENTRY);
      data[m * ENTRY] = b;
      recompute[m] = finer.recompute[i]!;
    } else if (finer.recompute[i]) {
      recompute[m] = 1;
    } else if (!recompute[m]) {
      mergeEntryInto(data, m, finer.data, i, finer.data[i * ENTRY + 2]!);
    }
  }
  return { n: m + 1, data, recompute };
}
