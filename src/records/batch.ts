import { PlainRecordCheck } from '../protocol/index.js';
import { isJsonObject } from '../protocol/json-object.js';
import { recordIssue, type KindCheck, type RecordKind } from './kinds.js';
import { JsonArraySplitter } from './json-array-splitter.js';
import { SPAN_FIELDS, spanRecord, type RawRecord, type RecordChunk } from './splitter.js';

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
  /**
   * The record's JSON text exactly as read, when it was JSON: the rejects file writes this rather
   * than `JSON.stringify(input)`, which would turn `1e400` into `null`, round integers beyond 2^53
   * and `1.0` to `1`, and so lose the very value a reject is about.
   */
  inputText?: string;
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
  /**
   * Per record (body order), the ring node a rejects-file line says the record is owed to (its
   * `owner`: a write to the owners put it there for that node alone); absent when no line had one.
   */
  owedTo?: Array<string | undefined>;
  /**
   * With the batcher's `ranges`: per record (body order) RANGE_SLOTS numbers, where it sits in
   * the body `[start, end)` and its id's and metric's bytes between their quotes (-1 when the
   * byte check did not read the record: its id or metric may hold escapes). Owner routing reads
   * them instead of scanning every record again.
   */
  ranges?: Int32Array;
}

/** Numbers per record in `Batch.ranges`: start, end, idFrom, idTo, metricFrom, metricTo. */
export const RANGE_SLOTS = 6;

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
  /**
   * The memory this pool allocated: only that is taken back. Any other body (an empty batch's
   * `Buffer.from('[]')` can be the first bytes of Node's shared 8 KiB slab) would be handed out
   * while other buffers still live in it.
   */
  private readonly mine = new WeakSet<ArrayBufferLike>();
  constructor(private readonly keep = 8) {}
  /** A buffer of at least `size` bytes: a free one, else a new one of `room` bytes (more, so that it serves the next bodies too). */
  take(size: number, room = size): Buffer {
    for (let i = this.free.length - 1; i >= 0; i--) {
      const b = this.free[i]!;
      if (b.length >= size) {
        this.free.splice(i, 1);
        return b;
      }
    }
    const b = Buffer.allocUnsafeSlow(Math.max(size, room));
    this.mine.add(b.buffer);
    return b;
  }
  /** Returns a batch's body for reuse. Only once nothing (no request, no retry) can still read it. */
  give(body: Buffer): void {
    if (this.free.length >= this.keep || body.byteOffset !== 0 || !this.mine.has(body.buffer)) return;
    this.free.push(Buffer.from(body.buffer, 0, body.buffer.byteLength));
  }
}

export interface BatcherOptions {
  /** Where body buffers come from (shared across inputs); a private pool when absent. */
  pool?: BodyPool;
  source: string;
  batchSize: number;
  batchBytes: number;
  /** What the records are (default `nnt`): each is checked by that kind's rule (kinds.ts). */
  kind?: RecordKind;
  /** Numeric records: offsets must sit on this span. */
  smallestSpan?: number;
  /** Histogram records: `period` must be one of these. */
  histogramPeriods?: readonly number[];
  /** Where this input starts (resume). */
  start?: Position;
  /**
   * Copy neighbouring records' bytes from the chunk they were read in as one run, when the batch
   * is closed or `release()` is called. The caller must call `release()` before the reader's
   * next group (the chunk's memory is reused).
   */
  deferCopies?: boolean;
  /** Record where each record and its id and metric sit in the body (`Batch.ranges`). */
  ranges?: boolean;
}

export type Added = { kind: 'ok'; full?: Batch } | { kind: 'reject'; reject: RejectEntry; full?: Batch };

const NEWLINE = 0x0a;
const COMMA = 0x2c;

/** The answer for most records (valid, batch not full yet): one shared object rather than one per record. */
const OK: Added = Object.freeze({ kind: 'ok' });

/** The same text in memory of its own, so keeping it does not keep a larger string it was cut from alive. */
const detached = (s: string): string => JSON.parse(JSON.stringify(s)) as string;

/** A record's text for a reject: parsed for `input`, and verbatim as `inputText` when it is JSON. */
export function rejectInput(text: string): { input: unknown; inputText?: string } {
  try {
    return { input: JSON.parse(text), inputText: text };
  } catch {
    return { input: text };
  }
}

