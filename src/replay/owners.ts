/* eslint-disable @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access -- Buffer's latin1Slice/utf8Slice: untyped Node internals, used on purpose (no subarray per field) */
/**
 * Owner routing for the write pipeline: the records of one batch, split by the ring into one
 * slice per destination node, each record in the slices of exactly its `write_copies` owners.
 *
 * The batch body is read as bytes (no string per record): a small scanner finds each record's end
 * and its id and metric, skipping every other value; a record whose id or metric has an escape is
 * parsed. One pass per batch: each record's owner set (a number) and, per node, its records'
 * positions and bytes in typed arrays (no object or list per record: a ring write routes every
 * record, and on two cores each client microsecond is taken from the nodes). A request's body is
 * copied from the records' bytes once, neighbours as one range. Placement is cached per metric (a
 * ring placement costs a few microseconds).
 */
import { isWs, sameBytes } from '../protocol/record-scan.js';
import { batchBody, RANGE_SLOTS, type Batch } from '../records/batch.js';
import { metricKey, type Ring } from '../ring/index.js';
import { PlacementCache } from './placement-cache.js';
import { COMMA, LBRACKET, locate, RBRACKET, type Located } from './record-locate.js';

/**
 * The records of a batch bound for one node, where they are: each record's [start, end) in the
 * batch's body (no copy: a request body is built once, from the records of all its slices; see
 * joinSlices), or in a body of their own (records moved on to another owner).
 */
export interface OwnerSlice {
  /** The node: its index in the ring's topology (and in the replay's clients). */
  node: number;
  /** The bytes the records are in, and per record (body order) its start and end there. */
  bytes: Buffer;
  bounds: Int32Array;
  /** What the records take in a request body: their bytes, and a comma between each two. */
  size: number;
  count: number;
  /** The batch's input record numbers and lines (by batch position). */
  batch: BatchRecords;
  /** Each record's position in the batch, in body order. */
  index: Int32Array;
}

/** Input record numbers and lines of a batch's records, by their position in the batch. */
export interface BatchRecords {
  readonly records: readonly number[];
  readonly lines: readonly number[];
}

/** A request to one node: its slices' records in one body; input record numbers and lines in body order. */
export interface OwnerRequest {
  readonly node: number;
  readonly body: Buffer;
  readonly count: number;
  readonly records: number[];
  readonly lines: number[];
  texts?: string[];
}

/** A slice of records (their texts, at those positions of that batch) with a body of its own. */
export function ownSlice(node: number, texts: readonly string[], batch: BatchRecords, index: readonly number[]): OwnerSlice {
  const bytes = batchBody(texts);
  const bounds = new Int32Array(2 * texts.length);
  let p = 1;
  texts.forEach((t, j) => {
    bounds[2 * j] = p;
    p += Buffer.byteLength(t);
    bounds[2 * j + 1] = p++;
  });
  return { node, bytes, bounds, size: Math.max(0, bytes.length - 2), count: texts.length, batch, index: Int32Array.from(index) };
}

/** Per record of the slices, in order: `pick` of its batch and its batch position. */
function perRecord<T>(slices: readonly OwnerSlice[], pick: (s: OwnerSlice, k: number) => T): T[] {
  const out: T[] = [];
  for (const s of slices) for (let j = 0; j < s.count; j++) out.push(pick(s, s.index[j]!));
  return out;
}

/**
 * A request built from slices: what only a refusal or a failure needs (the records' numbers and
 * lines) is worked out when first asked for.
 */
class JoinedRequest implements OwnerRequest {
  texts?: string[];
  private recordList?: number[];
  private lineList?: number[];

  constructor(
    readonly node: number,
    readonly body: Buffer,
    readonly count: number,
    private readonly slices: readonly OwnerSlice[],
  ) {}

  get records(): number[] {
    return (this.recordList ??= perRecord(this.slices, (s, k) => s.batch.records[k]!));
  }

  get lines(): number[] {
    return (this.lineList ??= perRecord(this.slices, (s, k) => s.batch.lines[k]!));
  }
}

