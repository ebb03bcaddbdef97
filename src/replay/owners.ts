/* eslint-disable @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access -- Buffer's latin1Slice/utf8Slice: untyped Node internals, used on purpose (no subarray per field) */
/**
 * Owner routing for the write pipeline: the records of one batch, split by the ring into one
 * slice per destination node, each record in the slices of exactly its `write_copies` owners.
 *
 * The batch body is read as bytes (no string per record): a small scanner finds each record's end
 * and its id and metric, skipping every other value; a record whose id or metric has an escape is
 * parsed. Each slice names the records' bytes where the batch holds them (neighbours in one
 * range); a request's body is copied from them once. Placement is cached per metric (a ring placement costs a few microseconds).
 */
import { isWs, sameBytes } from '../protocol/record-scan.js';
import { batchBody, RANGE_SLOTS, type Batch } from '../records/batch.js';
import { metricKey, type Ring } from '../ring/index.js';
import { PlacementCache } from './placement-cache.js';
import { COMMA, LBRACKET, locate, RBRACKET, type Located } from './record-locate.js';

/**
 * The records of a batch bound for one node, where they are: byte ranges of the batch's body (no
 * copy: a request body is built once, from the ranges of all its slices; see joinSlices), or of
 * a body of their own (records moved on to another owner).
 */
export interface OwnerSlice {
  /** The node: its index in the ring's topology (and in the replay's clients). */
  node: number;
  /** The bytes the records are in, and their [start, end) ranges there in body order (neighbours merged, the comma between them kept). */
  bytes: Buffer;
  ranges: number[];
  /** What the records take in a request body: their ranges, and a comma between each two. */
  size: number;
  count: number;
  /** The batch's input record numbers and lines (by batch position). */
  batch: BatchRecords;
  /** Each record's position in the batch, in body order. */
  index: number[];
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
  /** Each record's position in its batch. */
  readonly index: number[];
  texts?: string[];
}

/** A slice of records (their texts, at those positions of that batch) with a body of its own. */
export function ownSlice(node: number, texts: readonly string[], batch: BatchRecords, index: number[]): OwnerSlice {
  const bytes = batchBody(texts);
  return { node, bytes, ranges: texts.length > 0 ? [1, bytes.length - 1] : [], size: bytes.length - 2, count: texts.length, batch, index };
}

/**
 * A request built from slices: what only a refusal or a failure needs (the records' numbers and
 * lines, their batch positions in one list) is worked out when first asked for.
 */
class JoinedRequest implements OwnerRequest {
  texts?: string[];
  private recordList?: number[];
  private lineList?: number[];
  private indexList?: number[];

  constructor(
    readonly node: number,
    readonly body: Buffer,
    readonly count: number,
    private readonly slices: readonly OwnerSlice[],
  ) {}

  get records(): number[] {
    return (this.recordList ??= this.slices.flatMap((s) => s.index.map((k) => s.batch.records[k]!)));
  }

  get lines(): number[] {
    return (this.lineList ??= this.slices.flatMap((s) => s.index.map((k) => s.batch.lines[k]!)));
  }

  get index(): number[] {
    return (this.indexList ??= this.slices.length === 1 ? this.slices[0]!.index : this.slices.flatMap((s) => s.index));
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
   * `primaryOnly`: per record of the batch, its owners in placement order (the first is where it
   * was routed); a record whose first owner fails moves on to the next.
   */
  placement?: Array<readonly number[]>;
}

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

/** Routes records to their owners on a ring; indices are positions in the ring's topology. */
export class OwnerRouter {
  readonly ring: Ring;
  private readonly byId: Map<string, number>;
  /** Placements by key (`ownersOf`). */
  private readonly cache = new Map<string, readonly number[]>();
  /**
   * Placements by the id's and metric's bytes as they are in a record (no string is made on a
   * hit); a miss computes the placement key properly (lower-case id, decoded metric).
   */
  private readonly byBytes: PlacementCache;
  private readonly at: Located = { end: 0, idFrom: -1, idTo: -1, metricFrom: -1, metricTo: -1, escaped: false };

