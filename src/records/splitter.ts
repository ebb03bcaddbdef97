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

export interface Splitter {
  /** Feeds the next chunk; returns the records completed by it (possibly none). */
  push(chunk: Uint8Array): RawRecord[];
  /** End of input: returns a last record if one is pending, or throws when the input is truncated. */
  end(): RawRecord[];
}

/** The longest single record either splitter accepts; a runaway element is malformed input, not a reason to eat all memory. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;
