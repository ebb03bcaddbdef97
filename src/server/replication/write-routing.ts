/**
 * The replication step of a write: which of its records this node keeps, and the other owners'
 * share journaled before the write is acknowledged. A write a peer replays (it carries
 * REPLAYED_FROM_HEADER) is kept whole and never journaled again.
 */
import type { IncomingMessage } from 'node:http';
import { ProtocolError, REPLAYED_FROM_HEADER, type DataType } from '../../protocol/index.js';
import { LOG_ENTRY, type PackedWrite, type WriteSeries } from '../packed-write.js';
import type { NodeContext } from '../routes/context.js';
import { isDiskFull } from '../storage/disk-full.js';

export interface WriteShape {
  count: number;
  seriesOf: (i: number) => { key: number | string; uuid: string; metric: string };
  /** Record i as the JSON a peer's write endpoint takes. */
  jsonOf: (i: number) => string;
  offsetOf: (i: number) => number;
}

export function isReplayed(req: IncomingMessage): boolean {
  return req.headers[REPLAYED_FROM_HEADER.toLowerCase()] !== undefined;
}

/**
 * Journals the other owners' records and returns the indexes this node keeps (null: all of them:
 * no replication, or a replayed write). Counts the write in `received`.
 */
export function replicateWrite(node: NodeContext, req: IncomingMessage, kind: DataType, w: WriteShape): number[] | null {
  const repl = node.replication;
  if (!repl) return null;
  if (isReplayed(req)) {
    repl.received.peers += w.count;
    return null;
  }
  const routes = repl.routeRecords(w.count, w.seriesOf);
  const journaledAt = node.config.now();
  try {
    for (const [peerId, idx] of routes.peers) {
      let oldest = Infinity;
      for (const i of idx) oldest = Math.min(oldest, w.offsetOf(i));
      repl.journal(peerId, { kind, journaledAt, oldestOffset: oldest, records: idx.length, json: idx.map(w.jsonOf).join(',') });
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
  return routes.local;
}

/** The shape of a packed write (nnt fast path) for replicateWrite. */
export function packedShape(p: PackedWrite): WriteShape {
  const e = p.entries;
  return {
    count: e.length / LOG_ENTRY,
    seriesOf: (i) => {
      const k = e[i * LOG_ENTRY]!;
      return { key: k, uuid: p.series.id[k]!, metric: p.series.metric[k]! };
    },
    offsetOf: (i) => e[i * LOG_ENTRY + 1]!,
    jsonOf: (i) => {
      const o = i * LOG_ENTRY;
      const k = e[o]!;
      return `{"id":"${p.series.id[k]!}","metric":${JSON.stringify(p.series.metric[k]!)},"offset":${e[o + 1]},"count":${e[o + 2]},"value":${e[o + 4]},"stddev":${e[o + 5]},"derivative":${e[o + 6]},"derivative_stddev":${e[o + 7]},"counter":${e[o + 8]},"counter_stddev":${e[o + 9]}}`;
    },
  };
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
