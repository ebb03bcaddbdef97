/** Byte-level helpers shared by the two splitters; internal to records/ (not part of the library API). */

// The structural bytes both splitters look for.
export const NL = 0x0a;
export const CR = 0x0d;
const SPACE = 0x20;
const TAB = 0x09;
export const LBRACE = 0x7b;

export const isSpace = (b: number): boolean => b === SPACE || b === NL || b === CR || b === TAB;

export function show(b: number): string {
  return b >= 0x20 && b < 0x7f ? JSON.stringify(String.fromCharCode(b)) : `byte 0x${b.toString(16).padStart(2, '0')}`;
}

/** Collects the pieces of one element that spans chunks. */
export class Pending {
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
