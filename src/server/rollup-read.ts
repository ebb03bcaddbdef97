/**
 * Rollup reads: which stored span or raw data serves a request, bucketing, second-order
 * members, and the JSON rendering of the answer (built as one string: a year of 300 s buckets
 * is 105,120 rows).
 */
import { ProtocolError, ROLLUP_MEMBERS, MEMBER_OF_TYPE, formatSpan, secondsFromMs, type Engine, type RollupMember, type RollupType } from '../protocol/index.js';
import { decodeParts } from './packed-write.js';
import { mergeInto, secondOrder, type Agg, type SecondOrder } from './rollup-math.js';
import { aggOfRaw, aggOfRollup, type StoredMember, type Store } from './store.js';

export interface BucketPlan {
  /** First bucket start (the floored start), epoch ms. */
  firstMs: number;
  spanMs: number;
  /** Buckets in the answer. */
  count: number;
}

/** Floors the start to a multiple of the span and counts the buckets up to the exclusive end. */
export function planBuckets(startMs: number, endMs: number, spanMs: number): BucketPlan {
  const firstMs = startMs - (startMs % spanMs);
  const count = Math.ceil((endMs - firstMs) / spanMs);
  return { firstMs, spanMs, count };
}

/** The largest configured span (s) that divides the requested span, if any. */
export function baseSpanFor(spanMs: number, rollups: readonly number[]): number | undefined {
  for (let i = rollups.length - 1; i >= 0; i--) {
    const s = rollups[i]!;
    if (spanMs % (s * 1000) === 0) return s;
  }
  return undefined;
}

/** Checks that an engine can serve a span; throws a 400 that says which spans it can. */
export function checkEngineSpan(engine: Engine, spanMs: number, rollups: readonly number[]): void {
  const smallest = rollups[0]!;
  const base = baseSpanFor(spanMs, rollups);
  if (engine === 'nnt' && base === undefined) {
    throw new ProtocolError(
      400,
      'invalid_query',
      `rollup_span ${formatSpan(spanMs)} is not a whole multiple of the smallest configured span ${smallest}s, which get_engine=nnt needs (configured: ${rollups.join(', ')}); get_engine=recalc or dispatch serve any span from the raw records`,
      { field: 'rollup_span', value: formatSpan(spanMs), rollups },
    );
  }
}

/**
 * The aggregates of `plan.count + 1` buckets: index 0 is the bucket before the first (needed for
 * the second-order members of the first bucket), index i the i-th bucket of the answer.
 */
export function readBuckets(store: Store, seriesId: number | undefined, plan: BucketPlan, engine: Engine): Array<Agg | null> {
  const out: Array<Agg | null> = new Array<Agg | null>(plan.count + 1).fill(null);
  if (seriesId === undefined) return out;
  const base = baseSpanFor(plan.spanMs, store.rollups);
  if (engine === 'recalc' || base === undefined) {
    fillFromRaw(store, seriesId, plan, out, 0, plan.count);
    return out;
  }
  fillFromStored(store, seriesId, plan, base, out);
  if (engine === 'dispatch') {
    let lo = -1;
    let hi = -1;
    for (let i = 0; i <= plan.count; i++) {
      if (out[i] === null) {
        if (lo < 0) lo = i;
        hi = i;
      }
    }
    if (lo >= 0) fillFromRaw(store, seriesId, plan, out, lo, hi);
  }
  return out;
}

/** Marks a bucket known to hold stored data, so filling from raw leaves it alone. */
const PRESENT: Agg = Object.freeze({ count: 0, records: 1, value: 0, stddev: 0, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 });

/**
 * The values of one stored member for each bucket of the answer (null when empty). When the span
 * is a configured one, only that column is read (a year of 300 s buckets stays well under 100 ms).
 */
