/**
 * Time shards: how the node cuts its data into units by time, as the store does. Pure.
 *
 * A shard of period P and size S covers [k*S, (k+1)*S) for a whole k (epoch aligned, as the
 * store's `block_floor`s are). Numeric rollup shards are sized as the store's nntbs sizes them
 * (`size` rounded up to a whole multiple of 127 x period), histogram rollup shards as its
 * histogram rollups (`granularity` rounded up to a whole multiple of the period), raw shards by
 * `--raw-shard` (default 1w) as given: raw numeric shards and raw histogram shards alike (the
 * store's `raw_database` and `histogram_ingest` granularities, both 1w by default).
 *
 * The storage keeps every chunk of numeric data inside one shard of each grid that applies to
 * its span (`ChunkGrid`): a chunk never straddles a shard boundary, so a shard is exactly the
 * chunks whose start lies in it, and removing one is removing a key range.
 */
import { CHUNK_ENTRIES } from './chunks.js';

/** `histogram_raw`: the histograms of the smallest histogram period, which the node keeps as received (its raw histograms). */
export type ShardKind = 'nnt' | 'histogram' | 'raw' | 'histogram_raw';

/** Shard sizes in seconds: per numeric period, per histogram period, and the raw shard. */
export interface ShardLayout {
  nnt: ReadonlyMap<number, number>;
  histogram: ReadonlyMap<number, number>;
  raw: number;
}

/** One shard: [start, end) in epoch seconds. */
export interface ShardSpan {
  start: number;
  end: number;
}

const DAY = 86_400;
const WEEK = 7 * DAY;

/** The store's sample nntbs config (`<shard period="60" size="1d"/>` ...). */
export const DEFAULT_NNT_SHARDS: ReadonlyMap<number, number> = new Map([
  [60, DAY],
  [300, 5 * DAY],
  [1800, 30 * DAY],
  [10800, 180 * DAY],
]);
/** The store's sample histogram rollup config (`<rollup period="60" granularity="7d"/>` ...). */
export const DEFAULT_HISTOGRAM_SHARDS: ReadonlyMap<number, number> = new Map([
  [60, 7 * DAY],
  [300, 30 * DAY],
  [1800, 12 * WEEK],
  [10800, 52 * WEEK],
  [86400, 260 * WEEK],
]);
/** The store's raw database granularity default. */
export const DEFAULT_RAW_SHARD = WEEK;

/** The store's minimum nntbs shard: 127 periods. */
export const NNT_SHARD_PERIODS = 127;

function roundUp(value: number, multiple: number): number {
  return Math.ceil(value / multiple) * multiple;
}

/** A numeric shard size as the store makes it: at least 127 periods, a whole multiple of 127 x period. */
export function nntShardSize(period: number, asked: number | undefined): number {
  const unit = NNT_SHARD_PERIODS * period;
  return roundUp(Math.max(asked ?? unit, unit), unit);
}

/** A histogram shard size: a whole multiple of the period (127 periods when none is configured). */
export function histogramShardSize(period: number, asked: number | undefined): number {
  return roundUp(asked ?? NNT_SHARD_PERIODS * period, period);
}

/** The layout for the node's periods from the sizes asked for (period -> seconds); periods asked for but not configured are ignored by the caller. */
export function shardLayout(
  rollups: readonly number[],
  histogramRollups: readonly number[],
  asked: { nnt?: ReadonlyMap<number, number>; histogram?: ReadonlyMap<number, number>; raw?: number } = {},
): ShardLayout {
  const nntAsked = asked.nnt ?? DEFAULT_NNT_SHARDS;
  const histAsked = asked.histogram ?? DEFAULT_HISTOGRAM_SHARDS;
  return {
    nnt: new Map(rollups.map((p) => [p, nntShardSize(p, nntAsked.get(p))])),
    histogram: new Map(histogramRollups.map((p) => [p, histogramShardSize(p, histAsked.get(p))])),
    raw: asked.raw ?? DEFAULT_RAW_SHARD,
  };
}

/** The start of the shard of size `size` holding `ts`. */
export function shardStart(ts: number, size: number): number {
  return ts - (((ts % size) + size) % size);
}

/** `60=91440,300=...`: a layout as one line, kept in the database so a restart cannot change it. */
export function describeLayout(layout: ShardLayout): string {
  const list = (m: ReadonlyMap<number, number>): string => [...m].map(([p, s]) => `${p}=${s}`).join(',');
  return `nnt:${list(layout.nnt)};histogram:${list(layout.histogram)};raw:${layout.raw}`;
}

/**
 * Where the chunks of each numeric span start: every CHUNK_ENTRIES spans, restarting at each
 * boundary of the span's shard grid (and, for the smallest span, whose chunks are the raw records,
 * of the raw shard grid too), so no chunk straddles a shard.
 */
export class ChunkGrid {
  private readonly sizes = new Map<number, number[]>();

  constructor(layout: ShardLayout, smallest: number) {
    for (const [span, size] of layout.nnt) this.sizes.set(span, span === smallest ? [size, layout.raw] : [size]);
  }

  /** The start of the chunk of `span` holding `ts`. */
  start(span: number, ts: number): number {
    const window = span * CHUNK_ENTRIES;
    let floor = -Infinity;
    for (const size of this.sizes.get(span)!) floor = Math.max(floor, shardStart(ts, size));
    return floor + (ts - floor - ((ts - floor) % window));
  }

  /** The end of the chunk of `span` starting at `chunkTs` (exclusive). */
  end(span: number, chunkTs: number): number {
    let end = chunkTs + span * CHUNK_ENTRIES;
    for (const size of this.sizes.get(span)!) end = Math.min(end, shardStart(chunkTs, size) + size);
    return end;
  }
}
