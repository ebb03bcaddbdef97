/**
 * Owner placements remembered by the bytes of a record's id and metric as they are in a batch
 * body, so that a record of a series seen before costs a hash and a compare, with no string made.
 *
 * The keys' bytes are kept one after another in one buffer, the entries in an open-addressing
 * table of integers (no object per entry, nothing for the garbage collector to trace). Hash and
 * compare read four bytes at a time. A hit is an exact match of both byte strings: the hash only
 * finds the candidates. Memory stays bounded: at `max` entries the cache starts over.
 */

const EMPTY = -1;

/** Mixes a 32-bit word into a running hash (FNV-1a's step, on words). */
const step = (h: number, w: number): number => Math.imul(h ^ w, 0x01000193);

/** The avalanche of MurmurHash3: every input bit reaches the low bits the table's index takes. */
function finish(h: number): number {
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  return (h ^ (h >>> 16)) | 0;
}

// `step` written out in the loops: until the engine compiles this, a call per word costs more than the word.
function hashRange(view: DataView, h: number, from: number, to: number): number {
  let i = from;
  for (; i + 4 <= to; i += 4) h = Math.imul(h ^ view.getInt32(i), 0x01000193);
  for (; i < to; i++) h = Math.imul(h ^ view.getUint8(i), 0x01000193);
  return h;
}

/** Whether a[aFrom, aFrom + len) and b[bFrom, bFrom + len) hold the same bytes. */
function sameRange(a: DataView, aFrom: number, b: DataView, bFrom: number, len: number): boolean {
  let i = 0;
  for (; i + 4 <= len; i += 4) if (a.getInt32(aFrom + i) !== b.getInt32(bFrom + i)) return false;
  for (; i < len; i++) if (a.getUint8(aFrom + i) !== b.getUint8(bFrom + i)) return false;
  return true;
}

export class PlacementCache<T> {
  /** The keys' bytes: each entry's id, then its metric. */
  private bytes: Uint8Array;
  private view: DataView;
  private used = 0;
  /** Per entry: where its id starts in `bytes`, its id's and metric's lengths, its hash, what is remembered for it. */
  private readonly at: number[] = [];
  private readonly idLength: number[] = [];
  private readonly metricLength: number[] = [];
  private readonly hashes: number[] = [];
  private readonly values: T[] = [];
  /** Entry numbers by hash (open addressing, linear probing); EMPTY where none. */
  private readonly table: Int32Array;
  private readonly mask: number;

  constructor(private readonly max: number) {
    let size = 16;
    while (size < max * 2) size *= 2;
    this.table = new Int32Array(size).fill(EMPTY);
    this.mask = size - 1;
    this.bytes = new Uint8Array(64 * 1024);
    this.view = new DataView(this.bytes.buffer);
  }

  get size(): number {
    return this.values.length;
  }

  /** The hash of an id and a metric, as `get` and `set` take it. */
  static hash(view: DataView, idFrom: number, idTo: number, metricFrom: number, metricTo: number): number {
    // The lengths first: an id and metric are told from another pair split at another byte.
    let h = step(0x811c9dc5, ((idTo - idFrom) << 16) | (metricTo - metricFrom));
    h = hashRange(view, h, idFrom, idTo);
    return finish(hashRange(view, h, metricFrom, metricTo));
  }

  /** What is remembered for the id and metric at those positions of `view` (hashed `h`), or undefined. */
  get(view: DataView, h: number, idFrom: number, idTo: number, metricFrom: number, metricTo: number): T | undefined {
    const idLen = idTo - idFrom;
    const metricLen = metricTo - metricFrom;
    for (let slot = h & this.mask; ; slot = (slot + 1) & this.mask) {
      const e = this.table[slot]!;
      if (e === EMPTY) return undefined;
      if (
        this.hashes[e] === h &&
        this.idLength[e] === idLen &&
        this.metricLength[e] === metricLen &&
        sameRange(this.view, this.at[e]!, view, idFrom, idLen) &&
        sameRange(this.view, this.at[e]! + idLen, view, metricFrom, metricLen)
      )
        return this.values[e];
    }
  }

  /** Remembers `value` for the id and metric at those positions of `buf` (hashed `h`; not in the cache). */
  set(buf: Uint8Array, h: number, idFrom: number, idTo: number, metricFrom: number, metricTo: number, value: T): void {
    if (this.values.length >= this.max) this.clear();
    const idLen = idTo - idFrom;
    const metricLen = metricTo - metricFrom;
    if (this.used + idLen + metricLen > this.bytes.length) this.grow(this.used + idLen + metricLen);
    const e = this.values.length;
    this.at.push(this.used);
    this.idLength.push(idLen);
    this.metricLength.push(metricLen);
    this.hashes.push(h);
    this.values.push(value);
    this.bytes.set(buf.subarray(idFrom, idTo), this.used);
    this.bytes.set(buf.subarray(metricFrom, metricTo), this.used + idLen);
    this.used += idLen + metricLen;
    let slot = h & this.mask;
    while (this.table[slot] !== EMPTY) slot = (slot + 1) & this.mask;
    this.table[slot] = e;
  }

  private grow(atLeast: number): void {
    let size = this.bytes.length * 2;
    while (size < atLeast) size *= 2;
    const bigger = new Uint8Array(size);
    bigger.set(this.bytes.subarray(0, this.used));
    this.bytes = bigger;
    this.view = new DataView(bigger.buffer);
  }

  clear(): void {
    this.table.fill(EMPTY);
    this.used = 0;
    this.at.length = this.idLength.length = this.metricLength.length = this.hashes.length = this.values.length = 0;
  }
}
