/**
 * The ingest log: how a numeric write is made durable before it is acknowledged. A write is one
 * frame appended to a plain file, whatever the number of series it touches; the chunks are
 * updated later, many writes at a time (see SqliteStore.flush), so a chunk is rewritten once per
 * flush instead of once per write. An append reaches the OS before the 200, so it survives a
 * crash of the node process, the same promise as SQLite's WAL with synchronous=NORMAL.
 *
 * The log is a file per generation (`nnt-<generation>.log`): `[header: magic, version,
 * generation][frames...]`, a frame `[magic, payload bytes, crc32][payload]`. A flush starts a
 * new generation for the writes that arrive meanwhile, applies the ended one, records it as
 * applied in its last transaction, and then deletes its file; a crash between the two leaves a
 * file the next start skips. A torn last frame fails its length or checksum and is ignored: it
 * was never acknowledged.
 *
 * Payload: Float64 numbers `[n, n × LOG_ENTRY, then per record with parts: index, period,
 * pieces, 7 × pieces]`. A log entry is the series id followed by the raw chunk entry (chunks.ts).
 */
import { closeSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
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

/** One logged write: its records in arrival order. */
export interface LoggedBatch {
  entries: Float64Array;
  /** Parts by record index, for the records that have them. */
  parts: Map<number, StoredParts> | null;
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
    if (!byMetric) index.set(r.id, (byMetric = new Map()));
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

export function encodeLog(entries: Float64Array, parts: Map<number, StoredParts> | null): Buffer {
  const n = entries.length / LOG_ENTRY;
  let size = 1 + entries.length;
  if (parts) for (const p of parts.values()) size += 3 + p.blob.byteLength / 8;
  const out = new Float64Array(size);
  out[0] = n;
  out.set(entries, 1);
  if (parts) {
    let o = 1 + entries.length;
    for (const [i, p] of [...parts].sort((a, b) => a[0] - b[0])) {
      const pieces = new Float64Array(p.blob.buffer, p.blob.byteOffset, p.blob.byteLength / 8);
      out[o++] = i;
      out[o++] = p.period;
      out[o++] = pieces.length / 7;
      out.set(pieces, o);
      o += pieces.length;
    }
  }
  return Buffer.from(out.buffer);
}

export function decodeLog(blob: Buffer): LoggedBatch {
  const all = new Float64Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
  const n = all[0]!;
  const entries = all.subarray(1, 1 + n * LOG_ENTRY);
  let parts: Map<number, StoredParts> | null = null;
  for (let o = 1 + n * LOG_ENTRY; o < all.length; ) {
    const i = all[o]!;
    const period = all[o + 1]!;
    const len = all[o + 2]! * 7;
    const pieces = all.slice(o + 3, o + 3 + len);
    (parts ??= new Map()).set(i, { period, blob: Buffer.from(pieces.buffer) });
    o += 3 + len;
  }
  return { entries, parts };
}

/** Parts as Float64 numbers, 7 per piece in NUMERIC_FIELDS order. */
export function encodeParts(pieces: readonly Aggregate[]): Buffer {
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

const FILE_MAGIC = 0x4c4e5354; // "TSNL"
const FRAME_MAGIC = 0x46524d31;
const VERSION = 1;
const HEADER = 16;
const FRAME_HEADER = 12;

/** The log files of one data directory. Not safe for two processes (the store's lock guards it). */
export class IngestLog {
  private fd: number;
  private size = HEADER;
  /** The generation being appended to. */
  generation: number;
  /** What earlier processes logged and the database has not applied, oldest first (read once, at open). */
  readonly pendingPayloads: Buffer[] = [];

  /**
   * Opens the log in `dir`. `applied` is the last generation the database has applied: files
   * of later generations are read into pendingPayloads, older ones deleted, and a new
   * generation begins.
   */
  constructor(
    private readonly dir: string,
    applied: number,
  ) {
    let last = applied;
    for (const generation of logGenerations(dir)) {
      if (generation <= applied) {
        rmSync(this.pathOf(generation), { force: true });
        continue;
      }
      const frames = readFrames(this.pathOf(generation), generation);
      // A file without a whole frame holds nothing acknowledged (a start without writes leaves one).
      if (frames.length === 0) rmSync(this.pathOf(generation), { force: true });
      this.pendingPayloads.push(...frames);
      last = Math.max(last, generation);
    }
    this.generation = last + 1;
    this.fd = this.create(this.generation);
  }

  private pathOf(generation: number): string {
    return join(this.dir, `nnt-${generation}.log`);
  }

  private create(generation: number): number {
    const fd = openSync(this.pathOf(generation), 'w');
    const head = Buffer.alloc(HEADER);
    head.writeUInt32LE(FILE_MAGIC, 0);
    head.writeUInt32LE(VERSION, 4);
    head.writeDoubleLE(generation, 8);
    try {
      writeAll(fd, head, 0);
    } catch (err) {
      closeSync(fd);
      throw err;
    }
    this.size = HEADER;
    return fd;
  }

  /** Appends one write; when this returns the write survives a crash of this process. */
  append(payload: Buffer): void {
    const frame = Buffer.allocUnsafe(FRAME_HEADER);
    frame.writeUInt32LE(FRAME_MAGIC, 0);
    frame.writeUInt32LE(payload.byteLength, 4);
    frame.writeUInt32LE(crc32(payload), 8);
    const before = this.size;
    try {
      writeAll(this.fd, frame, before);
      writeAll(this.fd, payload, before + FRAME_HEADER);
    } catch (err) {
      // No half frame in front of the next one. The writes name their position: the file
      // offset stays past a truncated end, and a write there would leave a hole that ends replay.
      ftruncateSync(this.fd, before);
      throw err;
    }
    this.size = before + FRAME_HEADER + payload.byteLength;
  }

  /** Starts the next generation; returns the one that ends (everything logged so far). */
  rotate(): number {
    const ended = this.generation;
    const fd = this.create(ended + 1);
    closeSync(this.fd);
    this.fd = fd;
    this.generation = ended + 1;
    return ended;
  }

  /** Deletes the files of every generation up to `generation` (the database has applied them). */
  discardThrough(generation: number): void {
    for (const g of logGenerations(this.dir)) if (g <= generation && g !== this.generation) rmSync(this.pathOf(g), { force: true });
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The generations of the log files in `dir`, ascending. */
function logGenerations(dir: string): number[] {
  return readdirSync(dir)
    .map((name) => /^nnt-(\d+)\.log$/.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((x, y) => x - y);
}

/** The whole frames of one log file; a torn last frame (never acknowledged) ends it. */
function readFrames(path: string, generation: number): Buffer[] {
  const file = readFileSync(path);
  if (file.length < HEADER || file.readUInt32LE(0) !== FILE_MAGIC) return [];
  if (file.readUInt32LE(4) !== VERSION) throw new Error(`${path}: ingest log version ${file.readUInt32LE(4)}, expected ${VERSION}`);
  if (file.readDoubleLE(8) !== generation) throw new Error(`${path}: holds generation ${file.readDoubleLE(8)}, not ${generation}`);
  const out: Buffer[] = [];
  for (let at = HEADER; at + FRAME_HEADER <= file.length; ) {
    const bytes = file.readUInt32LE(at + 4);
    if (file.readUInt32LE(at) !== FRAME_MAGIC || at + FRAME_HEADER + bytes > file.length) break;
    const payload = file.subarray(at + FRAME_HEADER, at + FRAME_HEADER + bytes);
    if (crc32(payload) !== file.readUInt32LE(at + 8)) break;
    out.push(Buffer.from(payload));
    at += FRAME_HEADER + bytes;
  }
  return out;
}

/** A short write (disk full) is an error, not a partial success. */
function writeAll(fd: number, buf: Buffer, position: number): void {
  const n = writeSync(fd, buf, 0, buf.byteLength, position);
  if (n !== buf.byteLength) throw new Error(`ingest log: wrote ${n} of ${buf.byteLength} bytes (disk full?)`);
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
