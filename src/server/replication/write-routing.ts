/**
 * The replication step of a write: which of its records this node keeps, and the other owners'
 * share journaled before the write is acknowledged. A write a peer replays (it carries
 * REPLAYED_FROM_HEADER) is kept whole and never journaled again.
 *
 * A peer's share is journaled as the JSON the client sent, never encoded again: a run of
 * consecutive records is one slice of the body (see WriteShape.jsonOf), so when a peer gets every
 * record of a write (on a ring of W nodes and W copies, always) its entry is one copy of the body.
 */
import type { IncomingMessage } from 'node:http';
import { ProtocolError, REPLAYED_FROM_HEADER, type DataType } from '../../protocol/index.js';
import { arrayElementSpans, arrayInner } from '../json-spans.js';
import type { ParsedNnt } from '../nnt-body.js';
import { LOG_ENTRY, type PackedWrite, type WriteSeries } from '../packed-write.js';
import type { NodeContext } from '../routes/context.js';
import { isDiskFull } from '../storage/disk-full.js';
import type { Selection } from './replication.js';

export interface WriteShape {
  count: number;
  /** The write's distinct series. */
  series: { id: readonly string[]; metric: readonly string[] };
  /** The index in `series` of record i's series. */
  seriesOf: (i: number) => number;
  /** Records from..to (inclusive) as JSON objects joined by commas, as a peer's write endpoint takes them. */
  jsonOf: (from: number, to: number) => Uint8Array;
  offsetOf: (i: number) => number;
}

/** What replicateWrite decided: the records this node keeps, and how many of the write it does not own. */
export interface ReplicatedWrite {
  local: Selection;
  misdirected: number;
}

export function isReplayed(req: IncomingMessage): boolean {
  return req.headers[REPLAYED_FROM_HEADER.toLowerCase()] !== undefined;
}

/**
 * Journals the other owners' records and says which this node keeps (null: all of them, and the
 * write is not routed: no replication, or a replayed write). Counts the write in `received`.
 */
export function replicateWrite(node: NodeContext, req: IncomingMessage, kind: DataType, w: WriteShape): ReplicatedWrite | null {
  const repl = node.replication;
  if (!repl) return null;
  if (isReplayed(req)) {
    repl.received.peers += w.count;
    return null;
  }
  const routes = repl.routeRecords(w.count, () => w.series, w.seriesOf);
  const journaledAt = node.config.now();
  try {
    for (const [peerId, selection] of routes.peers) {
      const { pieces, oldest, records } = peerShare(w, selection);
      repl.journal(peerId, { kind, journaledAt, oldestOffset: oldest, records }, pieces);
    }
  } catch (err) {
    if (!isDiskFull(err)) throw err;
    throw new ProtocolError(
      507,
      'disk_full',
      "the node cannot journal this write for the metric's other owners: its disk is full. The write is not acknowledged (some owners may still receive part of it: retry it whole); free space, then retry",
    );
  }
  repl.received.clients += w.count;
  return { local: routes.local, misdirected: routes.misdirected };
}

/** A peer's records of a write as JSON pieces, one per run of consecutive records, with their oldest time. */
export function peerShare(w: WriteShape, selection: Selection): { pieces: Uint8Array[]; oldest: number; records: number } {
  let oldest = Infinity;
  if (selection === 'all') {
    for (let i = 0; i < w.count; i++) oldest = Math.min(oldest, w.offsetOf(i));
    return { pieces: w.count > 0 ? [w.jsonOf(0, w.count - 1)] : [], oldest, records: w.count };
  }
  const pieces: Uint8Array[] = [];
  for (let r = 0; r < selection.length;) {
    let end = r;
    while (end + 1 < selection.length && selection[end + 1] === selection[end]! + 1) end++;
    pieces.push(w.jsonOf(selection[r]!, selection[end]!));
    for (let j = r; j <= end; j++) oldest = Math.min(oldest, w.offsetOf(selection[j]!));
    r = end + 1;
  }
  return { pieces, oldest, records: selection.length };
}

