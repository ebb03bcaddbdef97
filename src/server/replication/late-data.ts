/**
 * Late data: records older than the cut-off of the node's last sweep of their type that were
 * stored after that sweep began (replayed by a peer, or written by a client). Sweeps are not
 * journaled to other nodes, so a peer's late replay can put back data a sweep just deleted; the
 * node says so in its sweep status (`last_late_records`, `last_late_oldest`). Kept in memory, like
 * the rest of the sweep records: a restarted node starts over.
 */
import type { DataType } from '../../protocol/index.js';

interface Late {
  cutoff: number;
  records: number;
  oldest: number | null;
}

export class LateData {
  private readonly byType = new Map<DataType, Late>();

  /** A sweep of these types with this cut-off (epoch seconds) began: counting starts over. */
  sweepStarted(types: readonly DataType[], before: number): void {
    for (const t of types) this.byType.set(t, { cutoff: before, records: 0, oldest: null });
  }

  /** The cut-off of the last sweep of a type, if any: records below it are late. */
  cutoff(type: DataType): number | undefined {
    return this.byType.get(type)?.cutoff;
  }

  /** Records stored now; `offsetOf(i)` the time of record i (epoch seconds). */
  note(type: DataType, count: number, offsetOf: (i: number) => number): void {
    const late = this.byType.get(type);
    if (!late) return;
    for (let i = 0; i < count; i++) {
      const ts = offsetOf(i);
      if (ts < late.cutoff) {
        late.records++;
        if (late.oldest === null || ts < late.oldest) late.oldest = ts;
      }
    }
  }

  /** The status attributes of a type: `last_late_records` (a count, as a string) and `last_late_oldest` (epoch seconds, as a string). */
  attributes(type: DataType): Record<string, string> {
    const late = this.byType.get(type);
    if (!late) return {};
    return { last_late_records: String(late.records), ...(late.oldest !== null ? { last_late_oldest: String(late.oldest) } : {}) };
  }
}