/**
 * The text of the last top-level member `key` of the JSON object `text` (valid JSON: JSON.parse
 * accepted it), or undefined. Replaying a rejects-file line sends its `input` as written there.
 */
export function memberText(text: string, key: string): string | undefined {
  const want = JSON.stringify(key);
  let found: string | undefined;
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === 0x22) {
      // A string: find its end (skipping escapes); at depth 1 after "{" or "," it is a key.
      const from = i;
      for (i++; i < text.length && text.charCodeAt(i) !== 0x22; i++) if (text.charCodeAt(i) === 0x5c) i++;
      if (depth !== 1 || text.slice(from, i + 1) !== want) continue;
      let j = i + 1;
      while (/\s/.test(text[j] ?? '')) j++;
      if (text[j] !== ':') continue; // a value, not a key
      const start = j + 1;
      // The value ends at the "," or "}" that closes it at depth 1.
      let d = 0;
      for (j = start; j < text.length; j++) {
        const v = text.charCodeAt(j);
        if (v === 0x22) {
          for (j++; j < text.length && text.charCodeAt(j) !== 0x22; j++) if (text.charCodeAt(j) === 0x5c) j++;
        } else if (v === 0x7b || v === 0x5b) d++;
        else if (v === 0x7d || v === 0x5d) {
          if (d === 0) break;
          d--;
        } else if (v === 0x2c && d === 0) break;
      }
      found = text.slice(start, j).trim();
      i = j - 1;
    } else if (c === 0x7b || c === 0x5b) depth++;
    else if (c === 0x7d || c === 0x5d) depth--;
  }
  return found;
}