export interface RoutedBatch {
  slices: OwnerSlice[];
  /** Per record of the batch: how many nodes it was routed to (its copies). */
  copies: Uint8Array;
  /** Records from rejects-file lines that name their owner: routed to that node alone. */
  owed: number;
  /** Records whose rejects-file line named a node that does not own them (now): routed to all their owners. */
  notOwedThere: number;
  /**
   * Per record of the batch: its owners in placement order, as an entry of `ownerSets` (the
   * first is where a `primaryOnly` record was routed; one whose first owner fails moves on to
   * the next). See ownersAt.
   */
  ownerSet: Int32Array;
  ownerSets: ReadonlyArray<readonly number[]>;
}

/** The owners of record k (batch position) of a routed batch, in placement order. */
export const ownersAt = (routed: RoutedBatch, k: number): readonly number[] => routed.ownerSets[routed.ownerSet[k]!]!;

const latin1 = (buf: Uint8Array, from: number, to: number): string => Buffer.prototype.latin1Slice.call(buf, from, to) as string;

/**
 * Whether the record `at` locates has the id and metric at those other positions. Their last bytes
 * first: ids written in sequence (and metrics like `cpu.1`, `cpu.2`) differ at the end, where a
 * byte-by-byte compare from the start would get last.
 */
function sameSeries(buf: Uint8Array, at: Located, idFrom: number, idTo: number, metricFrom: number, metricTo: number): boolean {
  return (
    at.idTo - at.idFrom === idTo - idFrom &&
    at.metricTo - at.metricFrom === metricTo - metricFrom &&
    buf[at.idTo - 1] === buf[idTo - 1] &&
    buf[at.metricTo - 1] === buf[metricTo - 1] &&
    sameBytes(buf, at.idFrom, at.idTo, idFrom, idTo) &&
    sameBytes(buf, at.metricFrom, at.metricTo, metricFrom, metricTo)
  );
}

/** Where a node's records of a batch go as the pass finds them: their batch positions and bytes (grown as needed, kept for the next batch). */
interface NodeRecords {
  index: Int32Array;
  bounds: Int32Array;
  count: number;
  size: number;
}

/** Owner sets remembered before the table starts over (with the placements that name them). */
const MAX_OWNER_SETS = 1 << 16;

/** Routes records to their owners on a ring; indices are positions in the ring's topology. */
export class OwnerRouter {
  readonly ring: Ring;
  private readonly byId: Map<string, number>;
  /** Placements by key (`ownersOf`). */
  private readonly cache = new Map<string, readonly number[]>();
  /**
   * Placements (as owner sets) by the id's and metric's bytes as they are in a record (no string
   * is made on a hit); a miss computes the placement key properly (lower-case id, decoded metric).
   */
  private readonly byBytes: PlacementCache<number>;
  /** The distinct owner lists (placement order) placements gave, by number: a record carries a number, not a list. */
  private ownerSets: Array<readonly number[]> = [];
  private setNumbers = new Map<string, number>();
  private readonly perNode: NodeRecords[] = [];
  private readonly at: Located = { end: 0, idFrom: -1, idTo: -1, metricFrom: -1, metricTo: -1, escaped: false };

  constructor(
    ring: Ring,
    /** Placements remembered before the cache starts over: memory stays bounded on any input. */
    private readonly maxCached = 100_000,
  ) {
    this.ring = ring;
    this.byBytes = new PlacementCache(maxCached);
    this.byId = new Map(ring.topology.nodes.map((n, k) => [n.id.toLowerCase(), k]));
    for (let i = 0; i < ring.topology.nodes.length; i++) this.perNode.push({ index: new Int32Array(64), bounds: new Int32Array(128), count: 0, size: 0 });
  }

  get nodeCount(): number {
    return this.ring.topology.nodes.length;
  }

  /** The ring node with this identity, or undefined. */
  nodeIndex(id: string): number | undefined {
    return this.byId.get(id.toLowerCase());
  }

  private remember(key: string, owners: readonly number[]): readonly number[] {
    if (this.cache.size >= this.maxCached) this.cache.clear();
    this.cache.set(key, owners);
    return owners;
  }

  private place(uuid: string, metric: string): readonly number[] {
    return this.ring.ownersOf(uuid, metric).map((n) => this.byId.get(n.id.toLowerCase())!);
  }

