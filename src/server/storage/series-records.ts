/**
 * The records of one series waiting for a flush, and what is done with them: gathered from logged
 * writes as they come (arrival order, a repeated ts kept), then put in time order (one record per
 * ts, the last write winning) when they are applied. Pure functions on Float64 entries, no I/O.
 */
import { ENTRY, FLAGS } from '../chunks.js';
import { LOG_ENTRY, type StoredParts } from '../packed-write.js';

/** One series' records gathered from the waiting writes (raw entries, arrival order). */
export interface SeriesRecords {
  entries: Float64Array;
  n: number;
  /** Parts by record index. */
  parts: Map<number, StoredParts> | null;
}

/**
 * Appends the records of one logged write to the per-series queues (those `keep` accepts);
 * returns how many. A queue's array grows by doubling: `n` says how much of it is records. A new
 * queue's array is a view of `e`, which must not change afterwards.
 */
export function enqueue(queues: Map<number, SeriesRecords>, e: Float64Array, parts: Map<number, StoredParts> | null, keep?: (sid: number, ts: number) => boolean): number {
  let added = 0;
  let last = NaN;
  let q: SeriesRecords | undefined;
  for (let i = 0, o = 0; o < e.length; i++, o += LOG_ENTRY) {
    const sid = e[o]!;
    if (keep !== undefined && !keep(sid, e[o + 1]!)) continue;
    if (sid !== last) {
      q = queues.get(sid);
      last = sid;
      if (q === undefined) {
        // A series' first record is a view of the write's own entries, copied only when a second
        // comes: a write touching 200,000 series once each must not make 200,000 small arrays (each
        // its own malloc, whose holes the process kept long after the flush; docs/reference-node.md).
        queues.set(sid, (q = { entries: e.subarray(o + 1, o + 1 + ENTRY), n: 1, parts: (e[o + 3]! & FLAGS.parts) !== 0 ? new Map([[0, parts!.get(i)!]]) : null }));
        added++;
        continue;
      }
    }
    const s = q!;
    if ((s.n + 1) * ENTRY > s.entries.length) {
      const grown = new Float64Array(s.entries.length * 2);
      grown.set(s.entries.subarray(0, s.n * ENTRY));
      s.entries = grown;
    }
    const d = s.n * ENTRY;
    for (let k = 0; k < ENTRY; k++) s.entries[d + k] = e[o + 1 + k]!;
    if ((e[o + 3]! & FLAGS.parts) !== 0) (s.parts ??= new Map()).set(s.n, parts!.get(i)!);
    s.n++;
    added++;
  }
  return added;
}

/** `b`'s records after `a`'s. */
export function concatRecords(a: SeriesRecords, b: SeriesRecords): SeriesRecords {
  const entries = new Float64Array((a.n + b.n) * ENTRY);
  entries.set(a.entries.subarray(0, a.n * ENTRY));
  entries.set(b.entries.subarray(0, b.n * ENTRY), a.n * ENTRY);
  let parts: Map<number, StoredParts> | null = a.parts ? new Map(a.parts) : null;
  if (b.parts) for (const [i, p] of b.parts) (parts ??= new Map()).set(a.n + i, p);
  return { entries, n: a.n + b.n, parts };
}

/** The records with ts >= before. */
export function keepFrom(s: SeriesRecords, before: number): SeriesRecords {
  const keep: number[] = [];
  for (let i = 0; i < s.n; i++) if (s.entries[i * ENTRY]! >= before) keep.push(i);
  const entries = new Float64Array(keep.length * ENTRY);
  let parts: Map<number, StoredParts> | null = null;
  keep.forEach((i, j) => {
    entries.set(s.entries.subarray(i * ENTRY, (i + 1) * ENTRY), j * ENTRY);
    const p = s.parts?.get(i);
    if (p) (parts ??= new Map()).set(j, p);
  });
  return { entries, n: keep.length, parts };
}

/** Records in ts order, one per ts (the last write of a repeated ts won), with their parts by ts. */
export interface OrderedRecords {
  entries: Float64Array;
  parts: Map<number, StoredParts> | null;
}

export function inTimeOrder(s: SeriesRecords): OrderedRecords {
  const n = s.n;
  // A queue's array may be longer than its records.
  const e = s.entries.length === n * ENTRY ? s.entries : s.entries.subarray(0, n * ENTRY);
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (e[i * ENTRY]! <= e[(i - 1) * ENTRY]!) {
      sorted = false;
      break;
    }
  }
  let keep: number[] | null = null;
  if (!sorted) {
    const all = Array.from({ length: n }, (_, i) => i).sort((a, b) => e[a * ENTRY]! - e[b * ENTRY]! || a - b);
    keep = all.filter((k, i) => i === n - 1 || e[all[i + 1]! * ENTRY] !== e[k * ENTRY]);
  }
  let entries = e;
  if (keep) {
    entries = new Float64Array(keep.length * ENTRY);
    keep.forEach((k, j) => entries.set(e.subarray(k * ENTRY, (k + 1) * ENTRY), j * ENTRY));
  }
  let parts: Map<number, StoredParts> | null = null;
  if (s.parts) {
    for (const k of keep ?? s.parts.keys()) {
      const p = s.parts.get(k);
      if (p) (parts ??= new Map()).set(e[k * ENTRY]!, p);
    }
  }
  return { entries, parts };
}

/** The first `n` ordered records, and the rest as a queue (parts by index) for the next slice. */
export function splitOrdered(o: OrderedRecords, n: number): [OrderedRecords, SeriesRecords] {
  const cut = n * ENTRY;
  const first = o.entries.subarray(0, cut);
  const rest = o.entries.subarray(cut);
  const cutTs = rest[0]!;
  let firstParts: Map<number, StoredParts> | null = null;
  let restParts: Map<number, StoredParts> | null = null;
  if (o.parts) {
    const indexOf = new Map<number, number>();
    for (let i = 0; i < rest.length / ENTRY; i++) indexOf.set(rest[i * ENTRY]!, i);
    for (const [ts, p] of o.parts) {
      if (ts < cutTs) (firstParts ??= new Map()).set(ts, p);
      else (restParts ??= new Map()).set(indexOf.get(ts)!, p);
    }
  }
  return [
    { entries: first, parts: firstParts },
    { entries: rest, n: rest.length / ENTRY, parts: restParts },
  ];
}
