/**
 * What the node needs from its storage. One implementation (SQLite, on disk or in memory);
 * the interface keeps routes and the sweeper independent of SQL.
 *
 * All times here are integer epoch seconds; spans and periods are whole seconds.
 */
import type { DataType, HistogramRecord, NntRecord, TextRecord } from '../protocol/index.js';
import type { PackedWrite } from './packed-write.js';
import type { Agg } from './rollup-math.js';
import type { ShardKind, ShardLayout, ShardSpan } from './shards.js';

/** The members a stored rollup row holds (the second-order ones are computed at read time). */
export const STORED_MEMBERS = ['count', 'value', 'stddev', 'derivative', 'derivative_stddev', 'counter', 'counter_stddev'] as const;
export type StoredMember = (typeof STORED_MEMBERS)[number];

/** A (check uuid, metric) pair and its compact id. */
export interface SeriesRef {
  id: number;
  uuid: string;
  metric: string;
}

/**
 * A stored rollup row as a flat array (fast to build and read):
 * `[ts, count, records, value, stddev, derivative, derivative_stddev, counter, counter_stddev]`.
 */
export type RollupRowArray = [number, number, number, number, number, number, number, number, number];

/**
 * A raw record as a flat array: `[ts, count, value, stddev, derivative, derivative_stddev,
 * counter, counter_stddev, partsPeriod | null, parts | null]` where `parts` is a Float64Array
 * of 7 numbers per piece in NUMERIC_FIELDS order.
 */
export type RawRowArray = [number, number, number, number, number, number, number, number, number | null, Buffer | null];

/** A series in the tag index, with the KIND_BIT of every data type it has had. */
export interface IndexedSeries extends SeriesRef {
  kinds: number;
}

export interface Store {
  /** Numeric rollup periods (s), ascending; the first is the smallest (the write span). */
  readonly rollups: readonly number[];
  readonly histogramRollups: readonly number[];

  /** Stores validated numeric records atomically; replaces same (id, metric, offset). Returns the count. */
  writeNnt(records: readonly NntRecord[]): number;
  /** The same for a write already packed (nnt-body.ts parses plain bodies straight into one). */
  writePacked(write: PackedWrite): number;
  writeText(records: readonly TextRecord[]): number;
  writeHistogram(records: readonly HistogramRecord[]): number;

  /** The series id of a (lower-case uuid, metric) pair, undefined when nothing was ever written. */
  findSeries(uuid: string, metric: string): number | undefined;
  /** Stored rollup rows of one span with fromTs <= ts < toTs, ascending. */
  rollupRows(seriesId: number, span: number, fromTs: number, toTs: number): RollupRowArray[];
  /**
   * One member of the stored rollup rows of one span (`[ts, value]`, ascending): the fast path
   * of a single-valued read, which need not build whole aggregates.
   */
  rollupColumn(seriesId: number, span: number, member: StoredMember, fromTs: number, toTs: number): Array<[number, number]>;
  /** Raw records with fromTs <= ts < toTs, ascending. */
  rawRows(seriesId: number, fromTs: number, toTs: number): RawRowArray[];
  textRows(seriesId: number, fromTs: number, toTs: number): Array<[number, string]>;
  histogramRows(seriesId: number, period: number, fromTs: number, toTs: number): Array<[number, number, string]>;

  /** Series that have had data of `type`, in id order, after `afterId`, at most `limit` (the sweeper walks these). */
  listSeries(afterId: number, limit: number, type: DataType): SeriesRef[];
  /** Deletes numeric rollups of the given spans with ts < before; raw records too when `raw`. */
  sweepNnt(seriesId: number, before: number, spans: readonly number[], raw: boolean): number;
  /**
   * What sweeps left of the numeric data: per span, the latest delete time a sweep of it had (its
   * rollup holds nothing before it; of the smallest span, entries are hidden, not gone), and the
   * latest delete time of a sweep of every span (the raw records before it are gone too; 0: none).
   */
  sweepCutoffs(): { spans: ReadonlyMap<number, number>; raw: number };
  sweepText(seriesId: number, before: number): number;
  sweepHistogram(seriesId: number, before: number, periods: readonly number[]): number;

  /** Series in the tag index (written to, not fully deleted since), in id order, after `afterId`, at most `limit`. */
  indexedSeries(afterId: number, limit: number): IndexedSeries[];
  /** Whether the series holds data of `type` with fromTs <= ts < toTs. */
  hasData(seriesId: number, type: DataType, fromTs: number, toTs: number): boolean;
  /** Removes all of the series' data of every type and its index entry (a later write indexes it anew). */
  deleteSeries(seriesId: number): void;
  /** Time shard sizes (shards.ts). */
  readonly shardLayout: ShardLayout;
  /** The shards of a kind and period (ignored for raw) that hold data, oldest first: one index seek per shard. */
  listShards(kind: ShardKind, period: number): ShardSpan[];
  /** Removes one whole shard (one range delete); returns the rows deleted. */
  removeShard(kind: ShardKind, period: number, shard: ShardSpan): number;

  /** Flushes, closes and unlocks at once; resolves once every file of the store is let go. */
  close(): Promise<void>;
}

export function aggOfRollup(r: RollupRowArray): Agg {
  return { count: r[1], records: r[2], value: r[3], stddev: r[4], derivative: r[5], derivative_stddev: r[6], counter: r[7], counter_stddev: r[8] };
}

export function aggOfRaw(r: RawRowArray): Agg {
  return { count: r[1], records: 1, value: r[2], stddev: r[3], derivative: r[4], derivative_stddev: r[5], counter: r[6], counter_stddev: r[7] };
}
