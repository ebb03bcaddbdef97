/**
 * The node's time shards as storage units: which shards hold data, and removing one.
 *
 * A shard is a key range of a time index (schema.ts): numeric chunks by (span, chunk_ts), raw
 * parts by ts, histograms by (period, ts). Since no chunk straddles a shard (shards.ts ChunkGrid),
 * listing walks the index from shard to shard, one seek per shard that holds data (O(shards), not
 * O(records)), and removing a shard is one range delete.
 *
 * The smallest numeric span's chunks are the raw records and that span's rollup at once (one
 * copy): its nnt shards and the raw shards are two grids over the same rows. So are the histograms
 * of the smallest histogram period (kept as received, never computed from others) and the raw
 * histogram shards: removing either removes those rows from both lists. A sweep of the
 * smallest span alone hides its entries (the raw records stay): an nnt shard of the smallest span
 * lying before the latest such sweep is listed only when it still holds an entry not hidden,
 * which is checked row by row (the one listing that can cost the shard's rows: sweep-era only).
 */
import { ENTRY, entriesOf, FLAGS } from '../chunks.js';
import { shardStart, type ShardKind, type ShardLayout, type ShardSpan } from '../shards.js';
import type { Statements } from './statements.js';

export class ShardIndex {
  constructor(
    private readonly s: Statements,
    private readonly layout: ShardLayout,
    private readonly smallest: number,
    /** The smallest histogram period: its rows are the node's raw histograms (undefined: no histogram periods). */
    private readonly smallestHistogram: number | undefined,
    /** The latest time a sweep of the smallest span alone hid entries before (0: never). */
    private readonly hiddenBefore: () => number,
  ) {}

  /** The size of the shards of `kind` and `period` (ignored for raw), or undefined when the node has no such period. */
  sizeOf(kind: ShardKind, period: number): number | undefined {
    if (kind === 'raw') return this.layout.raw;
    if (kind === 'histogram_raw') return this.smallestHistogram === undefined ? undefined : this.layout.raw;
    return (kind === 'nnt' ? this.layout.nnt : this.layout.histogram).get(period);
  }

  /** The shards of `kind` (and `period`) that hold data, oldest first. */
  list(kind: ShardKind, period: number): ShardSpan[] {
    const size = this.sizeOf(kind, period);
    if (size === undefined) return [];
    const histogramPeriod = kind === 'histogram_raw' ? this.smallestHistogram! : period;
    const first =
      kind === 'histogram' || kind === 'histogram_raw'
        ? (from: number) => this.s.firstHistogramFrom.get(histogramPeriod, from)
        : (from: number) => this.s.firstChunkFrom.get(kind === 'raw' ? this.smallest : period, from);
    const out: ShardSpan[] = [];
    const hidden = kind === 'nnt' && period === this.smallest ? this.hiddenBefore() : 0;
    for (let ts = first(Number.MIN_SAFE_INTEGER); ts !== undefined;) {
      const start = shardStart(ts, size);
      const span = { start, end: start + size };
      if (start >= hidden || this.holdsVisible(span)) out.push(span);
      ts = first(span.end);
    }
    return out;
  }

  /** Whether a shard of the smallest span holds an entry a sweep has not hidden. */
  private holdsVisible(shard: ShardSpan): boolean {
    for (const blob of this.s.chunksInRange.iterate(this.smallest, shard.start, shard.end)) {
      const e = entriesOf(blob);
      for (let o = 2; o < e.length; o += ENTRY) if ((e[o]! & FLAGS.hidden) === 0) return true;
    }
    return false;
  }

  /**
   * Removes one shard: a range delete (run it inside a transaction). Removing a raw shard or a
   * shard of the smallest span (numeric or histogram) removes the rows both grids share. Returns the rows deleted.
   */
  remove(kind: ShardKind, period: number, shard: ShardSpan): number {
    if (kind === 'histogram') return this.s.deleteHistogramRange.run(period, shard.start, shard.end).changes;
    if (kind === 'histogram_raw') return this.s.deleteHistogramRange.run(this.smallestHistogram!, shard.start, shard.end).changes;
    const span = kind === 'raw' ? this.smallest : period;
    const n = this.s.deleteChunkRange.run(span, shard.start, shard.end).changes;
    if (span === this.smallest) this.s.deletePartsRange.run(shard.start, shard.end);
    return n;
  }
}
