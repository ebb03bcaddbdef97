/**
 * A `dispatch` read (read's default engine) of a numeric span fills the buckets a sweep of that
 * span removed back from the raw records, when the sweep kept them (only a sweep of every span
 * deletes raw records): old data the operator believes swept still shows. The reference node says
 * per span how far its sweeps went (`swept_before`, `raw_swept_before` in GET /sweep_delete); this
 * names the rows of an answer that lie between the two.
 */
import type { SweepStatus } from '../../../protocol/index.js';
import { describeTime } from '../../time.js';

/** Rows that need no object each: their bucket starts (ms) and whether each has a value. */
export interface FilledRows {
  count: number;
  timestampMs(i: number): number;
  hasValue(i: number): boolean;
}

/** The warning for the rows of span `spanS` a dispatch read filled from raw records, or null. */
export function sweptFillWarning(status: SweepStatus | null, spanS: number, rows: FilledRows, node: string): string | null {
  const cut = status?.nnt.sweptBefore?.[spanS];
  if (cut === undefined) return null;
  const raw = status!.nnt.rawSweptBefore ?? 0;
  let filled = 0;
  let oldest = Infinity;
  for (let i = 0; i < rows.count; i++) {
    const ts = rows.timestampMs(i) / 1000;
    if (ts >= raw && ts < cut && rows.hasValue(i)) {
      filled++;
      oldest = Math.min(oldest, ts);
    }
  }
  if (filled === 0) return null;
  return (
    `${filled} bucket(s) of span ${spanS}s from ${describeTime(oldest * 1000)} on are older than ${node}'s last sweep of that span ` +
    `(before ${describeTime(cut * 1000)}): its rollup no longer holds them, this dispatch read filled them from the raw records the sweep kept; ` +
    '--engine nnt reads only what the rollup keeps (a sweep of every span deletes the raw records)'
  );
}
