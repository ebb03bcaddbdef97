import { DATA_TYPES, type DataType } from './types.js';
import { isJsonObject } from './json-object.js';

/** `GET /sweep_delete` on the wire (checked by wireSweepStatusSchema, schemas.ts): every attribute a string. */
export type WireSweepStatus = Record<DataType, Record<string, string>> & Record<string, unknown>;

/** One type's wire status: string attributes only, `running` "true" or "false". */
function isWireTypeStatus(v: unknown): boolean {
  if (!isJsonObject(v) || (v.running !== 'true' && v.running !== 'false')) return false;
  for (const key in v) if (typeof v[key] !== 'string') return false;
  return true;
}

/**
 * The same check as wireSweepStatusSchema (schemas.ts), by hand: a `read` asks for the status
 * beside every rollup, and loading zod for it would cost the read more than the answer does.
 */
export function isWireSweepStatus(json: unknown): json is WireSweepStatus {
  return isJsonObject(json) && isWireTypeStatus(json.nnt) && isWireTypeStatus(json.text) && isWireTypeStatus(json.histogram);
}

/** How a sweep ended for one type, as the reference node records it. */
export const SWEEP_RESULTS = ['completed', 'cancelled', 'replaced', 'failed'] as const;
export type SweepResult = (typeof SWEEP_RESULTS)[number];

/**
 * The reference node's record of the last sweep of one type (extension attributes `last_*`, shown
 * while that type is idle). Production nodes send none of them: clients use them when present and
 * never require them.
 */
export interface LastSweep {
  /** `last_timestamp`: the delete time of that sweep, epoch seconds. */
  timestamp?: number;
  /** `last_rollups`: `"all"` or the comma list of spans (nnt, histogram). */
  rollups?: string;
  /** `last_result`; absent when the node sent a value this client does not know. */
  result?: SweepResult;
  /** `last_error`: the node's error, for `failed`. */
  error?: string;
  /** `last_replaced_by`: the sweep that replaced it, in words, for `replaced`. */
  replacedBy?: string;
  /** `last_finished`: when it ended, epoch milliseconds. */
  finished?: number;
  /** `last_request_id`: the client's id for that sweep's DELETE, when it sent one. */
  requestId?: string;
  /** `last_late_records` (a replicating node): records below the cut-off that arrived after that sweep began. */
  lateRecords?: number;
  /** `last_late_oldest`: the oldest such record's time, epoch seconds. */
  lateOldest?: number;
}

/** One data type's sweep status, with string booleans and numbers normalised. */
export interface TypeStatus {
  running: boolean;
  /** Delete time in epoch seconds (present while running). */
  timestamp?: number;
  current_uuid?: string;
  current_metric?: string;
  /** `"all"` or the comma list of spans being deleted. */
  rollups?: string;
  /** Reference-node extension, while running: the client's id for the DELETE that started it. */
  request_id?: string;
  /** Set by `GET /sweep_delete/cancel`. */
  cancelling?: boolean;
  /**
   * Reference-node extension, on every type, running or not: an id the node process picks when it
   * starts. A node that sends it keeps records of its sweeps (`last`); a new value means it restarted.
   */
  instance?: string;
  /** Reference-node extension: the last sweep of this type, while idle. */
  last?: LastSweep;
  /**
   * Reference-node extension (nnt), `swept_before` (`60:1795067853,300:1793080653`): per span, the
   * latest delete time a sweep of it had; that span's rollup holds nothing before it.
   */
  sweptBefore?: Record<number, number>;
  /** Reference-node extension (nnt), `raw_swept_before`: the latest sweep of every span; no raw record is older. */
  rawSweptBefore?: number;
}
export type SweepStatus = Record<DataType, TypeStatus>;

const EPOCH_SECONDS = /^\d{1,12}$/;
const EPOCH_WITH_MILLIS = /^\d{1,12}(\.\d{1,3})?$/;

