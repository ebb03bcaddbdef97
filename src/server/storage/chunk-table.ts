/**
 * The numeric tables (nnt_chunk, nnt_parts) as the store reads and changes them: chunks of one
 * series and span, and the parts of its raw records. Inside `withScratch` every change goes to a
 * scratch layer in memory instead, and every read sees the layer over the stored rows: how a read
 * sees what a flush would make of waiting records without writing anything.
 */
import { blobOf, ENTRY, entriesOf, FLAGS, lowerBound } from '../chunks.js';
import type { StoredParts } from '../packed-write.js';
import type { ChunkGrid } from '../shards.js';
import type { Statements } from './statements.js';

/** Chunks (by span, then chunk start; empty = deleted) and parts (null = deleted) changed in scratch. */
interface Scratch {
  chunks: Map<number, Map<number, Float64Array>>;
  parts: Map<number, StoredParts | null>;
}

export class ChunkTable {
  private scratch: Scratch | null = null;

  constructor(
    private readonly s: Statements,
    private readonly grid: ChunkGrid,
  ) {}

  /** Runs `fn` (for one series) with its changes kept in a scratch layer that is dropped afterwards. */
  withScratch<T>(fn: () => T): T {
    this.scratch = { chunks: new Map(), parts: new Map() };
    try {
      return fn();
    } finally {
      this.scratch = null;
    }
  }

  get(sid: number, span: number, chunkTs: number): Float64Array | undefined {
    const scratched = this.scratch?.chunks.get(span)?.get(chunkTs);
    if (scratched !== undefined) return scratched.length === 0 ? undefined : scratched;
    const blob = this.s.getChunk.get(sid, span, chunkTs);
    return blob === undefined ? undefined : entriesOf(blob);
  }

  /** Stores a chunk's entries (none: deletes it). */
  put(sid: number, span: number, chunkTs: number, entries: Float64Array): void {
    if (this.scratch) {
      let m = this.scratch.chunks.get(span);
      if (!m) this.scratch.chunks.set(span, (m = new Map<number, Float64Array>()));
      m.set(chunkTs, entries);
    } else if (entries.length === 0) this.s.deleteChunk.run(sid, span, chunkTs);
    else this.s.putChunk.run(sid, span, chunkTs, blobOf(entries));
  }

  /** Stores the parts of the raw record at `ts` (null: deletes them). */
  putParts(sid: number, ts: number, p: StoredParts | null): void {
    if (this.scratch) this.scratch.parts.set(ts, p);
    else if (p === null) this.s.deleteParts.run(sid, ts);
    else this.s.putParts.run(sid, ts, p.period, p.blob);
  }

  /** The chunks of a span that may hold entries with from <= ts < to, in order. */
  chunksIn(sid: number, span: number, from: number, to: number): Float64Array[] {
    const lo = this.grid.start(span, Math.max(0, from));
    const rows = this.s.chunkRange.all(sid, span, lo, to);
    const scratched = this.scratch?.chunks.get(span);
    if (scratched === undefined) return rows.map((r) => entriesOf(r[1]));
    const byTs = new Map<number, Float64Array>(rows.map(([c, blob]) => [c, entriesOf(blob)]));
    for (const [c, e] of scratched) if (c >= lo && c < to) byTs.set(c, e);
    return [...byTs]
      .sort((a, b) => a[0] - b[0])
      .map((x) => x[1])
      .filter((e) => e.length > 0);
  }

  /** The parts of the raw records with fromTs <= ts < toTs, by ts: `[period, blob]`. */
  partsIn(sid: number, fromTs: number, toTs: number): Map<number, [number, Buffer]> {
    const out = new Map(this.s.partsRange.all(sid, fromTs, toTs).map(([t, p, b]) => [t, [p, b] as [number, Buffer]]));
    for (const [ts, p] of this.scratch?.parts ?? []) {
      if (ts < fromTs || ts >= toTs) continue;
      if (p === null) out.delete(ts);
      else out.set(ts, [p.period, p.blob]);
    }
    return out;
  }

  /** Deletes the entries of a span with ts < before; returns how many (a sweep: never in scratch). */
  dropBefore(sid: number, span: number, before: number): number {
    const c = this.grid.start(span, before);
    let n = (this.s.bytesBefore.get(sid, span, c) ?? 0) / (ENTRY * 8);
    this.s.deleteBefore.run(sid, span, c);
    if (c < before) {
      // The chunk holding `before` keeps its entries from `before` on.
      const e = this.get(sid, span, c);
      const k = e ? lowerBound(e, before) : 0;
      if (e !== undefined && k > 0) {
        this.put(sid, span, c, e.slice(k * ENTRY));
        n += k;
      }
    }
    return n;
  }

  /** Flags the raw entries (of the smallest span `span`) with ts < before as hidden; returns how many. */
  hideBefore(sid: number, span: number, before: number): number {
    let n = 0;
    for (const [c, blob] of this.s.chunksBefore.all(sid, span, before)) {
      const e = entriesOf(blob);
      let changed = false;
      for (let o = 0; o < e.length && e[o]! < before; o += ENTRY) {
        if ((e[o + 2]! & FLAGS.hidden) === 0) {
          e[o + 2] = e[o + 2]! | FLAGS.hidden;
          changed = true;
          n++;
        }
      }
      if (changed) this.put(sid, span, c, e);
    }
    return n;
  }

  /** Deletes the parts of the raw records with ts < before. */
  dropPartsBefore(sid: number, before: number): void {
    this.s.sweepParts.run(sid, before);
  }
}
