import { validateNntRecord } from '../protocol/index.js';
import type { RawRecord } from './splitter.js';

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
  /** Record texts as sent (the input's own text, or the `input` of a rejects-file line). */
  texts: string[];
  /** Input record numbers, parallel to `texts`. */
  records: number[];
  /** Input line numbers, parallel to `texts`. */
  lines: number[];
  /** Approximate body size (UTF-16 units of the texts + separators). */
  bytes: number;
  /** Position just past the last record this batch accounts for (including rejected ones before it). */
  end: Position;
}

/** The JSON array body of a batch: built only when it is sent. */
export function batchBody(texts: readonly string[]): string {
  return `[${texts.join(',')}]`;
}

export interface BatcherOptions {
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
  private texts: string[] = [];
  private records: number[] = [];
  private lines: number[] = [];
  private bytes = 2;
  private seq = 0;
  private pos: Position;
  private readonly opts: BatcherOptions;

  constructor(opts: BatcherOptions) {
    this.opts = opts;
    this.pos = opts.start ?? { record: 0, byte: 0, line: 1 };
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
    const size = text.length + 1;
    if (this.texts.length > 0 && this.bytes + size > this.opts.batchBytes) full = this.flush();
    this.texts.push(text);
    this.records.push(raw.record);
    this.lines.push(raw.line);
    this.bytes += size;
    this.pos = { record: raw.record, byte: raw.byteEnd, line: raw.lineEnd };
    if (full === undefined && this.texts.length >= this.opts.batchSize) full = this.flush();
    return full ? { kind: 'ok', full } : { kind: 'ok' };
  }

  /** Records validated but not yet in a batch. */
  get pendingCount(): number {
    return this.texts.length;
  }

  /**
   * Closes the current batch. At the end of an input call it even when it holds no records:
   * the empty batch still carries the position past trailing rejected records.
   */
  flush(): Batch {
    const batch: Batch = {
      source: this.opts.source,
      seq: this.seq++,
      texts: this.texts,
      records: this.records,
      lines: this.lines,
      bytes: this.bytes,
      end: this.pos,
    };
    this.texts = [];
    this.records = [];
    this.lines = [];
    this.bytes = 2;
    return batch;
  }
}
