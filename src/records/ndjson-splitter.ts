import { isAscii } from 'node:buffer';
import { CR, isSpace, LBRACE, NL, Pending } from './split-bytes.js';
import { MAX_RECORD_BYTES, RecordSyntaxError, type RawRecord, type Splitter, type SplitterStart } from './splitter.js';

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
    const chunk = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    const out: RawRecord[] = [];
    const base = this.offset;
    let from = 0;
    // A line carried over from the previous chunk is finished on bytes (it may end in a split character).
    if (!this.pending.empty) {
      const nl = chunk.indexOf(NL);
      if (nl >= 0) {
        this.emitLine(out, this.lineText(chunk, 0, nl), base + nl + 1);
        from = nl + 1;
      }
    }
    const last = this.pending.empty ? chunk.lastIndexOf(NL) : -1;
    if (last >= from && isAscii(chunk.subarray(from, last))) {
      // The common case: whole lines of ASCII. Decode them a window at a time and cut the lines
      // out of that string (byte offsets equal string offsets in ASCII), instead of one decode per
      // line. Windows stay under 64 KiB: larger strings go to V8's large-object space, which costs
      // several times more per byte.
      while (from <= last) {
        let cut = last + 1;
        if (cut - from > DECODE_WINDOW) {
          const nl = chunk.lastIndexOf(NL, from + DECODE_WINDOW - 1);
          cut = (nl >= from ? nl : chunk.indexOf(NL, from + DECODE_WINDOW)) + 1;
        }
        this.asciiLines(out, chunk.toString('latin1', from, cut), base, chunk, from);
        from = cut;
      }
    } else {
      for (;;) {
        const nl = chunk.indexOf(NL, from);
        if (nl < 0) break;
        this.emitLine(out, this.lineText(chunk, from, nl), base + nl + 1);
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
   * The lines of `text`: whole newline-terminated ASCII lines, decoded from chunk[from, ...) (the
   * input's byte `base + from`). Each record also says where its bytes are in the chunk.
   */
  private asciiLines(out: RawRecord[], text: string, base: number, chunk: Buffer, from: number): void {
    let i = 0;
    for (;;) {
      const nl = text.indexOf('\n', i);
      if (nl < 0) return;
      let end = nl;
      if (end > i && text.charCodeAt(end - 1) === CR) end--;
      const line = text.slice(i, end);
      // A record line starts with "{"; anything else is checked for being blank (as on bytes: trim()).
      if (line.charCodeAt(0) === LBRACE || line.trim() !== '') {
        this.record += 1;
        out.push({ record: this.record, line: this.line, byteEnd: base + from + nl + 1, lineEnd: this.line + 1, text: line, bytes: chunk, from: from + i, to: from + end });
      }
      this.line += 1;
      i = nl + 1;
    }
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