/**
 * Records from..to of a JSON array body, as its own bytes: every record is the bytes between the
 * brackets, a run of them a slice from the first one's start to the last one's end (`spans`, or
 * found in the body the first time a run is asked for). A body whose records cannot be found
 * (never so for one JSON.parse took as this array) has them encoded again from `encode`.
 */
function bodyRecords(body: Buffer, count: number, spans: Uint32Array | null, encode: (from: number, to: number) => string): WriteShape['jsonOf'] {
  let found = spans;
  return (from, to) => {
    if (from === 0 && to === count - 1) return arrayInner(body);
    found ??= arrayElementSpans(body, count);
    return found ? body.subarray(found[2 * from], found[2 * to + 1]) : Buffer.from(encode(from, to));
  };
}

/** The shape of a packed write (nnt fast path): a run of records is a slice of the body. */
export function packedShape(p: ParsedNnt, body: Buffer): WriteShape {
  const e = p.entries;
  const count = e.length / LOG_ENTRY;
  return {
    count,
    series: p.series,
    seriesOf: (i) => e[i * LOG_ENTRY]!,
    offsetOf: (i) => e[i * LOG_ENTRY + 1]!,
    jsonOf: bodyRecords(body, count, p.spans, () => {
      throw new Error('a plain nnt body whose records cannot be found again');
    }),
  };
}

/**
 * The shape of validated records (the general path: text, histogram, and nnt bodies the fast path
 * does not take): each record sent on as the bytes the client sent. `items` are the parsed
 * records, encoded again only should the body not show them.
 */
export function recordsShape(body: Buffer, items: readonly unknown[], records: ReadonlyArray<{ id: string; metric: string; offset: number }>): WriteShape {
  // The series are found only when asked for: a ring where every node owns every metric never asks.
  let found: { series: WriteSeries; of: Int32Array } | null = null;
  const seriesOfRecords = (): { series: WriteSeries; of: Int32Array } => {
    if (found) return found;
    const series: WriteSeries = { id: [], metric: [] };
    const index = new Map<string, number>();
    const of = new Int32Array(records.length);
    records.forEach((r, i) => {
      const key = `${r.id.toLowerCase()}\n${r.metric}`;
      let k = index.get(key);
      if (k === undefined) {
        index.set(key, (k = series.id.length));
        series.id.push(r.id);
        series.metric.push(r.metric);
      }
      of[i] = k;
    });
    return (found = { series, of });
  };
  return {
    count: records.length,
    get series() {
      return seriesOfRecords().series;
    },
    seriesOf: (i) => seriesOfRecords().of[i]!,
    jsonOf: bodyRecords(body, records.length, null, (from, to) =>
      items
        .slice(from, to + 1)
        .map((item) => JSON.stringify(item))
        .join(','),
    ),
    offsetOf: (i) => records[i]!.offset,
  };
}

/** The records a selection names (all of them: the same write). */
export function selectPacked(p: PackedWrite, keep: Selection): PackedWrite {
  return keep === 'all' ? p : subsetPacked(p, keep);
}

/** The records `keep` of a packed write (the fast path has no parts), with only their series. */
export function subsetPacked(p: PackedWrite, keep: readonly number[]): PackedWrite {
  const entries = new Float64Array(keep.length * LOG_ENTRY);
  const series: WriteSeries = { id: [], metric: [] };
  const renumber = new Map<number, number>();
  keep.forEach((i, j) => {
    const from = i * LOG_ENTRY;
    entries.set(p.entries.subarray(from, from + LOG_ENTRY), j * LOG_ENTRY);
    const k = p.entries[from]!;
    let nk = renumber.get(k);
    if (nk === undefined) {
      renumber.set(k, (nk = series.id.length));
      series.id.push(p.series.id[k]!);
      series.metric.push(p.series.metric[k]!);
    }
    entries[j * LOG_ENTRY] = nk;
  });
  return { entries, series, parts: null };
}
