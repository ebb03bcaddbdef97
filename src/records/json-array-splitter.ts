import { Pending, show } from './split-bytes.js';
import { MAX_RECORD_BYTES, RecordSyntaxError, type RawRecord, type Splitter, type SplitterStart } from './splitter.js';

// The structural bytes, as constants of this module: the scanning loop below is the hot path
// of a JSON-array input, and V8 folds a module's own constants into it but not imported ones.
const NL = 0x0a;
const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
const LBRACE = 0x7b;
const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;
const RBRACE = 0x7d;

const isSpace = (b: number): boolean => b === SPACE || b === NL || b === CR || b === TAB;

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

  // Kept long: one byte-at-a-time state machine over the chunk with its state in locals; split into
  // helpers, the hottest loop of `write` would pay a call and a state round trip per token.
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
