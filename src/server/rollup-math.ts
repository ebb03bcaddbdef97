/**
 * Rollup math of the reference node (spec part B, "Rollup math"). Pure functions, no I/O.
 *
 * An aggregate summarises some numeric records: `count` data points, the count-weighted mean
 * of `value`, `derivative` and `counter`, and the pooled population standard deviation of each.
 * Merging two aggregates is associative and commutative, so a larger span can be formed from
 * smaller ones in any grouping, incrementally or from scratch, with the same result.
 *
 * Pooled stddev: sqrt(Σ nᵢ(sᵢ² + mᵢ²)/N − m²). It is computed in the algebraically identical
 * form Σ nᵢ(sᵢ² + (mᵢ − m)²)/N (Chan et al.'s pairwise update), which does not lose precision
 * when the means are large compared with the spread.
 *
 * Degenerate case: when every merged record has count 0 there is no count to weight by; the
 * records are then weighted equally (`records` counts them), so the value of an all-zero-count
 * bucket is the plain mean of its records. As soon as any record has a count > 0, zero-count
 * records carry no weight.
 */
import type { Aggregate } from '../protocol/index.js';

export interface Agg {
  /** Σ count. */
  count: number;
  /** How many records (or raw pieces) were merged; the weight when every count is 0. */
  records: number;
  value: number;
  stddev: number;
  derivative: number;
  derivative_stddev: number;
  counter: number;
  counter_stddev: number;
}

/** An aggregate of nothing; merging into it copies the other side. */
export function emptyAgg(): Agg {
  return { count: 0, records: 0, value: 0, stddev: 0, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 };
}

/** One record (or one raw piece) as an aggregate. */
export function aggOf(a: Aggregate): Agg {
  return {
    count: a.count,
    records: 1,
    value: a.value,
    stddev: a.stddev,
    derivative: a.derivative,
    derivative_stddev: a.derivative_stddev,
    counter: a.counter,
    counter_stddev: a.counter_stddev,
  };
}

/** Pairwise pooled update of one (mean, stddev) pair; returns the new pair through `out`. */
export function pool(wa: number, ma: number, sa: number, wb: number, mb: number, sb: number, out: [number, number]): void {
  const w = wa + wb;
  const delta = mb - ma;
  const mean = ma + (delta * wb) / w;
  // N·s² of the union = Na·sa² + Nb·sb² + δ²·Na·Nb/N
  const m2 = wa * sa * sa + wb * sb * sb + (delta * delta * wa * wb) / w;
  const variance = m2 / w;
  out[0] = mean;
  out[1] = variance > 0 ? Math.sqrt(variance) : 0;
}

export const pair: [number, number] = [0, 0];

/** Something mergeable: an aggregate, or a bare record (which counts as one record). */
export type Mergeable = Aggregate & { records?: number };

function assign(acc: Agg, b: Mergeable, records: number): void {
  acc.count = b.count;
  acc.records = records;
  acc.value = b.value;
  acc.stddev = b.stddev;
  acc.derivative = b.derivative;
  acc.derivative_stddev = b.derivative_stddev;
  acc.counter = b.counter;
  acc.counter_stddev = b.counter_stddev;
}

/** Merges `b` into `acc` (mutating `acc`, never `b`) and returns `acc`. */
export function mergeInto(acc: Agg, b: Mergeable): Agg {
  const bRecords = b.records ?? 1;
  if (bRecords === 0) return acc;
  if (acc.records === 0) {
    assign(acc, b, bRecords);
    return acc;
  }
  let wa: number;
  let wb: number;
  if (acc.count > 0 || b.count > 0) {
    wa = acc.count;
    wb = b.count;
  } else {
    wa = acc.records;
    wb = bRecords;
  }
  if (wb === 0) {
    // b holds only zero-count records while acc has counts: b carries no weight.
    acc.records += bRecords;
    return acc;
  }
  if (wa === 0) {
    assign(acc, b, acc.records + bRecords);
    return acc;
  }
  pool(wa, acc.value, acc.stddev, wb, b.value, b.stddev, pair);
  acc.value = pair[0];
  acc.stddev = pair[1];
  pool(wa, acc.derivative, acc.derivative_stddev, wb, b.derivative, b.derivative_stddev, pair);
  acc.derivative = pair[0];
  acc.derivative_stddev = pair[1];
  pool(wa, acc.counter, acc.counter_stddev, wb, b.counter, b.counter_stddev, pair);
  acc.counter = pair[0];
  acc.counter_stddev = pair[1];
  acc.count += b.count;
  acc.records += bRecords;
  return acc;
}

/** Merges a list of aggregates; null when the list is empty. */
export function mergeAll(aggs: readonly Agg[]): Agg | null {
  if (aggs.length === 0) return null;
  const acc = emptyAgg();
  for (const a of aggs) mergeInto(acc, a);
  return acc;
}

/** The second-order members of one non-empty bucket: always numbers. */
export interface SecondOrder {
  derivative2: number;
  derivative2_stddev: number;
  counter2: number;
  counter2_stddev: number;
}

const ZERO_SECOND_ORDER: Readonly<SecondOrder> = Object.freeze({ derivative2: 0, derivative2_stddev: 0, counter2: 0, counter2_stddev: 0 });

/**
 * derivative2 / counter2 of a non-empty bucket: the per-second rate of change of `derivative` /
 * `counter` from the immediately preceding bucket of the same span to this one,
 * `(x[t] − x[t − span]) / span_seconds`; the `_stddev` members are the same rate of change of
 * `derivative_stddev` / `counter_stddev`. When the preceding bucket is empty there is nothing to
 * change from: all four are 0, as the store's read-rollup example shows for its first bucket.
 * (An empty bucket itself has no members at all: the caller renders it as null.)
 */
export function secondOrder(prev: Agg | null, cur: Agg, spanSeconds: number): Readonly<SecondOrder> {
  if (!prev) return ZERO_SECOND_ORDER;
  return {
    derivative2: (cur.derivative - prev.derivative) / spanSeconds,
    derivative2_stddev: (cur.derivative_stddev - prev.derivative_stddev) / spanSeconds,
    counter2: (cur.counter - prev.counter) / spanSeconds,
    counter2_stddev: (cur.counter_stddev - prev.counter_stddev) / spanSeconds,
  };
}
