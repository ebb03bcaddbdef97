import { z } from 'zod';
import { DATA_TYPES, type DataType } from './types.js';

/**
 * `GET /sweep_delete` on the wire: every attribute is a string (`"running":"true"`).
 * Unknown attributes from newer nodes are kept, not rejected.
 */
const wireTypeStatusSchema = z.record(z.string(), z.string()).refine((o) => o.running === 'true' || o.running === 'false', {
  message: 'running must be the string "true" or "false"',
});
export const wireSweepStatusSchema = z.looseObject({
  nnt: wireTypeStatusSchema,
  text: wireTypeStatusSchema,
  histogram: wireTypeStatusSchema,
});
export type WireSweepStatus = Record<DataType, Record<string, string>> & Record<string, unknown>;

/** One data type's sweep status, with string booleans and numbers normalised. */
export interface TypeStatus {
  running: boolean;
  /** Delete time in epoch seconds (present while running). */
  timestamp?: number;
  current_uuid?: string;
  current_metric?: string;
  /** `"all"` or the comma list of spans being deleted. */
  rollups?: string;
  /** Set by `GET /sweep_delete/cancel`. */
  cancelling?: boolean;
}
export type SweepStatus = Record<DataType, TypeStatus>;

/** Normalises a validated wire status into typed values. */
export function normaliseStatus(wire: z.infer<typeof wireSweepStatusSchema>): SweepStatus {
  const out = {} as SweepStatus;
  for (const type of DATA_TYPES) {
    const w = wire[type];
    const s: TypeStatus = { running: w.running === 'true' };
    if (w.timestamp !== undefined && /^\d+$/.test(w.timestamp)) s.timestamp = Number(w.timestamp);
    if (w.current_uuid !== undefined) s.current_uuid = w.current_uuid;
    if (w.current_metric !== undefined) s.current_metric = w.current_metric;
    if (w.rollups !== undefined) s.rollups = w.rollups;
    if (w.cancelling !== undefined) s.cancelling = w.cancelling === 'true';
    out[type] = s;
  }
  return out;
}

/** The inverse, used by the node: strings everywhere, type-specific attributes only while running. */
export function wireStatus(status: SweepStatus): Record<DataType, Record<string, string>> {
  const out = {} as Record<DataType, Record<string, string>>;
  for (const type of DATA_TYPES) {
    const s = status[type];
    const w: Record<string, string> = { running: String(s.running) };
    if (s.running) {
      if (s.timestamp !== undefined) w.timestamp = String(s.timestamp);
      if (s.current_uuid !== undefined) w.current_uuid = s.current_uuid;
      if (s.current_metric !== undefined) w.current_metric = s.current_metric;
      if (s.rollups !== undefined) w.rollups = s.rollups;
    }
    if (s.cancelling !== undefined) w.cancelling = String(s.cancelling);
    out[type] = w;
  }
  return out;
}

export function isIdle(status: SweepStatus, types: readonly DataType[] = DATA_TYPES): boolean {
  return types.every((t) => !status[t].running);
}
