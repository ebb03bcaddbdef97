import { isAscii } from 'node:buffer';
import { CR, isSpace, LBRACE, NL, Pending } from './split-bytes.js';
import { MAX_RECORD_BYTES, RecordSyntaxError, SPAN_FIELDS, spanRecord, type RawRecord, type RecordChunk, type Splitter, type SplitterStart } from './splitter.js';

/** Largest piece of a chunk decoded into one string at a time (see NdjsonSplitter.push). */
const DECODE_WINDOW = 60 * 1024;

/**
 * The first line of an input without its UTF-8 byte order mark (Windows tools write one; it is
 * not JSON, and JSON.parse refuses it). Line 1 is always the start of the input: a resumed
 * splitter starts past a record, so on a later line.
 */
const withoutBom = (text: string): string => (text.charCodeAt(0) === 0xfeff ? text.slice(1) : text);

/**
 * Splits newline-delimited JSON: one record per non-blank line. Lines are located with
 * `indexOf`, so the cost is close to a memory scan.
 */
export class NdjsonSplitter implements Splitter {
  private offset: number;
  private line: number;
  /** The spans of the last chunk (RecordChunk.spans), reused: grown, never shrunk. */
  private spans = new Int32Array(SPAN_FIELDS * 1024);
  private record: number;
  private readonly pending = new Pending();

  constructor(
    private readonly file: string,
    start?: SplitterStart,
  ) {
    this.offset = start?.byte ?? 0;
    this.line = start?.line ?? 1;
    this.record = start?.record ?? 0;
  }

  private lineText(chunk: Buffer, from: number, to: number): string | undefined {
    let end = to;
    if (end > from && chunk[end - 1] === CR) end--;
    let blank = this.pending.empty;
    if (blank) {
      for (let k = from; k < end; k++) {
        if (!isSpace(chunk[k]!)) {
          blank = false;
          break;
        }
      }
    }
    if (blank) return undefined;
    const text = this.pending.take(chunk, from, end);
    return text.trim() === '' ? undefined : text;
  }

  push(input: Uint8Array): RawRecord[] {
    return spanRecords(this.pushChunk(input));
  }

  /**
   * The records `input` completes, its whole ASCII lines as spans (RecordChunk): the common case
   * costs an `indexOf` per line and no object or string. Lines carried over from the previous
   * chunk, and chunks that are not ASCII, come as RawRecords.
   */
  pushChunk(input: Uint8Array): RecordChunk {
    const chunk = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    const out: RecordChunk = { raws: [], bytes: chunk, spans: this.spans, spanFirst: 0, spanCount: 0, spanRecord: 0, spanLine: 0, base: this.offset };
    const base = this.offset;
    let from = 0;
    // A line carried over from the previous chunk is finished on bytes (it may end in a split character).
    if (!this.pending.empty) {
      const nl = chunk.indexOf(NL);
      if (nl >= 0) {
        this.emitLine(out.raws, this.lineText(chunk, 0, nl), base + nl + 1);
        from = nl + 1;
      }
    }
    const last = this.pending.empty ? chunk.lastIndexOf(NL) : -1;
    // (Spans hold offsets as 32-bit integers: a chunk over 2 GiB, which no reader makes, goes line by line.)
    if (last >= from && chunk.length <= 0x7fffffff && isAscii(chunk.subarray(from, last))) {
      from = this.asciiSpans(out, chunk, from, last);
    } else {
      for (;;) {
        const nl = chunk.indexOf(NL, from);
        if (nl < 0) break;
        this.emitLine(out.raws, this.lineText(chunk, from, nl), base + nl + 1);
        from = nl + 1;
      }
    }
    this.pending.add(chunk, from, chunk.length);
    if (this.pending.size > MAX_RECORD_BYTES) {
      throw new RecordSyntaxError(this.file, base + chunk.length, this.line, `line ${this.line} is longer than ${MAX_RECORD_BYTES} bytes: is this really NDJSON?`);
    }
    this.offset = base + chunk.length;
    return out;
  }

  /**
   * The whole ASCII lines of chunk[from, last] as spans of `out` (byte offsets are string offsets
   * in ASCII, so a span's text is its latin1 bytes); returns the offset after them.
   */
  private asciiSpans(out: RecordChunk, chunk: Buffer, from: number, last: number): number {
    let spans = this.spans;
    out.spanRecord = this.record + 1;
    out.spanLine = this.line;
    let k = 0;
    while (from <= last) {
      const nl = chunk.indexOf(NL, from);
      let end = nl;
      if (end > from && chunk[end - 1] === CR) end--;
      // A record line starts with "{"; anything else is checked for being blank (as trim() would).
      if (chunk[from] === LBRACE || !isBlankAscii(chunk, from, end)) {
        if (k === spans.length) {
          const more = new Int32Array(spans.length * 2);
          more.set(spans);
          spans = this.spans = out.spans = more;
        }
        spans[k] = from;
        spans[k + 1] = end;
        spans[k + 2] = this.line - out.spanLine;
        spans[k + 3] = nl + 1;
        k += SPAN_FIELDS;
        this.record += 1;
      }
      this.line += 1;
      from = nl + 1;
    }
    out.spanCount = k / SPAN_FIELDS;
    return from;
  }

  /** One line done: a record unless it was blank. */
  private emitLine(out: RawRecord[], text: string | undefined, byteEnd: number): void {
    if (text !== undefined) {
      if (this.line === 1) text = withoutBom(text);
      this.record += 1;
      out.push({ record: this.record, line: this.line, byteEnd, lineEnd: this.line + 1, text });
    }
    this.line += 1;
  }

  end(): RawRecord[] {
    if (this.pending.empty) return [];
    const text = this.pending.take(Buffer.alloc(0), 0, 0);
    if (text.trim() === '') return [];
    this.record += 1;
    // The last line had no newline; its end is the end of input.
    return [{ record: this.record, line: this.line, byteEnd: this.offset, lineEnd: this.line, text: (this.line === 1 ? withoutBom(text) : text).replace(/\r$/, '') }];
  }
}

/** Whether chunk[from, to) (ASCII) holds only what String.prototype.trim removes: tab to CR, and space. */
function isBlankAscii(chunk: Buffer, from: number, to: number): boolean {
  for (let k = from; k < to; k++) {
    const b = chunk[k]!;
    if (b !== 0x20 && (b < 0x09 || b > 0x0d)) return false;
  }
  return true;
}

/**
 * A chunk's records as RawRecords. The spans' texts are cut out of one decoded string per window
 * of lines rather than decoded one by one; windows stay under 64 KiB: larger strings go to V8's
 * large-object space, which costs several times more per byte.
 */
export function spanRecords(c: RecordChunk): RawRecord[] {
  const out = c.raws.slice();
  const { spans, bytes } = c;
  let window = '';
  let windowFrom = 0;
  let windowTo = -1;
  for (let j = c.spanFirst; j < c.spanCount; j++) {
    const from = spans[j * SPAN_FIELDS]!;
    const to = spans[j * SPAN_FIELDS + 1]!;
    if (to > windowTo) {
      // This line and those after it that end within a window of it.
      let e = j + 1;
      while (e < c.spanCount && spans[e * SPAN_FIELDS + 1]! - from <= DECODE_WINDOW) e++;
      windowFrom = from;
      windowTo = spans[(e - 1) * SPAN_FIELDS + 1]!;
      window = bytes!.toString('latin1', windowFrom, windowTo);
    }
    out.push(spanRecord(c, j, window.slice(from - windowFrom, to - windowFrom)));
  }
  return out;
}
