/**
 * The records pipeline as it was before the client-speed work (commit 9f0e6aa), kept verbatim as a
 * test oracle: the faster code must produce exactly what this produced, byte for byte.
 */
/**
 * Incremental splitters: bytes in, one text per top-level record out, never holding more than
 * the record being assembled. Both work on raw bytes (structural characters are ASCII, so a
 * multi-byte UTF-8 character split across chunks is simply carried over and decoded whole).
 */

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
  text: string;
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
export class RecordSyntaxError extends Error {
  readonly code = 'record_syntax';
  constructor(
    readonly file: string,
    readonly byte: number,
    readonly line: number,
    readonly reason: string,
  ) {
    super(`${file}: line ${line}, byte ${byte}: ${reason}`);
    this.name = 'RecordSyntaxError';
  }
}

export interface Splitter {
  /** Feeds the next chunk; returns the records completed by it (possibly none). */
  push(chunk: Uint8Array): RawRecord[];
  /** End of input: returns a last record if one is pending, or throws when the input is truncated. */
  end(): RawRecord[];
}

const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const LBRACE = 0x7b;
const RBRACE = 0x7d;

const isSpace = (b: number): boolean => b === SPACE || b === NL || b === CR || b === TAB;

function show(b: number): string {
  return b >= 0x20 && b < 0x7f ? JSON.stringify(String.fromCharCode(b)) : `byte 0x${b.toString(16).padStart(2, '0')}`;
}

/** Collects the pieces of one element that spans chunks. */
class Pending {
  private parts: Buffer[] = [];
  private bytes = 0;
  add(chunk: Buffer, from: number, to: number): void {
    if (to > from) {
      // Copy: the chunk buffer may be reused by the stream after we return.
      this.parts.push(Buffer.from(chunk.subarray(from, to)));
      this.bytes += to - from;
    }
  }
  get empty(): boolean {
    return this.parts.length === 0;
  }
  get size(): number {
    return this.bytes;
  }
  take(chunk: Buffer, from: number, to: number): string {
    if (this.parts.length === 0) return chunk.toString('utf8', from, to);
    if (to > from) this.parts.push(chunk.subarray(from, to));
    const text = Buffer.concat(this.parts).toString('utf8');
    this.parts = [];
    this.bytes = 0;
    return text;
  }
}

/** The longest single record either splitter accepts; a runaway element is malformed input, not a reason to eat all memory. */
export const MAX_RECORD_BYTES = 64 * 1024 * 1024;

const enum S {
  /** Before the opening `[`. */
  Start,
  /** After `[` or `,`: a value must come (or `]` right after `[`). */
  Value,
  /** Inside an element. */
  Element,
  /** After an element: `,` or `]`. */
  AfterElement,
  /** After the closing `]`: only whitespace. */
  Done,
}

/**
 * Splits a JSON array into its top-level elements. It tracks strings (with escapes) and
 * nesting, so brackets and quotes inside strings are never mistaken for structure. Each
 * element is returned as text; whether that text is valid JSON is for `JSON.parse` to say
 * (the splitter only guarantees balanced structure).
 */
export class JsonArraySplitter implements Splitter {
  private state: S;
  private depth = 0;
  private inString = false;
  private escaped = false;
  private offset: number;
  private line: number;
  private record: number;
  private readonly pending = new Pending();
  private elementLine = 0;
  private emptyArray = true;
  /** A scalar element (number, true, ...) has no closing bracket: it ends at `,`, `]` or space. */
  private scalar = false;

  constructor(
    private readonly file: string,
    start?: SplitterStart,
  ) {
    this.offset = start?.byte ?? 0;
    this.line = start?.line ?? 1;
    this.record = start?.record ?? 0;
    // Resuming past record N: the next thing is `,` or `]`.
    this.state = start && start.record > 0 ? S.AfterElement : S.Start;
    if (start && start.record > 0) this.emptyArray = false;
  }

  private fail(reason: string, at = this.offset, line = this.line): never {
    throw new RecordSyntaxError(this.file, at, line, reason);
  }