export function readMember(store: Store, seriesId: number | undefined, plan: BucketPlan, engine: Engine, member: StoredMember): Array<number | null> {
  const out = new Array<number | null>(plan.count).fill(null);
  if (seriesId === undefined) return out;
  const base = baseSpanFor(plan.spanMs, store.rollups);
  if (engine === 'recalc' || base === undefined || base * 1000 !== plan.spanMs) {
    const aggs = readBuckets(store, seriesId, plan, engine);
    for (let i = 0; i < plan.count; i++) {
      const a = aggs[i + 1];
      if (a) out[i] = a[member];
    }
    return out;
  }
  const endMs = plan.firstMs + plan.count * plan.spanMs;
  const spanMs = plan.spanMs;
  for (const [ts, v] of store.rollupColumn(seriesId, base, member, Math.ceil(plan.firstMs / 1000), Math.ceil(endMs / 1000))) {
    out[(ts * 1000 - plan.firstMs) / spanMs] = v;
  }
  if (engine === 'dispatch') {
    // Empty buckets are filled from raw records, run by run: one scan from the first to the last
    // gap re-read every raw row of the range (a year with a gap at each end: 105k rows, ~150 ms
    // per read). Runs closer than MERGE_GAP buckets share a scan to bound the number of queries.
    const MERGE_GAP = 64;
    let aggs: Array<Agg | null> | undefined;
    let lo = -1;
    let hi = -1;
    const flush = (): void => {
      if (lo < 0) return;
      if (!aggs) {
        // Index i + 1 of the aggregate array is bucket i of the answer (index 0 is the one before).
        aggs = out.map((v) => (v === null ? null : PRESENT));
        aggs.unshift(PRESENT);
      }
      fillFromRaw(store, seriesId, plan, aggs, lo + 1, hi + 1);
      for (let i = lo; i <= hi; i++) {
        const a = aggs[i + 1];
        if (out[i] === null && a && a !== PRESENT) out[i] = a[member];
      }
    };
    for (let i = 0; i < plan.count; i++) {
      if (out[i] !== null) continue;
      if (lo >= 0 && i - hi > MERGE_GAP) {
        flush();
        lo = -1;
      }
      if (lo < 0) lo = i;
      hi = i;
    }
    flush();
  }
  return out;
}

/**
 * A rendered answer: its pieces, joined in order, are the whole JSON text. `one`: it is a single
 * piece, known before anything is read (sendJsonPieces then sends it with its Content-Length).
 */
export interface AnswerPieces {
  one: boolean;
  pieces: Iterable<string>;
}

/** Reads the rows of a part of the answer: `part` is the plan of those rows alone (planPart). */
export type ReadPart<T> = (part: BucketPlan) => T;

/** Renders single values as the JSON answer `[[ts, v], ...]`, in pieces (inPieces); each piece's values are read just before it is rendered. */
export function renderValues(read: ReadPart<ReadonlyArray<number | null>>, plan: BucketPlan): AnswerPieces {
  return inPieces(plan, (part) => {
    const values = read(part);
    return (j) => {
      const v = values[j];
      return `[${secondsFromMs(part.firstMs + j * part.spanMs)},${v === null || v === undefined ? 'null' : num(v)}]`;
    };
  });
}

/** An answer of up to this many rows is one piece; a longer one goes in pieces (pieceRanges). */
export const ONE_PIECE_ROWS = 8192;
/**
 * The first piece of a longer answer: small, so its bytes leave ~1 ms after the request instead of
 * after a piece of ROWS_PER_PIECE rows is read and rendered, and the client starts on them sooner.
 */
export const FIRST_PIECE_ROWS = 1024;
/**
 * Rows per later piece: a year of 300 s buckets goes out in ~14 pieces of ~250 KB, so the client
 * scans the first rows while the node reads and renders the rest (routes/rollup.ts).
 */
export const ROWS_PER_PIECE = 8192;

/** The row ranges `[from, to)` of the pieces of an answer of `count` rows (an empty answer is one empty piece). */
export function pieceRanges(count: number): Array<[number, number]> {
  if (count <= ONE_PIECE_ROWS) return [[0, count]];
  const out: Array<[number, number]> = [[0, FIRST_PIECE_ROWS]];
  for (let from = FIRST_PIECE_ROWS; from < count; from += ROWS_PER_PIECE) out.push([from, Math.min(count, from + ROWS_PER_PIECE)]);
  return out;
}

/** The plan of rows `from` to `to` (not included) of `plan`: their buckets, alone. */
export function planPart(plan: BucketPlan, from: number, to: number): BucketPlan {
  return { firstMs: plan.firstMs + from * plan.spanMs, spanMs: plan.spanMs, count: to - from };
}

/**
 * A JSON array of `plan.count` rows in the pieces of pieceRanges, joining into the whole. Each
 * piece's rows are read (`rowsOf` gets the plan of that piece; its answer renders row j of it)
 * only when the piece is due: the first bytes go out before the rest is read. Every bucket is
 * read once, by the piece that holds it (a bucket's value depends only on the data of its own
 * range and, for second-order members, the bucket before, which readBuckets reads along).
 */
function inPieces(plan: BucketPlan, rowsOf: (part: BucketPlan) => (j: number) => string): AnswerPieces {
  const count = plan.count;
  const ranges = pieceRanges(count);
  function* pieces(): Generator<string> {
    for (const [from, to] of ranges) {
      const row = rowsOf(planPart(plan, from, to));
      const parts = new Array<string>(to - from);
      for (let j = 0; j < to - from; j++) parts[j] = row(j);
      yield `${from === 0 ? '[' : ','}${parts.join(',')}${to >= count ? ']' : ''}`;
    }
  }
  return { one: ranges.length === 1, pieces: pieces() };
}