/** A rejects-file line (`{file, record, error, input}`): replaying it means replaying its `input`. */
export function isRejectLine(v: unknown): v is { input: unknown; error: unknown; record: unknown } {
  return isJsonObject(v) && 'input' in v && 'error' in v && 'record' in v && !('metric' in v);
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
  private records: number[];
  private lines: number[];
  /** Per record, the `owner` of the rejects-file line it came from; only made once a line has one. */
  private owedTo: Array<string | undefined> | undefined;
  /** The `owner` of the record check() just unwrapped from a rejects-file line. */
  private owner: string | undefined;
  private seq = 0;
  /** The position just past the last record seen (as three numbers: no object per record). */
  private posRecord: number;
  private posByte: number;
  private posLine: number;
  private readonly opts: BatcherOptions;
  private readonly pool: BodyPool;
  private readonly check: KindCheck;
  /** Numeric records only: the byte-level check that vouches for most records without parsing them. */
  private readonly plain: PlainRecordCheck | undefined;
  /**
   * `deferCopies`: neighbouring NDJSON lines of one chunk not copied into the body yet,
   * chunk[runFrom, runTo), to go at body offset runAt (their newlines then become commas).
   */
  private runBytes: Buffer | undefined;
  private runFrom = 0;
  private runTo = 0;
  private runAt = 0;
  /** Where in the run its lines were joined (offsets of their newlines, which become commas): joinCount of them. */
  private joins = new Int32Array(1024);
  private joinCount = 0;
  /** `ranges`: the batch's so far (see Batch.ranges). */
  private ranges: Int32Array | undefined;

  constructor(opts: BatcherOptions) {
    this.opts = opts;
    this.pool = opts.pool ?? new BodyPool();
    const kind = opts.kind ?? 'nnt';
    this.check = {
      kind,
      ...(kind === 'nnt' && opts.smallestSpan !== undefined ? { smallestSpan: opts.smallestSpan } : {}),
      ...(kind === 'histogram' && opts.histogramPeriods !== undefined ? { histogramPeriods: opts.histogramPeriods } : {}),
    };
    this.plain = kind === 'nnt' ? new PlainRecordCheck(opts.smallestSpan) : undefined;
    const start = opts.start ?? { record: 0, byte: 0, line: 1 };
    this.posRecord = start.record;
    this.posByte = start.byte;
    this.posLine = start.line;
    this.buf = this.fresh(0);
    this.records = this.list();
    this.lines = this.list();
    if (opts.ranges) this.ranges = new Int32Array(RANGE_SLOTS * Math.min(opts.batchSize, 1024));
  }

  /**
   * A list of room for a full batch (up to 8,192), so it is not grown and copied ~20 times as
   * it fills: at a million records, that growth was ~50 MB of garbage for the collector.
   */
  private list(): number[] {
    return new Array<number>(Math.min(this.opts.batchSize, 8192));
  }

  /** A body buffer: room for a full batch (untouched pages cost no memory), or for one oversized record. */
  private fresh(atLeast: number): Buffer {
    return this.pool.take(Math.max(atLeast, Math.min(this.opts.batchBytes, 64 * 1024 * 1024) + 2));
  }

  private passed(record: number, byteEnd: number, lineEnd: number): void {
    this.posRecord = record;
    this.posByte = byteEnd;
    this.posLine = lineEnd;
  }

  /** Copies the records still held in the reader's chunk into the body (see `deferCopies`). */
  release(): void {
    const bytes = this.runBytes;
    if (bytes === undefined) return;
    this.runBytes = undefined;
    bytes.copy(this.buf, this.runAt, this.runFrom, this.runTo);
    // The lines were joined by a newline each: a comma, as between any two records of a body.
    const joins = this.joins;
    for (let k = 0; k < this.joinCount; k++) this.buf[this.runAt + joins[k]!] = COMMA;
    this.joinCount = 0;
  }

  /** Validates one record; returns a reject or nothing, and a batch when this record completed one. */
  add(raw: RawRecord): Added {
    this.owner = undefined;
    // ASCII bytes where they were read: checked and copied as they are (no encoding of the text).
    const bytes = raw.bytes;
    if (bytes !== undefined && this.plain !== undefined && this.plain.isPlainValidBytes(bytes, raw.from!, raw.to!)) {
      return this.put(undefined, bytes, raw.from!, raw.to!, raw.record, raw.line, raw.byteEnd, raw.lineEnd);
    }
    let text = raw.text;
    // Plain numeric records are checked on their bytes; anything else goes through JSON.parse.
    if (this.plain === undefined || !this.plain.isPlainValid(text)) {
      const checked = this.general(raw);
      if (typeof checked !== 'string') return checked;
      text = checked;
    }
    return this.put(text, undefined, 0, 0, raw.record, raw.line, raw.byteEnd, raw.lineEnd);
  }

  /**
   * Record `j` of a reader's chunk (its raws, then its spans; see RecordChunk), as `add`. A span
   * the byte check vouches for goes into the body without an object or a string made for it.
   */
  addFrom(c: RecordChunk, j: number): Added {
    if (j < c.raws.length) return this.add(c.raws[j]!);
    const s = j - c.raws.length + c.spanFirst;
    const k = s * SPAN_FIELDS;
    const from = c.spans[k]!;
    const to = c.spans[k + 1]!;
    if (this.plain === undefined || !this.plain.isPlainValidBytes(c.bytes!, from, to)) return this.add(spanRecord(c, s));
    this.owner = undefined;
    const line = c.spanLine + c.spans[k + 2]!;
    return this.put(undefined, c.bytes, from, to, c.spanRecord + s, line, c.base + c.spans[k + 3]!, line + 1);
  }

  /**
   * Puts a valid record into the batch: `text`, or (text undefined) bytes[from, to) as read.
   * Returns the batch it completed, if any.
   */
  private put(text: string | undefined, bytes: Buffer | undefined, from: number, to: number, record: number, line: number, byteEnd: number, lineEnd: number): Added {
    const asRead = text === undefined;
    let full: Batch | undefined;
    const size = asRead ? to - from : Buffer.byteLength(text);
    // `[` or `,` before, `]` after.
    if (this.count > 0 && this.used + size + 2 > this.opts.batchBytes) full = this.flush();
    // The next line of the run's chunk, one newline after it: the run grows (the newline becomes the comma).
    if (
      asRead &&
      bytes !== undefined &&
      this.count > 0 &&
      this.runBytes === bytes &&
      from === this.runTo + 1 &&
      bytes[this.runTo] === NEWLINE &&
      this.used + size + 2 <= this.buf.length
    ) {
      if (this.joinCount === this.joins.length) {
        const more = new Int32Array(this.joins.length * 2);
        more.set(this.joins);
        this.joins = more;
      }
      this.joins[this.joinCount++] = this.runTo - this.runFrom;
      this.runTo = to;
      this.used = this.runAt + (this.runTo - this.runFrom);
    } else {
      this.release();
      if (this.used + size + 2 > this.buf.length) {
        const bigger = this.fresh(this.used + size + 2);
        this.buf.copy(bigger, 0, 0, this.used);
        this.buf = bigger;
      }
      this.buf[this.used++] = this.count === 0 ? 0x5b : COMMA;
      if (asRead && this.opts.deferCopies) {
        this.runBytes = bytes;
        this.runFrom = from;
        this.runTo = to;
        this.runAt = this.used;
        this.used += size;
      } else this.used += asRead ? bytes!.copy(this.buf, this.used, from, to) : this.buf.write(text, this.used);
    }
    this.records[this.count] = record;
    this.lines[this.count] = line;
    if (this.ranges !== undefined) this.noteRanges(asRead ? from : -1, size);
    this.count++;
    if (this.owner !== undefined || this.owedTo !== undefined) {
      this.owedTo ??= new Array<string | undefined>(this.count - 1).fill(undefined);
      this.owedTo.push(this.owner);
    }
    this.passed(record, byteEnd, lineEnd);
    if (full === undefined && this.count >= this.opts.batchSize) full = this.flush();
    return full ? { kind: 'ok', full } : OK;
  }

  /**
   * `ranges`: where the record just put (its last `size` bytes of the body) sits, and its id and
   * metric when the byte check read it at `from` (else -1).
   */
  private noteRanges(from: number, size: number): void {
    let r = this.ranges!;
    const k = this.count * RANGE_SLOTS;
    if (k + RANGE_SLOTS > r.length) {
      const bigger = new Int32Array(r.length * 2);
      bigger.set(r);
      this.ranges = r = bigger;
    }
    const start = this.used - size;
    r[k] = start;
    r[k + 1] = this.used;
    if (from < 0) {
      r[k + 2] = r[k + 3] = r[k + 4] = r[k + 5] = -1;
      return;
    }
    const at = this.plain!.at;
    const shift = start - from;
    r[k + 2] = at.idFrom + shift;
    r[k + 3] = at.idTo + shift;
    r[k + 4] = at.metricFrom + shift;
    r[k + 5] = at.metricTo + shift;
  }

  /** The general check: the record's text to send, or its reject. */
  private general(raw: RawRecord): string | Added {
    let value: unknown;
    let text = raw.text;
    try {
      value = JSON.parse(text);
    } catch (err) {
      this.passed(raw.record, raw.byteEnd, raw.lineEnd);
      return {
        kind: 'reject',
        // A copy of its own: the text may be a slice of a much larger decoded window (see RawRecord.text).
        reject: { file: this.opts.source, record: raw.record, line: raw.line, error: `(record): not valid JSON: ${(err as Error).message}`, input: detached(text) },
      };
    }
    if (isRejectLine(value)) {
      const owner = (value as { owner?: unknown }).owner;
      if (typeof owner === 'string') this.owner = owner;
      value = value.input;
      text = memberText(text, 'input') ?? JSON.stringify(value);
    }
    // The node's verdict on this kind; the record goes out as read, so no normalised copy is built.
    const issue = recordIssue(value, this.check);
    if (issue !== undefined) {
      this.passed(raw.record, raw.byteEnd, raw.lineEnd);
      return {
        kind: 'reject',
        reject: { file: this.opts.source, record: raw.record, line: raw.line, error: `${issue.field}: ${issue.reason}`, input: value, inputText: detached(text) },
      };
    }
    return text;
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
    this.release();
    let body: Buffer;
    if (this.count === 0) body = Buffer.from('[]');
    else {
      this.buf[this.used++] = 0x5d;
      body = this.buf.subarray(0, this.used);
      this.buf = this.fresh(0);
    }
    const end: Position = { record: this.posRecord, byte: this.posByte, line: this.posLine };
    // Cut to the records it holds (a batch closed by its bytes holds fewer than it had room for).
    this.records.length = this.count;
    this.lines.length = this.count;
    const batch: Batch = { source: this.opts.source, seq: this.seq++, body, count: this.count, records: this.records, lines: this.lines, end };
    if (this.owedTo !== undefined) batch.owedTo = this.owedTo;
    if (this.ranges !== undefined) {
      batch.ranges = this.ranges.subarray(0, this.count * RANGE_SLOTS);
      this.ranges = new Int32Array(this.ranges.length);
    }
    this.used = 0;
    this.count = 0;
    this.records = this.list();
    this.lines = this.list();
    this.owedTo = undefined;
    return batch;
  }
}
