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
  const routes = repl.routeRecords(w.count, w.series, w.seriesOf);
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
 * The shape of a packed write (nnt fast path). With the records' spans in `body`, a run of them is
 * a slice of it; without, each record is spelled out from its numbers.
 */
export function packedShape(p: ParsedNnt, body: Uint8Array): WriteShape {
  const e = p.entries;
  const spans = p.spans;
  return {
    count: e.length / LOG_ENTRY,
    series: p.series,
    seriesOf: (i) => e[i * LOG_ENTRY]!,
    offsetOf: (i) => e[i * LOG_ENTRY + 1]!,
    jsonOf: spans ? (from, to) => body.subarray(spans[2 * from], spans[2 * to + 1]) : (from, to) => Buffer.from(spelledOut(p, from, to)),
  };
}

function spelledOut(p: PackedWrite, from: number, to: number): string {
  const e = p.entries;
  const out: string[] = [];
  for (let i = from; i <= to; i++) {
    const o = i * LOG_ENTRY;
    const k = e[o]!;
    out.push(
      `{"id":"${p.series.id[k]!}","metric":${JSON.stringify(p.series.metric[k]!)},"offset":${e[o + 1]},"count":${e[o + 2]},"value":${e[o + 4]},"stddev":${e[o + 5]},"derivative":${e[o + 6]},"derivative_stddev":${e[o + 7]},"counter":${e[o + 8]},"counter_stddev":${e[o + 9]}}`,
    );
  }
  return out.join(',');
}

/** The shape of validated records (the general path): each record sent on as the client spelled it. */
export function recordsShape(items: readonly unknown[], records: ReadonlyArray<{ id: string; metric: string; offset: number }>): WriteShape {
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
  return {
    count: records.length,
    series,
    seriesOf: (i) => of[i]!,
    jsonOf: (from, to) =>
      Buffer.from(
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
