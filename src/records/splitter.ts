/**
 * Incremental splitters (json-array-splitter.ts, ndjson-splitter.ts): bytes in, one text per
 * top-level record out, never holding more than the record being assembled. Both work on raw
 * bytes (structural characters are ASCII, so a multi-byte UTF-8 character split across chunks
 * is simply carried over and decoded whole).
 */
import { TsnodeError } from '../tsnode-error.js';

/** One record's text and where it sits in its input. */
export interface RawRecord {
  /** 1-based position among the records of the input. */
  record: number;
  /** 1-based line the record starts on. */
  line: number;
  /** Byte offset just past the record (resume point once it is acknowledged). */
  byteEnd: number;
  /** Line number at `byteEnd`, so a resumed reader keeps counting lines correctly. */
  lineEnd: number;
  /**
   * The record's text. It may share memory with the texts around it (lines of an ASCII chunk are
   * cut out of one decoded string): to keep a few texts for long, keep copies of them
   * (`JSON.parse(JSON.stringify(text))`), or a kept text keeps up to 60 KiB of its neighbours alive.
   */
  text: string;
  /**
   * Where the text's bytes are, when they are ASCII in the chunk as read (`bytes[from, to)`,
   * followed by the line's CR or LF): a consumer may check and copy them without encoding the
   * text again. Valid only until the reader's next group (the chunk's memory is reused).
   */
  bytes?: Buffer;
  from?: number;
  to?: number;
}

/** Where a splitter starts: the beginning, or just past an acknowledged record (resume). */
export interface SplitterStart {
  /** Records already consumed before `byte`. */
  record: number;
  /** Byte offset of the first byte this splitter will see. */
  byte: number;
  /** Line number at `byte`. */
  line: number;
}

/** Truncated or malformed input, with the position that gives it away. */
export class RecordSyntaxError extends TsnodeError {
  declare readonly code: 'record_syntax';
  constructor(
    readonly file: string,
    readonly byte: number,
    readonly line: number,
    readonly reason: string,
  ) {
    super('record_syntax', `${file}: line ${line}, byte ${byte}: ${reason}`);
    this.name = 'RecordSyntaxError';
  }
}

/**
 * The records one chunk completed, for a consumer that checks records on their bytes (the write
 * pipeline): `raws` first, as objects, then `spanCount` whole ASCII lines of `bytes` described by
 * four numbers each in `spans` (no object and no string per line; see NdjsonSplitter.pushChunk).
 * Valid only until the splitter's next chunk: the spans array and `bytes` are reused.
 */
export interface RecordChunk {
  raws: RawRecord[];
  /** The chunk the spans point into. */
  bytes: Buffer | undefined;
  /**
   * Per span, relative to the chunk: `from`, `to` (the record's bytes; a CR or LF follows),
   * its line minus `spanLine`, and the offset just past its newline.
   */
  spans: Int32Array;
  /** The first span still to read (a resume that re-reads an input skips the ones before). */
  spanFirst: number;
  spanCount: number;
  /** Record number of span 0 (the spans' records are consecutive). */
  spanRecord: number;
  /** Line of span 0, the base of the spans' lines. */
  spanLine: number;
  /** Input byte offset of `bytes[0]`. */
  base: number;
}

/** Numbers per span in `RecordChunk.spans`. */
export const SPAN_FIELDS = 4;

/** A chunk of records that has no spans. */
export function rawChunk(raws: RawRecord[]): RecordChunk {
  return { raws, bytes: undefined, spans: NO_SPANS, spanFirst: 0, spanCount: 0, spanRecord: 0, spanLine: 0, base: 0 };
}
const NO_SPANS = new Int32Array(0);

/** Span j of a chunk (`spanFirst <= j < spanCount`) as a RawRecord, its text decoded from its bytes. */
export function spanRecord(c: RecordChunk, j: number, text?: string): RawRecord {
  const k = j * SPAN_FIELDS;
  const bytes = c.bytes!;
  const from = c.spans[k]!;
  const to = c.spans[k + 1]!;
  const line = c.spanLine + c.spans[k + 2]!;
  return { record: c.spanRecord + j, line, byteEnd: c.base + c.spans[k + 3]!, lineEnd: line + 1, text: text ?? bytes.toString('latin1', from, to), bytes, from, to };
}

/** Records in a chunk still to read. */
export function chunkSize(c: RecordChunk): number {
  return c.raws.length + c.spanCount - c.spanFirst;
}

export interface Splitter {
  /** Feeds the next chunk; returns the records completed by it (possibly none). */
  push(chunk: Uint8Array): RawRecord[];
  /** End of input: returns a last record if one is pending, or throws when the input is truncated. */
  end(): RawRecord[];
}

/** The longest single record either splitter accepts; a runaway element is malformed input, not a reason to eat all memory. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