function lastOf(w: Record<string, string>): LastSweep | undefined {
  const last: LastSweep = {};
  if (w.last_timestamp !== undefined && EPOCH_SECONDS.test(w.last_timestamp)) last.timestamp = Number(w.last_timestamp);
  if (w.last_rollups !== undefined) last.rollups = w.last_rollups;
  if (w.last_result !== undefined && (SWEEP_RESULTS as readonly string[]).includes(w.last_result)) last.result = w.last_result as SweepResult;
  if (w.last_error !== undefined) last.error = w.last_error;
  if (w.last_replaced_by !== undefined) last.replacedBy = w.last_replaced_by;
  if (w.last_finished !== undefined && EPOCH_WITH_MILLIS.test(w.last_finished)) last.finished = Math.round(Number(w.last_finished) * 1000);
  if (w.last_request_id !== undefined) last.requestId = w.last_request_id;
  if (w.last_late_records !== undefined && /^\d{1,15}$/.test(w.last_late_records)) last.lateRecords = Number(w.last_late_records);
  if (w.last_late_oldest !== undefined && EPOCH_SECONDS.test(w.last_late_oldest)) last.lateOldest = Number(w.last_late_oldest);
  return Object.keys(last).length ? last : undefined;
}

/** `60:1795067853,300:1793080653` into {60: ..., 300: ...}; undefined when absent or not of that form. */
function sweptBeforeOf(v: string | undefined): Record<number, number> | undefined {
  if (v === undefined || !/^\d{1,9}:\d{1,12}(,\d{1,9}:\d{1,12}){0,63}$/.test(v)) return undefined;
  return Object.fromEntries(v.split(',').map((p) => p.split(':').map(Number) as [number, number]));
}

/** Normalises a validated wire status into typed values. */
export function normaliseStatus(wire: WireSweepStatus): SweepStatus {
  const out = {} as SweepStatus;
  for (const type of DATA_TYPES) {
    const w = wire[type];
    const s: TypeStatus = { running: w.running === 'true' };
    if (w.timestamp !== undefined && /^\d+$/.test(w.timestamp)) s.timestamp = Number(w.timestamp);
    if (w.current_uuid !== undefined) s.current_uuid = w.current_uuid;
    if (w.current_metric !== undefined) s.current_metric = w.current_metric;
    if (w.rollups !== undefined) s.rollups = w.rollups;
    if (w.request_id !== undefined) s.request_id = w.request_id;
    if (w.cancelling !== undefined) s.cancelling = w.cancelling === 'true';
    if (w.instance !== undefined && w.instance !== '') s.instance = w.instance;
    const last = lastOf(w);
    if (last) s.last = last;
    const swept = sweptBeforeOf(w.swept_before);
    if (swept) s.sweptBefore = swept;
    if (w.raw_swept_before !== undefined && EPOCH_SECONDS.test(w.raw_swept_before)) s.rawSweptBefore = Number(w.raw_swept_before);
    out[type] = s;
  }
  return out;
}

/** `1700000000.250`: epoch seconds with milliseconds, as `last_finished` carries them. */
function secondsWithMillis(ms: number): string {
  return `${Math.floor(ms / 1000)}.${String(ms % 1000).padStart(3, '0')}`;
}

/**
 * The inverse, used by the node: strings everywhere, type-specific attributes only while running,
 * the record of the last sweep only while idle, the instance id always.
 */
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
      if (s.request_id !== undefined) w.request_id = s.request_id;
    } else if (s.last) {
      const l = s.last;
      if (l.timestamp !== undefined) w.last_timestamp = String(l.timestamp);
      if (l.rollups !== undefined) w.last_rollups = l.rollups;
      if (l.result !== undefined) w.last_result = l.result;
      if (l.error !== undefined) w.last_error = l.error;
      if (l.replacedBy !== undefined) w.last_replaced_by = l.replacedBy;
      if (l.finished !== undefined) w.last_finished = secondsWithMillis(l.finished);
      if (l.requestId !== undefined) w.last_request_id = l.requestId;
      if (l.lateRecords !== undefined) w.last_late_records = String(l.lateRecords);
      if (l.lateOldest !== undefined) w.last_late_oldest = String(l.lateOldest);
    }
    if (s.instance !== undefined) w.instance = s.instance;
    if (s.sweptBefore !== undefined)
      w.swept_before = Object.entries(s.sweptBefore)
        .map(([span, t]) => `${span}:${t}`)
        .join(',');
    if (s.rawSweptBefore !== undefined) w.raw_swept_before = String(s.rawSweptBefore);
    if (s.cancelling !== undefined) w.cancelling = String(s.cancelling);
    out[type] = w;
  }
  return out;
}

export function isIdle(status: SweepStatus, types: readonly DataType[] = DATA_TYPES): boolean {
  return types.every((t) => !status[t].running);
}
