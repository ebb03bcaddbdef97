/**
 * A write's answer, the store's `FourPointResponse` (developer.yaml, /write/nnt, /write/text,
 * /histogram/write): `records` the records taken, `updated` the records written to the store,
 * `misdirected` the records whose metric this node does not own on its ring, `errors` the records
 * that failed. The reference node stores a request whole or not at all (an invalid record is a
 * 400), so on a 200 `updated` is `records` and `errors` is 0; misdirected records are stored too,
 * as the store does, and counted so the sender can see its routing was off.
 */
import type { NodeIdentity } from './identity.js';
import { LOG_ENTRY, type PackedWrite } from './packed-write.js';

export interface WriteCounts {
  records: number;
  updated: number;
  misdirected: number;
  errors: number;
}

/** Whether this node owns a metric; every metric is its own without a ring or when every node holds every metric. */
function ownership(identity: NodeIdentity): ((uuid: string, metric: string) => boolean) | null {
  const ring = identity.ring;
  if (!ring || ring.topology.writeCopies >= ring.topology.nodes.length) return null;
  return (uuid, metric) => ring.ownersOf(uuid, metric).some((n) => n.id === identity.id);
}

/** Misdirected records of a write given as records (each (id, metric) placed once). */
export function misdirectedRecords(identity: NodeIdentity, records: ReadonlyArray<{ id: string; metric: string }>): number {
  const owns = ownership(identity);
  if (!owns) return 0;
  const seen = new Map<string, boolean>();
  let n = 0;
  for (const r of records) {
    const key = `${r.id.toLowerCase()}-${r.metric}`;
    let mine = seen.get(key);
    if (mine === undefined) seen.set(key, (mine = owns(r.id, r.metric)));
    if (!mine) n++;
  }
  return n;
}

/** Misdirected records of a packed numeric write (its distinct series placed once each). */
export function misdirectedPacked(identity: NodeIdentity, write: PackedWrite): number {
  const owns = ownership(identity);
  if (!owns) return 0;
  const mine = write.series.id.map((id, i) => owns(id, write.series.metric[i]!));
  let n = 0;
  for (let at = 0; at < write.entries.length; at += LOG_ENTRY) if (!mine[write.entries[at]!]) n++;
  return n;
}

export function writeAnswer(records: number, misdirected: number): string {
  const counts: WriteCounts = { records, updated: records, misdirected, errors: 0 };
  return JSON.stringify(counts);
}