  /** The owners of a metric, primary first, as topology indices. */
  ownersOf(uuid: string, metric: string): readonly number[] {
    const key = `${metricKey(uuid, metric)}\u0000`;
    return this.cache.get(key) ?? this.remember(key, this.place(uuid, metric));
  }

  /** The number of an owner list in `ownerSets` (added when new). */
  private setNumber(owners: readonly number[]): number {
    const key = owners.join(',');
    let n = this.setNumbers.get(key);
    if (n === undefined) {
      n = this.ownerSets.length;
      this.ownerSets.push(owners);
      this.setNumbers.set(key, n);
    }
    return n;
  }

  /** The owner set of the record whose id and metric `at` locates in `buf` (`view` over it), from their bytes. */
  private placedBytes(buf: Buffer, view: DataView, at: Located): number {
    const h = PlacementCache.hash(view, at.idFrom, at.idTo, at.metricFrom, at.metricTo);
    const known = this.byBytes.get(view, h, at.idFrom, at.idTo, at.metricFrom, at.metricTo);
    if (known !== undefined) return known;
    const set = this.setNumber(this.place(latin1(buf, at.idFrom, at.idTo), Buffer.prototype.utf8Slice.call(buf, at.metricFrom, at.metricTo) as string));
    this.byBytes.set(buf, h, at.idFrom, at.idTo, at.metricFrom, at.metricTo, set);
    return set;
  }

  /**
   * Splits a batch (its body: `[record,record,...]`, records as read and already validated) into
   * one slice per destination node. A record from a rejects-file line that names its owner
   * (`batch.owedTo`) goes to that node alone, when it still owns the record. `primaryOnly`: each
   * record to its first owner only (the store replicates it to the others).
   */
  split(batch: Batch, primaryOnly = false): RoutedBatch {
    // A full table starts over between batches (a routed batch keeps the table its numbers name).
    if (this.ownerSets.length >= MAX_OWNER_SETS) {
      this.ownerSets = [];
      this.setNumbers = new Map();
      this.byBytes.clear();
    }
    // Empty, also after a pass that threw (a malformed body).
    for (const r of this.perNode) r.count = r.size = 0;
    const ownerSet = new Int32Array(batch.count);
    const copies = new Uint8Array(batch.count);
    const owed = this.placeAll(batch, primaryOnly, ownerSet, copies);
    // Each node's records, cut from the pass's lists into one list for the batch.
    let total = 0;
    for (const r of this.perNode) total += r.count;
    const index = new Int32Array(total);
    const bounds = new Int32Array(2 * total);
    const slices: OwnerSlice[] = [];
    let at = 0;
    this.perNode.forEach((r, node) => {
      const count = r.count;
      if (count === 0) return;
      index.set(r.index.subarray(0, count), at);
      bounds.set(r.bounds.subarray(0, 2 * count), 2 * at);
      slices.push({
        node,
        bytes: batch.body,
        bounds: bounds.subarray(2 * at, 2 * (at + count)),
        size: r.size + count - 1,
        count,
        batch,
        index: index.subarray(at, at + count),
      });
      at += count;
    });
    return { slices, copies, owed: owed.owed, notOwedThere: owed.notOwedThere, ownerSet, ownerSets: this.ownerSets };
  }