function fillFromStored(store: Store, seriesId: number, plan: BucketPlan, base: number, out: Array<Agg | null>): void {
  const prevMs = plan.firstMs - plan.spanMs;
  const endMs = plan.firstMs + plan.count * plan.spanMs;
  const fromTs = Math.ceil(Math.max(prevMs, 0) / 1000);
  const toTs = Math.ceil(endMs / 1000);
  const rows = store.rollupRows(seriesId, base, fromTs, toTs);
  const spanMs = plan.spanMs;
  if (spanMs === base * 1000) {
    for (const row of rows) out[(row[0] * 1000 - prevMs) / spanMs] = aggOfRollup(row);
    return;
  }
  for (const row of rows) {
    const i = Math.floor((row[0] * 1000 - prevMs) / spanMs);
    const cur = out[i];
    if (cur) mergeInto(cur, aggOfRollup(row));
    else out[i] = aggOfRollup(row);
  }
}

/** Fills buckets lo..hi (indices into `out`) that are still null from raw records and their parts. */
function fillFromRaw(store: Store, seriesId: number, plan: BucketPlan, out: Array<Agg | null>, lo: number, hi: number): void {
  const prevMs = plan.firstMs - plan.spanMs;
  const spanMs = plan.spanMs;
  const fromMs = prevMs + lo * spanMs;
  const toMs = prevMs + (hi + 1) * spanMs;
  // A record written at ts holds pieces up to ts + smallest span: start the scan that much earlier.
  const fromTs = Math.max(0, Math.floor(Math.max(fromMs, 0) / 1000) - store.rollups[0]!);
  const toTs = Math.ceil(toMs / 1000);
  const fresh = new Set<number>();
  const add = (tsMs: number, agg: Agg): void => {
    if (tsMs < fromMs || tsMs >= toMs) return;
    const i = Math.floor((tsMs - prevMs) / spanMs);
    const cur = out[i];
    if (cur === null || cur === undefined) {
      out[i] = agg;
      fresh.add(i);
    } else if (fresh.has(i)) {
      mergeInto(cur, agg);
    }
  };
  for (const row of store.rawRows(seriesId, fromTs, toTs)) {
    const period = row[8];
    const blob = row[9];
    if (period !== null && blob !== null) {
      const pieces = decodeParts(blob);
      for (let j = 0; j < pieces.length; j++) add((row[0] + j * period) * 1000, pieces[j]!);
    } else {
      add(row[0] * 1000, aggOfRaw(row));
    }
  }
}

const SECOND_ORDER: ReadonlySet<RollupMember> = new Set(['derivative2', 'derivative2_stddev', 'counter2', 'counter2_stddev']);
type FirstOrderMember = Exclude<RollupMember, keyof SecondOrder>;

function num(n: number): string {
  return Number.isFinite(n) ? String(n) : 'null';
}

/**
 * Renders the answer rows for one type as a JSON array, in pieces (inPieces); each piece's buckets
 * are read just before it is rendered (`read` is readBuckets for the piece's plan).
 */
export function renderRollup(read: ReadPart<ReadonlyArray<Agg | null>>, plan: BucketPlan, type: RollupType): AnswerPieces {
  const spanSeconds = plan.spanMs / 1000;
  const member = type === 'all' ? undefined : MEMBER_OF_TYPE[type];
  const second = member !== undefined && SECOND_ORDER.has(member);
  return inPieces(plan, (part) => {
    // Index j + 1 of `buckets` is row j of the piece (index 0 is the bucket before, for second order).
    const buckets = read(part);
    return (j) => {
      const i = j + 1;
      const ts = secondsFromMs(part.firstMs + j * part.spanMs);
      const cur = buckets[i] ?? null;
      let v: string;
      if (cur === null) {
        v = 'null';
      } else if (type === 'all') {
        const so = secondOrder(buckets[i - 1] ?? null, cur, spanSeconds);
        v = `{"count":${num(cur.count)},"value":${num(cur.value)},"stddev":${num(cur.stddev)},"derivative":${num(cur.derivative)},"derivative_stddev":${num(
          cur.derivative_stddev,
        )},"counter":${num(cur.counter)},"counter_stddev":${num(cur.counter_stddev)},"derivative2":${num(so.derivative2)},"derivative2_stddev":${num(
          so.derivative2_stddev,
        )},"counter2":${num(so.counter2)},"counter2_stddev":${num(so.counter2_stddev)}}`;
      } else if (second) {
        v = num(secondOrder(buckets[i - 1] ?? null, cur, spanSeconds)[member as keyof SecondOrder]);
      } else {
        v = num(cur[member as FirstOrderMember]);
      }
      return `[${ts},${v}]`;
    };
  });
}

/** Members of `type=all`, re-exported for tests. */
export { ROLLUP_MEMBERS };
