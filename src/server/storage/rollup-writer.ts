/**
 * Applies a series' records to its chunks: the raw entries first (the smallest span), then every
 * larger span's buckets. A bucket is merged incrementally from the new records, except one that
 * had a record replaced, or that a sweep removed (it lies before the span's last sweep time and is
 * missing): that one is recomputed from the raw entries, which already hold the new ones. A sweep
 * rebuilds the bucket straddling its time from the raw entries it keeps (keepStraddling).
 *
 * Applying the same records twice changes nothing: a write replaces, and a replaced bucket is
 * recomputed (what lets a replay after a crash apply a slice again).
 */
import { ENTRY, FLAGS, findEntry, groupBuckets, mergeEntries, mergeEntryInto, mergeRawInto, rawBuckets, type Buckets } from '../chunks.js';
import type { StoredParts } from '../packed-write.js';
import type { ChunkGrid } from '../shards.js';
import type { ChunkTable } from './chunk-table.js';
import type { OrderedRecords } from './series-records.js';

export class RollupWriter {
  private readonly smallest: number;

  constructor(
    private readonly chunks: ChunkTable,
    /** Numeric rollup periods, ascending; the first is the raw span. */
    private readonly rollups: readonly number[],
    /** Per larger span, the latest time a sweep of it deleted before (kept up to date by the sweeps). */
    private readonly sweptBefore: ReadonlyMap<number, number>,
    /** Where each span's chunks start (none straddles a shard). */
    private readonly grid: ChunkGrid,
  ) {
    this.smallest = rollups[0]!;
  }

  /** Applies records in time order: raw entries first, then every larger span. */
  apply(sid: number, raw: OrderedRecords): void {
    const replaced = this.applyRaw(sid, raw.entries, raw.parts);
    // Each span's bucket deltas come from the largest smaller span that divides it.
    const levels: Buckets[] = [rawBuckets(raw.entries, replaced)];
    const spans = [this.smallest];
    for (let i = 1; i < this.rollups.length; i++) {
      const span = this.rollups[i]!;
      let from = 0;
      for (let j = i - 1; j > 0; j--) {
        if (span % spans[j]! === 0) {
          from = j;
          break;
        }
      }
      const buckets = groupBuckets(levels[from]!, span);
      this.applySpan(sid, span, buckets);
      levels.push(buckets);
      spans.push(span);
    }
  }

  /**
   * The bucket of each span holding `before` (when it starts earlier) is rebuilt from the raw
   * entries at or after `before`: what the sweep keeps of it. One read of the raw entries serves
   * every span.
   */
  keepStraddling(sid: number, spans: readonly number[], before: number): void {
    const straddling = spans.filter((span) => before % span !== 0);
    if (straddling.length === 0) return;
    const end = Math.max(...straddling.map((span) => before - (before % span) + span));
    const raw = this.chunks.chunksIn(sid, this.smallest, before, end);
    if (raw.length === 0) return;
    for (const span of straddling) {
      const b = before - (before % span);
      const out = new Float64Array(ENTRY);
      out[0] = b;
      mergeRawInto(out, 0, raw, before, b + span);
      if (out[2] === 0) continue;
      const c = this.grid.start(span, b);
      this.chunks.put(sid, span, c, mergeEntries(this.chunks.get(sid, span, c), out, 0, 1));
    }
  }

  /** Merges new raw entries (sorted) into the raw chunks; returns the ts of the replaced ones. */
  private applyRaw(sid: number, raw: Float64Array, parts: Map<number, StoredParts> | null): Set<number> | null {
    const span = this.smallest;
    const n = raw.length / ENTRY;
    let replaced: Set<number> | null = null;
    for (let i = 0; i < n;) {
      const c = this.grid.start(span, raw[i * ENTRY]!);
      const end = this.grid.end(span, c);
      let j = i + 1;
      while (j < n && raw[j * ENTRY]! < end) j++;
      const old = this.chunks.get(sid, span, c);
      const merged = mergeEntries(old, raw, i, j, (ts, oi) => {
        (replaced ??= new Set()).add(ts);
        if ((old![oi * ENTRY + 2]! & FLAGS.parts) !== 0) this.chunks.putParts(sid, ts, null);
      });
      this.chunks.put(sid, span, c, merged);
      i = j;
    }
    if (parts) for (const [ts, p] of parts) this.chunks.putParts(sid, ts, p);
    return replaced;
  }

  /** Merges bucket deltas into the chunks of a larger span (see the top for the recomputed ones). */
  private applySpan(sid: number, span: number, buckets: Buckets): void {
    const { n, data, recompute } = buckets;
    const swept = this.sweptBefore.get(span) ?? 0;
    for (let i = 0; i < n;) {
      const c = this.grid.start(span, data[i * ENTRY]!);
      const end = this.grid.end(span, c);
      let j = i + 1;
      while (j < n && data[j * ENTRY]! < end) j++;
      const old = this.chunks.get(sid, span, c);
      const update = new Float64Array((j - i) * ENTRY);
      for (let k = i; k < j; k++) {
        const u = k - i;
        const b = data[k * ENTRY]!;
        update[u * ENTRY] = b;
        const at = old ? findEntry(old, b) : -1;
        if (recompute[k] || (at < 0 && b < swept)) {
          mergeRawInto(update, u, this.chunks.chunksIn(sid, this.smallest, b, b + span), b, b + span);
        } else if (at >= 0) {
          update.set(old!.subarray(at * ENTRY, (at + 1) * ENTRY), u * ENTRY);
          mergeEntryInto(update, u, data, k, data[k * ENTRY + 2]!);
        } else {
          update.set(data.subarray(k * ENTRY, (k + 1) * ENTRY), u * ENTRY);
        }
      }
      this.chunks.put(sid, span, c, mergeEntries(old, update, 0, j - i));
      i = j;
    }
  }
}
