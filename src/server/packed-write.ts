/**
 * A numeric write packed for the store: one row of Float64 numbers per record (LOG_ENTRY of them),
 * the distinct series beside it, and the records' `parts`. The HTTP fast path (nnt-body.ts) parses
 * plain bodies straight into this shape; packRecords packs records that went the general way. The
 * same entries, series resolved, are what the ingest log stores (storage/log-payload.ts) and what
 * the store's queues hold until a flush. Pure functions, no I/O.
 *
 * A record's `parts` are stored as Float64 numbers, 7 per piece (encodeParts / decodeParts): in
 * the log, and in the database's nnt_parts table.
 */
import { SCAN_SLOTS, type Aggregate, type NntRecord } from '../protocol/index.js';
import { FLAGS } from './chunks.js';
import type { Agg } from './rollup-math.js';

/** A log entry: the scan layout (protocol/record-scan.ts) with the series in slot 0, then a chunk entry. */
export const LOG_ENTRY = SCAN_SLOTS;

/** A record's `parts`: the piece period and the pieces as Float64 numbers (7 per piece). */
export interface StoredParts {
  period: number;
  blob: Buffer;
}

/** The distinct series of one write; a record's slot 0 holds its index here until the store resolves it. */
export interface WriteSeries {
  id: string[];
  metric: string[];
}

/** A numeric write as the store takes it (see WriteSeries for slot 0). */
export interface PackedWrite {
  entries: Float64Array;
  series: WriteSeries;
  parts: Map<number, StoredParts> | null;
}

/** Packs validated records (the general path; nnt-body.ts packs plain bodies directly). */
export function packRecords(records: readonly NntRecord[]): PackedWrite {
  const entries = new Float64Array(records.length * LOG_ENTRY);
  const series: WriteSeries = { id: [], metric: [] };
  const index = new Map<string, Map<string, number>>();
  let parts: Map<number, StoredParts> | null = null;
  for (let i = 0; i < records.length; i++) {
    const r = records[i]!;
    let byMetric = index.get(r.id);
    if (!byMetric) index.set(r.id, (byMetric = new Map<string, number>()));
    let k = byMetric.get(r.metric);
    if (k === undefined) {
      byMetric.set(r.metric, (k = series.id.length));
      series.id.push(r.id);
      series.metric.push(r.metric);
    }
    const o = i * LOG_ENTRY;
    entries[o] = k;
    entries[o + 1] = r.offset;
    entries[o + 2] = r.count;
    entries[o + 3] = r.parts ? FLAGS.parts : 0;
    entries[o + 4] = r.value;
    entries[o + 5] = r.stddev;
    entries[o + 6] = r.derivative;
    entries[o + 7] = r.derivative_stddev;
    entries[o + 8] = r.counter;
    entries[o + 9] = r.counter_stddev;
    if (r.parts) (parts ??= new Map()).set(i, { period: r.parts[0], blob: encodeParts(r.parts[1]) });
  }
  return { entries, series, parts };
}

/** Parts as Float64 numbers, 7 per piece in NUMERIC_FIELDS order. */
function encodeParts(pieces: readonly Aggregate[]): Buffer {
  const arr = new Float64Array(pieces.length * 7);
  let i = 0;
  for (const p of pieces) {
    arr[i++] = p.count;
    arr[i++] = p.value;
    arr[i++] = p.derivative;
    arr[i++] = p.counter;
    arr[i++] = p.stddev;
    arr[i++] = p.derivative_stddev;
    arr[i++] = p.counter_stddev;
  }
  return Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
}

/** The pieces of a stored parts blob as aggregates (each counts as one record). */
export function decodeParts(blob: Buffer): Agg[] {
  const arr = new Float64Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
  const out: Agg[] = [];
  for (let i = 0; i + 7 <= arr.length; i += 7) {
    out.push({
      count: arr[i]!,
      records: 1,
      value: arr[i + 1]!,
      derivative: arr[i + 2]!,
      counter: arr[i + 3]!,
      stddev: arr[i + 4]!,
      derivative_stddev: arr[i + 5]!,
      counter_stddev: arr[i + 6]!,
    });
  }
  return out;
}
