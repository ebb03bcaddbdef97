/**
 * Series ids by (uuid, metric), with the kinds of data each series has had, kept in memory for the
 * most recently used `capacity` series (a write names its series by strings; the tables key them
 * by id). Creates a series the first time something is written to it.
 *
 * Each cached series costs one map entry: its key string and one number packing the id and the
 * kinds (`id * KINDS + kinds`), no object per series (docs/reference-node.md, "Memory").
 */
import type { Statements } from './statements.js';

interface Known {
  id: number;
  /** KIND_BIT of every data type written to the series so far. */
  kinds: number;
}

/** One more than the largest `kinds` (three bits: nnt, text, histogram). */
const KINDS = 8;

const pack = (id: number, kinds: number): number => id * KINDS + kinds;
const unpack = (packed: number): Known => ({ id: Math.floor(packed / KINDS), kinds: packed % KINDS });

export class SeriesIds {
  /** `${uuid}${metric}` -> id * KINDS + kinds; least recently used first. */
  private readonly cache = new Map<string, number>();

  constructor(
    private readonly s: Statements,
    private readonly capacity: number,
  ) {}

  /** Series held in memory. */
  get size(): number {
    return this.cache.size;
  }

  /** The id of a series held in memory that has had `kind` written, without a query (the write's fast path). */
  cachedId(uuid: string, metric: string, kind: number): number | undefined {
    const c = this.cache.get(uuid + metric);
    return c !== undefined && ((c % KINDS) & kind) !== 0 ? Math.floor(c / KINDS) : undefined;
  }

  find(uuid: string, metric: string): Known | undefined {
    // A uuid is always 36 characters: it and the metric make a key without a separator.
    const key = uuid + metric;
    const cached = this.cache.get(key);
    if (cached !== undefined) {
      // Most recently used last.
      this.cache.delete(key);
      this.cache.set(key, cached);
      return unpack(cached);
    }
    const row = this.s.findSeries.get(uuid, metric);
    if (row !== undefined) this.remember(key, pack(row.id, row.kinds));
    return row;
  }

  /** Finds or creates a series and notes the kind of data written to it (inside the write's transaction). */
  idFor(uuid: string, metric: string, kind: number): number {
    const found = this.find(uuid, metric);
    if (found !== undefined) {
      if ((found.kinds & kind) === 0) {
        this.s.addKind.run(kind, found.id);
        this.cache.set(uuid + metric, pack(found.id, found.kinds | kind));
      }
      return found.id;
    }
    const id = Number(this.s.insertSeries.run(uuid, metric, kind).lastInsertRowid);
    this.remember(uuid + metric, pack(id, kind));
    return id;
  }

  /** Notes that the series lost all its data (a full delete): the next write of any kind records its kind again. */
  cleared(uuid: string, metric: string): void {
    const key = uuid + metric;
    const c = this.cache.get(key);
    if (c !== undefined) this.cache.set(key, pack(Math.floor(c / KINDS), 0));
  }

  /** Forgets every series: a rolled-back transaction may have created some of them. */
  forget(): void {
    this.cache.clear();
  }

  private remember(key: string, packed: number): void {
    this.cache.set(key, packed);
    if (this.cache.size > this.capacity) this.cache.delete(this.cache.keys().next().value!);
  }
}
