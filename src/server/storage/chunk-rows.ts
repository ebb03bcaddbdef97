/**
 * The rows a read answers, taken from a span's chunks (in order, as ChunkTable.chunksIn gives
 * them): rollup rows, one member of them, or raw records. In the smallest span an entry is a raw
 * record: its rollup counts it as one record, and hidden entries (a sweep of that span alone) are
 * left out of the rollup but not of the raw records.
 */
import { ENTRY, FLAGS, lowerBound } from '../chunks.js';
import type { RawRowArray, RollupRowArray, StoredMember } from '../store.js';

/** Column of each stored member in a chunk entry. */
const MEMBER_SLOT: Readonly<Record<StoredMember, number>> = {
  count: 1,
  value: 3,
  stddev: 4,
  derivative: 5,
  derivative_stddev: 6,
  counter: 7,
  counter_stddev: 8,
};

/** Rollup rows with fromTs <= ts < toTs; `raw`: the chunks are the smallest span's. */
export function rollupRowsOf(chunks: readonly Float64Array[], fromTs: number, toTs: number, raw: boolean): RollupRowArray[] {
  const rows: RollupRowArray[] = [];
  for (const e of chunks) {
    for (let i = lowerBound(e, fromTs), n = e.length / ENTRY; i < n; i++) {
      const o = i * ENTRY;
      if (e[o]! >= toTs) break;
      if (raw && (e[o + 2]! & FLAGS.hidden) !== 0) continue;
      rows.push([e[o]!, e[o + 1]!, raw ? 1 : e[o + 2]!, e[o + 3]!, e[o + 4]!, e[o + 5]!, e[o + 6]!, e[o + 7]!, e[o + 8]!]);
    }
  }
  return rows;
}

/** One member of the rollup rows with fromTs <= ts < toTs, as `[ts, value]`. */
export function memberRowsOf(chunks: readonly Float64Array[], member: StoredMember, fromTs: number, toTs: number, raw: boolean): Array<[number, number]> {
  const slot = MEMBER_SLOT[member];
  const rows: Array<[number, number]> = [];
  for (const e of chunks) {
    for (let i = lowerBound(e, fromTs), n = e.length / ENTRY; i < n; i++) {
      const o = i * ENTRY;
      if (e[o]! >= toTs) break;
      if (raw && (e[o + 2]! & FLAGS.hidden) !== 0) continue;
      rows.push([e[o]!, e[o + slot]!]);
    }
  }
  return rows;
}

/** Raw records with fromTs <= ts < toTs; `partsIn` is asked (once) when a record has parts. */
export function rawRowsOf(chunks: readonly Float64Array[], fromTs: number, toTs: number, partsIn: () => Map<number, [number, Buffer]>): RawRowArray[] {
  const rows: RawRowArray[] = [];
  let parts: Map<number, [number, Buffer]> | undefined;
  for (const e of chunks) {
    for (let i = lowerBound(e, fromTs), n = e.length / ENTRY; i < n; i++) {
      const o = i * ENTRY;
      const ts = e[o]!;
      if (ts >= toTs) break;
      let period: number | null = null;
      let blob: Buffer | null = null;
      if ((e[o + 2]! & FLAGS.parts) !== 0) {
        parts ??= partsIn();
        const p = parts.get(ts);
        if (p) [period, blob] = p;
      }
      rows.push([ts, e[o + 1]!, e[o + 3]!, e[o + 4]!, e[o + 5]!, e[o + 6]!, e[o + 7]!, e[o + 8]!, period, blob]);
    }
  }
  return rows;
}