  /**
   * The one pass over a batch's bytes: where each record is, its owner set, and each node's
   * records (in perNode). The batcher's ranges say where it saw each record; else each is found
   * by a scan from the last one's end.
   */
  // Kept long: one pass per batch sent, its state in locals; it runs for every record of a ring write.
  private placeAll(batch: Batch, primaryOnly: boolean, ownerSet: Int32Array, copies: Uint8Array): { owed: number; notOwedThere: number } {
    const buf = batch.body;
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const at = this.at;
    const sets = this.ownerSets;
    const perNode = this.perNode;
    const owed = { owed: 0, notOwedThere: 0 };
    let prevIdFrom = -1;
    let prevIdTo = -1;
    let prevMetricFrom = -1;
    let prevMetricTo = -1;
    let prevSet = -1;
    const found = batch.ranges;
    let p = 0;
    while (isWs(buf[p])) p++;
    if (buf[p] !== LBRACKET) throw new Error('a batch body is not a JSON array');
    p++;
    for (let k = 0; k < batch.count; k++) {
      let start: number;
      const r = k * RANGE_SLOTS;
      if (found !== undefined && found[r + 2]! >= 0) {
        start = found[r]!;
        at.end = found[r + 1]!;
        at.idFrom = found[r + 2]!;
        at.idTo = found[r + 3]!;
        at.metricFrom = found[r + 4]!;
        at.metricTo = found[r + 5]!;
        at.escaped = false;
      } else {
        if (found !== undefined) p = found[r]!;
        while (isWs(buf[p]) || buf[p] === COMMA) p++;
        start = p;
        locate(buf, p, at);
      }
      p = at.end;
      let set: number;
      if (at.escaped) {
        // Escapes in the id or metric: the placement key is the decoded text.
        const v = JSON.parse(Buffer.prototype.utf8Slice.call(buf, start, p) as string) as { id: string; metric: string };
        set = this.setNumber(this.ownersOf(v.id, v.metric));
        prevIdFrom = -1;
      } else if (prevIdFrom >= 0 && sameSeries(buf, at, prevIdFrom, prevIdTo, prevMetricFrom, prevMetricTo)) {
        set = prevSet;
      } else {
        set = this.placedBytes(buf, view, at);
        prevIdFrom = at.idFrom;
        prevIdTo = at.idTo;
        prevMetricFrom = at.metricFrom;
        prevMetricTo = at.metricTo;
        prevSet = set;
      }
      const owedId = batch.owedTo?.[k];
      if (owedId !== undefined) set = this.owedSet(owed, set, owedId);
      const owners = sets[set]!;
      // Primary only: the first owner (the rest are kept for a fallback).
      const destinations = primaryOnly ? Math.min(1, owners.length) : owners.length;
      ownerSet[k] = set;
      copies[k] = destinations;
      for (let o = 0; o < destinations; o++) {
        const n = perNode[owners[o]!]!;
        if (n.count === n.index.length) grow(n);
        n.index[n.count] = k;
        n.bounds[2 * n.count] = start;
        n.bounds[2 * n.count + 1] = p;
        n.count++;
        n.size += p - start;
      }
    }
    return owed;
  }

  /** A record from a rejects-file line owed to node `owedId`: that node alone when it owns the record (set `set`), else all its owners. */
  private owedSet(out: { owed: number; notOwedThere: number }, set: number, owedId: string): number {
    const i = this.nodeIndex(owedId);
    if (i !== undefined && this.ownerSets[set]!.includes(i)) {
      out.owed++;
      return this.setNumber([i]);
    }
    out.notOwedThere++;
    return set;
  }
}

function grow(n: NodeRecords): void {
  const index = new Int32Array(n.index.length * 2);
  index.set(n.index);
  const bounds = new Int32Array(n.bounds.length * 2);
  bounds.set(n.bounds);
  n.index = index;
  n.bounds = bounds;
}

/**
 * Slices for one node joined into one request: their records in order, one JSON array, its body
 * in a buffer from `take` (at least the size asked for). Neighbouring records (one comma between
 * them in the bytes they are in) are copied as one range.
 */
export function joinSlices(node: number, slices: readonly OwnerSlice[], take: (size: number) => Buffer = (n) => Buffer.allocUnsafe(n)): OwnerRequest {
  let size = 1 + slices.length; // brackets, and a comma between slices
  let count = 0;
  for (const s of slices) {
    size += s.size;
    count += s.count;
  }
  const body = take(size);
  let o = 0;
  body[o++] = LBRACKET;
  for (const s of slices) {
    const b = s.bounds;
    // A plain view: its subarray and set are engine builtins (Buffer#copy makes a view per call in JavaScript).
    const src = new Uint8Array(s.bytes.buffer, s.bytes.byteOffset, s.bytes.length);
    for (let j = 0; j < s.count;) {
      const from = b[2 * j]!;
      let to = b[2 * j + 1]!;
      for (j++; j < s.count && b[2 * j] === to + 1 && src[to] === COMMA; j++) to = b[2 * j + 1]!;
      if (o > 1) body[o++] = COMMA;
      body.set(src.subarray(from, to), o);
      o += to - from;
    }
  }
  body[o++] = RBRACKET;
  return new JoinedRequest(node, body.subarray(0, o), count, slices);
}
