/**
 * The records pipeline as it was before the client-speed work (commit 9f0e6aa), kept verbatim as a
 * test oracle: the faster code must produce exactly what this produced, byte for byte.
 */
import { validateNntRecord } from '../../../src/protocol/index.js';
import { JsonArraySplitter, type RawRecord } from './splitter-v0.js';

/** A position in an input: just past record `record`, at `byte` on `line`. */
export interface Position {
  record: number;
  byte: number;
  line: number;
}

/** An invalid record as it goes to the rejects file (itself valid input for a later replay). */
export interface RejectEntry {
  file: string;
  /** 1-based record number in the input. */
  record: number;
  line?: number;
  /** `field: reason`. */
  error: string;
  /** The record as read (its text when it was not even JSON). */
  input: unknown;
  /** The node that refused it, when it was a node and not the local check. */
  node?: string;
}

/** Records ready to send, serialised once, with enough bookkeeping to map a node's complaint back to the input. */
export interface Batch {
  source: string;
  /** Per-input sequence number, 0-based, in reading order. */
  seq: number;
  /**
   * The request body, serialised once as UTF-8 bytes: a JSON array of the record texts as read
   * (or the `input` of a rejects-file line). Bytes rather than a string so the per-record
   * strings die young and the body is handed to the socket without another copy.
   * `batchTexts` recovers the records on the rare paths that need them (a node refusing one).
   */
  body: Buffer;
  /** Records in the body. */
  count: number;
  /** Input record numbers, in body order. */
  records: number[];
  /** Input line numbers, in body order. */
  lines: number[];
  /** Position just past the last record this batch accounts for (including rejected ones before it). */
  end: Position;
}

/** The JSON array body of some record texts. */
export function batchBody(texts: readonly string[]): Buffer {
  return Buffer.from(`[${texts.join(',')}]`);
}

/** The record texts of a body, split again (only needed when a node refuses part of a batch). */
export function batchTexts(body: Uint8Array): string[] {
  const splitter = new JsonArraySplitter('(batch)');
  return [...splitter.push(body), ...splitter.end()].map((r) => r.text);
}

/**
 * Body buffers handed back once their batch is settled, so a long replay reuses a handful of
 * buffers instead of leaving hundreds of megabytes of dead ones for the garbage collector.
 */
export class BodyPool {
  private readonly free: Buffer[] = [];
  constructor(private readonly keep = 8) {}
  take(size: number): Buffer {
    for (let i = this.free.length - 1; i >= 0; i--) {
      const b = this.free[i]!;
      if (b.length >= size) {
        this.free.splice(i, 1);
        return b;
      }
    }
    return Buffer.allocUnsafeSlow(size);
  }
  /** Returns a batch's body for reuse. Only once nothing (no request, no retry) can still read it. */
  give(body: Buffer): void {
    if (this.free.length >= this.keep || body.byteOffset !== 0) return;
    this.free.push(Buffer.from(body.buffer, 0, body.buffer.byteLength));
  }
}

export interface BatcherOptions {
  /** Where body buffers come from (shared across inputs); a private pool when absent. */
  pool?: BodyPool;
  source: string;
  batchSize: number;
  batchBytes: number;
  smallestSpan?: number;
  /** Where this input starts (resume). */
  start?: Position;
}

export type Added = { kind: 'ok'; full?: Batch } | { kind: 'reject'; reject: RejectEntry; full?: Batch };

function isObject(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

/** A rejects-file line (`{file, record, error, input}`): replaying it means replaying its `input`. */
export function isRejectLine(v: unknown): v is { input: unknown; error: unknown; record: unknown } {
  return isObject(v) && 'input' in v && 'error' in v && 'record' in v && !('metric' in v);
}

/**
 * Validates records one by one and packs the valid ones into batches bounded by count and
 * bytes. Each batch carries the input position it completes, so acknowledgements can move a
 * resume point forward.
 */
export class Batcher {
  private buf: Buffer;
  private used = 0;
  private count = 0;
  private records: number[] = [];
  private lines: number[] = [];
  private seq = 0;
  private pos: Position;
  private readonly opts: BatcherOptions;
  private readonly pool: BodyPool;

  constructor(opts: BatcherOptions) {
    this.opts = opts;
    this.pool = opts.pool ?? new BodyPool();
    this.pos = opts.start ?? { record: 0, byte: 0, line: 1 };
    this.buf = this.fresh(0);
  }

  /** A body buffer: room for a full batch (untouched pages cost no memory), or for one oversized record. */
  private fresh(atLeast: number): Buffer {
    return this.pool.take(Math.max(atLeast, Math.min(this.opts.batchBytes, 64 * 1024 * 1024) + 2));
  }

  /** Validates one record; returns a reject or nothing, and a batch when this record completed one. */
  add(raw: RawRecord): Added {
    let value: unknown;
    let text = raw.text;
    try {
      value = JSON.parse(text);
    } catch (err) {
      this.pos = { record: raw.record, byte: raw.byteEnd, line: raw.lineEnd };
      return {
        kind: 'reject',
        reject: { file: this.opts.source, record: raw.record, line: raw.line, error: `(record): not valid JSON: ${(err as Error).message}`, input: text },
      };
    }
    if (isRejectLine(value)) {
      value = value.input;
      text = JSON.stringify(value);
    }
    const checked = validateNntRecord(value, this.opts.smallestSpan === undefined ? {} : { smallestSpan: this.opts.smallestSpan });
    if (!checked.ok) {
      this.pos = { record: raw.record, byte: raw.byteEnd, line: raw.lineEnd };
      return {
        kind: 'reject',
        reject: { file: this.opts.source, record: raw.record, line: raw.line, error: `${checked.issue.field}: ${checked.issue.reason}`, input: value },
      };
    }
    let full: Batch | undefined;
    const size = Buffer.byteLength(text);
    // `[` or `,` before, `]` after.
    if (this.count > 0 && this.used + size + 2 > this.opts.batchBytes) full = this.flush();
    if (this.used + size + 2 > this.buf.length) {
      const bigger = this.fresh(this.used + size + 2);
      this.buf.copy(bigger, 0, 0, this.used);
      this.buf = bigger;
    }
    this.buf[this.used++] = this.count === 0 ? 0x5b : 0x2c;
    this.used += this.buf.write(text, this.used);
    this.count++;
    this.records.push(raw.record);
    this.lines.push(raw.line);
    this.pos = { record: raw.record, byte: raw.byteEnd, line: raw.lineEnd };
    if (full === undefined && this.count >= this.opts.batchSize) full = this.flush();
    return full ? { kind: 'ok', full } : { kind: 'ok' };
  }

  /** Records validated but not yet in a batch. */
  get pendingCount(): number {
    return this.count;
  }

  /**
   * Closes the current batch. At the end of an input call it even when it holds no records:
   * the empty batch still carries the position past trailing rejected records.
   */
  flush(): Batch {
    let body: Buffer;
    if (this.count === 0) body = Buffer.from('[]');
    else {
      this.buf[this.used++] = 0x5d;
      body = this.buf.subarray(0, this.used);
      this.buf = this.fresh(0);
    }
    const batch: Batch = { source: this.opts.source, seq: this.seq++, body, count: this.count, records: this.records, lines: this.lines, end: this.pos };
    this.used = 0;
    this.count = 0;
    this.records = [];
    this.lines = [];
    return batch;
  }
}
