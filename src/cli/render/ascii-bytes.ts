/**
 * Output text built as bytes in one buffer instead of strings: a year of 300 s buckets is
 * 105,120 rows and 5 MB of CSV, and concatenating that many strings (then encoding them for
 * stdout) costs more than the rows themselves, mostly in garbage collection. Only for ASCII text: numbers, ISO times,
 * separators (anything else, e.g. a header, goes through a string and Buffer.from).
 */

/** "00".."99" as byte pairs: two digits per lookup. */
export const PAIRS = Buffer.from(Array.from({ length: 100 }, (_, i) => String(i).padStart(2, '0')).join(''), 'latin1');

/** 10^0 .. 10^15. */
export const POW10 = Array.from({ length: 16 }, (_, k) => 10 ** k);

export class AsciiBytes {
  private buf: Buffer;
  private pos = 0;

  /** `size`: the bytes expected; more fit, at the cost of a copy. */
  constructor(size: number) {
    this.buf = Buffer.allocUnsafe(Math.max(64, size));
  }

  /** Room for `n` more bytes. */
  reserve(n: number): void {
    if (this.pos + n > this.buf.length) this.grow(n);
  }

  /** Out of the hot path: a row loop V8 has optimised never sees it when `size` was right. */
  private grow(n: number): void {
    const bigger = Buffer.allocUnsafe(Math.max(this.buf.length * 2, this.pos + n));
    this.buf.copy(bigger, 0, 0, this.pos);
    this.buf = bigger;
  }

  /**
   * For a loop that writes bytes itself: the buffer, with room for `n` more bytes after `length`.
   * The loop writes from `length` on and sets `length` to where it stopped.
   */
  room(n: number): Buffer {
    this.reserve(n);
    return this.buf;
  }

  /** Bytes written so far. */
  get length(): number {
    return this.pos;
  }

  set length(p: number) {
    this.pos = p;
  }

  /** What was written. */
  text(): Buffer {
    return this.buf.subarray(0, this.pos);
  }

  byte(c: number): void {
    if (this.pos === this.buf.length) this.grow(1);
    this.buf[this.pos++] = c;
  }

  /** An ASCII string (each char code taken as a byte: callers pass only ASCII). */
  ascii(s: string): void {
    const n = s.length;
    this.reserve(n);
    const b = this.buf;
    let p = this.pos;
    for (let i = 0; i < n; i++) b[p++] = s.charCodeAt(i);
    this.pos = p;
  }

  /** Bytes of `src` as they are. */
  bytes(src: Uint8Array): void {
    this.reserve(src.length);
    this.buf.set(src, this.pos);
    this.pos += src.length;
  }

  /** A whole number 0 <= n < 10^16 in decimal, as String(n) prints it (two digits per step). */
  uint(n: number): void {
    let digits = 1;
    while (digits < 16 && n >= POW10[digits]!) digits++;
    this.reserve(digits);
    const b = this.buf;
    let p = this.pos + digits;
    this.pos = p;
    let x = n;
    while (x >= 100) {
      const q = Math.floor(x / 100);
      const r = 2 * (x - q * 100);
      b[--p] = PAIRS[r + 1]!;
      b[--p] = PAIRS[r]!;
      x = q;
    }
    if (x >= 10) {
      b[p - 1] = PAIRS[2 * x + 1]!;
      b[p - 2] = PAIRS[2 * x]!;
    } else b[p - 1] = 48 + x;
  }

  /** 0 <= n < 100 as two digits. */
  two(n: number): void {
    if (this.pos + 2 > this.buf.length) this.grow(2);
    this.buf[this.pos++] = PAIRS[2 * n]!;
    this.buf[this.pos++] = PAIRS[2 * n + 1]!;
  }

  /** `HH:MM:SS` (each 0..99), in one call: calls are what a row loop not yet compiled pays for. */
  clock(h: number, m: number, s: number): void {
    if (this.pos + 8 > this.buf.length) this.grow(8);
    const b = this.buf;
    let p = this.pos;
    b[p++] = PAIRS[2 * h]!;
    b[p++] = PAIRS[2 * h + 1]!;
    b[p++] = 58; // :
    b[p++] = PAIRS[2 * m]!;
    b[p++] = PAIRS[2 * m + 1]!;
    b[p++] = 58;
    b[p++] = PAIRS[2 * s]!;
    b[p++] = PAIRS[2 * s + 1]!;
    this.pos = p;
  }

  /** 0 <= n < 1000 as three digits. */
  three(n: number): void {
    const h = Math.floor(n / 100);
    this.byte(48 + h);
    this.two(n - h * 100);
  }
}