  constructor(
    ring: Ring,
    /** Placements remembered before the cache starts over: memory stays bounded on any input. */
    private readonly maxCached = 100_000,
  ) {
    this.ring = ring;
    this.byBytes = new PlacementCache(maxCached);
    this.byId = new Map(ring.topology.nodes.map((n, k) => [n.id.toLowerCase(), k]));
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

  /** The owners of the record whose id and metric `at` locates in `buf` (`view` over it), from their bytes. */
  private placedBytes(buf: Uint8Array, view: DataView, at: Located): readonly number[] {
    const h = PlacementCache.hash(view, at.idFrom, at.idTo, at.metricFrom, at.metricTo);
    const known = this.byBytes.get(view, h, at.idFrom, at.idTo, at.metricFrom, at.metricTo);
    if (known !== undefined) return known;
    const owners = this.place(latin1(buf, at.idFrom, at.idTo), Buffer.prototype.utf8Slice.call(buf, at.metricFrom, at.metricTo) as string);
    this.byBytes.set(buf, h, at.idFrom, at.idTo, at.metricFrom, at.metricTo, owners);
    return owners;
  }

  /**
   * Splits a batch (its body: `[record,record,...]`, records as read and already validated) into
   * one slice per destination node. A record from a rejects-file line that names its owner
   * (`batch.owedTo`) goes to that node alone, when it still owns the record. `primaryOnly`: each
   * record to its first owner only (the store replicates it to the others).
   */
  // Kept long: one pass over a batch's bytes per batch sent, with the byte ranges per node in locals;
  // it runs for every batch of a ring write (bench/owners).
  split(batch: Batch, primaryOnly = false): RoutedBatch {
    const buf = batch.body;
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    const at = this.at;
    // Per node: byte ranges (start, end) of its records, merged where records are neighbours, and their batch positions.
    const ranges: Array<number[] | undefined> = [];
    const index: Array<number[] | undefined> = [];
    const copies = new Uint8Array(batch.count);
    let prevIdFrom = -1;
    let prevIdTo = -1;
    let prevMetricFrom = -1;
    let prevMetricTo = -1;
    let prevOwners: readonly number[] = [];
    let notOwedThere = 0;
    let owed = 0;
    const placement: Array<readonly number[]> | undefined = primaryOnly ? new Array<readonly number[]>(batch.count) : undefined;
    // Where the batcher saw each record, when it did (else each is found by a scan from the last one's end).
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
      let owners: readonly number[];
      if (at.escaped) {
        // Escapes in the id or metric: the placement key is the decoded text.
        const v = JSON.parse(Buffer.prototype.utf8Slice.call(buf, start, p) as string) as { id: string; metric: string };
        owners = this.ownersOf(v.id, v.metric);
        prevIdFrom = -1;
      } else if (prevIdFrom >= 0 && sameSeries(buf, at, prevIdFrom, prevIdTo, prevMetricFrom, prevMetricTo)) {
        owners = prevOwners;
      } else {
        owners = this.placedBytes(buf, view, at);
        prevIdFrom = at.idFrom;
        prevIdTo = at.idTo;
        prevMetricFrom = at.metricFrom;
        prevMetricTo = at.metricTo;
        prevOwners = owners;
      }
      const owedId = batch.owedTo?.[k];
      if (owedId !== undefined) {
        const i = this.nodeIndex(owedId);
        if (i !== undefined && owners.includes(i)) {
          owners = [i];
          owed++;
        } else notOwedThere++;
      }
      // Primary only: the first owner (the rest are kept for a fallback).
      let destinations = owners.length;
      if (placement) {
        placement[k] = owners;
        destinations = Math.min(1, destinations);
      }
      copies[k] = destinations;
      for (let o = 0; o < destinations; o++) {
        const i = owners[o]!;
        const r = (ranges[i] ??= []);
        (index[i] ??= []).push(k);
        // The record right after this node's last one (one comma between): one range for both.
        const last = r.length - 1;
        if (last > 0 && r[last] === start - 1 && buf[start - 1] === COMMA) r[last] = p;
        else r.push(start, p);
      }
    }
    const slices: OwnerSlice[] = [];
    ranges.forEach((r, node) => {
      if (!r) return;
      let size = r.length / 2 - 1; // a comma between ranges
      for (let j = 0; j < r.length; j += 2) size += r[j + 1]! - r[j]!;
      const idx = index[node]!;
      slices.push({ node, bytes: buf, ranges: r, size, count: idx.length, batch, index: idx });
    });
    return { slices, copies, owed, notOwedThere, ...(placement ? { placement } : {}) };
  }
}

/**
 * Slices for one node joined into one request: their records in order, one JSON array, its body
 * in a buffer from `take` (at least the size asked for) with each range copied once.
 */
export function joinSlices(node: number, slices: readonly OwnerSlice[], take: (size: number) => Buffer = (n) => Buffer.allocUnsafe(n)): OwnerRequest {
  let size = 1 + slices.length; // brackets, and a comma between slices
  for (const s of slices) size += s.size;
  const body = take(size);
  let o = 0;
  body[o++] = LBRACKET;
  for (const s of slices) {
    const r = s.ranges;
    for (let j = 0; j < r.length; j += 2) {
      if (o > 1) body[o++] = COMMA;
      o += s.bytes.copy(body, o, r[j], r[j + 1]);
    }
  }
  body[o++] = RBRACKET;
  return new JoinedRequest(
    node,
    body.subarray(0, o),
    slices.reduce((a, s) => a + s.count, 0),
    slices,
  );
}