  push(input: Uint8Array): RawRecord[] {
    const chunk = Buffer.isBuffer(input) ? input : Buffer.from(input.buffer, input.byteOffset, input.byteLength);
    const out: RawRecord[] = [];
    const n = chunk.length;
    let i = 0;
    let elementStart = 0;
    const base = this.offset;
    let line = this.line;
    const emit = (endIndex: number): void => {
      this.record += 1;
      const text = this.pending.take(chunk, elementStart, endIndex);
      out.push({ record: this.record, line: this.elementLine, byteEnd: base + endIndex, lineEnd: line, text });
    };
    while (i < n) {
      const b = chunk[i]!;
      switch (this.state) {
        case S.Element: {
          if (this.inString) {
            // Fast path through string content.
            for (; i < n; i++) {
              const c = chunk[i]!;
              if (this.escaped) this.escaped = false;
              else if (c === BACKSLASH) this.escaped = true;
              else if (c === QUOTE) {
                this.inString = false;
                break;
              } else if (c === NL) {
                this.offset = base + i;
                this.line = line;
                this.fail('a string runs past the end of the line (unescaped newline or missing closing quote)');
              }
            }
            i++;
            if (!this.inString && this.depth === 0 && !this.scalar) {
              // A top-level string element ends with its closing quote.
              emit(i);
              this.state = S.AfterElement;
            }
            continue;
          }
          if (this.scalar) {
            if (b === COMMA || b === RBRACKET || isSpace(b)) {
              emit(i);
              this.scalar = false;
              this.state = S.AfterElement;
              continue; // re-examine this byte as AfterElement
            }
            if (b === QUOTE || b === LBRACE || b === LBRACKET) {
              this.offset = base + i;
              this.line = line;
              this.fail(`unexpected ${show(b)} inside a value`);
            }
            i++;
            continue;
          }
          if (b === QUOTE) this.inString = true;
          else if (b === LBRACE || b === LBRACKET) this.depth++;
          else if (b === RBRACE || b === RBRACKET) {
            this.depth--;
            if (this.depth === 0) {
              i++;
              emit(i);
              this.state = S.AfterElement;
              continue;
            }
          } else if (b === NL) line++;
          i++;
          continue;
        }
        case S.AfterElement: {
          if (b === COMMA) this.state = S.Value;
          else if (b === RBRACKET) this.state = S.Done;
          else if (b === NL) line++;
          else if (!isSpace(b)) {
            this.offset = base + i;
            this.line = line;
            this.fail(`expected "," or "]" after record ${this.record}, found ${show(b)}`);
          }
          i++;
          continue;
        }
        case S.Value: {
          if (b === NL) line++;
          else if (b === RBRACKET && this.emptyArray) this.state = S.Done;
          else if (!isSpace(b)) {
            if (b === COMMA || b === RBRACKET) {
              this.offset = base + i;
              this.line = line;
              this.fail(b === COMMA ? `missing record before ","` : `trailing "," before "]"`);
            }
            this.emptyArray = false;
            this.state = S.Element;
            this.elementLine = line;
            elementStart = i;
            if (b === QUOTE) {
              this.inString = true;
              this.depth = 0;
            } else if (b === LBRACE || b === LBRACKET) this.depth = 1;
            else if (b === RBRACE) {
              this.offset = base + i;
              this.line = line;
              this.fail('unexpected "}"');
            } else this.scalar = true;
          }
          i++;
          continue;
        }
        case S.Start: {
          if (b === LBRACKET) this.state = S.Value;
          else if (b === NL) line++;
          else if (!isSpace(b) && !(b === 0xef || b === 0xbb || b === 0xbf)) {
            this.offset = base + i;
            this.line = line;
            this.fail(`expected a JSON array starting with "[", found ${show(b)}`);
          }
          i++;
          continue;
        }
        case S.Done: {
          if (b === NL) line++;
          else if (!isSpace(b)) {
            this.offset = base + i;
            this.line = line;
            this.fail(`unexpected ${show(b)} after the closing "]"`);
          }
          i++;
          continue;
        }
      }
    }
    if (this.state === S.Element) {
      this.pending.add(chunk, elementStart, n);
      if (this.pending.size > MAX_RECORD_BYTES) {
        this.fail(`record ${this.record + 1} (from line ${this.elementLine}) is larger than ${MAX_RECORD_BYTES} bytes: is the input malformed?`);
      }
    }
    this.offset = base + n;
    this.line = line;
    return out;
  }

  end(): RawRecord[] {
    switch (this.state) {
      case S.Done:
        return [];
      case S.Start:
        return this.fail(this.offset === 0 ? 'the input is empty (expected a JSON array)' : 'expected a JSON array starting with "["');
      case S.Element:
        if (this.scalar && !this.pending.empty) {
          return this.fail(`input ends inside record ${this.record + 1} (from line ${this.elementLine}) without the closing "]"`);
        }
        return this.fail(`input ends inside record ${this.record + 1} (from line ${this.elementLine}): truncated?`);
      default:
        return this.fail(`input ends before the closing "]" of the array (after record ${this.record}): truncated?`);
    }
  }
}

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
    for (;;) {
      const nl = chunk.indexOf(NL, from);
      if (nl < 0) break;
      const text = this.lineText(chunk, from, nl);
      if (text !== undefined) {
        this.record += 1;
        out.push({ record: this.record, line: this.line, byteEnd: base + nl + 1, lineEnd: this.line + 1, text });
      }
      this.line += 1;
      from = nl + 1;
    }
    this.pending.add(chunk, from, chunk.length);
    if (this.pending.size > MAX_RECORD_BYTES) {
      throw new RecordSyntaxError(this.file, base + chunk.length, this.line, `line ${this.line} is longer than ${MAX_RECORD_BYTES} bytes: is this really NDJSON?`);
    }
    this.offset = base + chunk.length;
    return out;
  }

  end(): RawRecord[] {
    if (this.pending.empty) return [];
    const text = this.pending.take(Buffer.alloc(0), 0, 0);
    if (text.trim() === '') return [];
    this.record += 1;
    // The last line had no newline; its end is the end of input.
    return [{ record: this.record, line: this.line, byteEnd: this.offset, lineEnd: this.line, text: text.replace(/\r$/, '') }];
  }
}
