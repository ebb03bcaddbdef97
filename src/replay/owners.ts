/**
 * Owner routing for the write pipeline: the records of one batch, split by the ring into one
 * slice per destination node, each record in the slices of exactly its `write_copies` owners.
 *
 * The batch body is read as bytes (no string per record): the record scanner finds each plain
 * record's end and its id and metric; a record it declines (parts, escapes) is parsed. Each
 * slice's body is the records' bytes copied as they were read. Placement is cached per metric
 * (records of one metric tend to come together, and a ring placement costs a few microseconds).
 */
import { SCAN_SLOTS, metricAt, sameBytes, scanNntRecord, uuidAt, type ScannedStrings } from '../protocol/record-scan.js';
import type { Batch } from '../records/batch.js';
import { metricKey, type Ring } from '../ring/index.js';

/** The records of a batch bound for one node. */
export interface OwnerSlice {
  /** The node: its index in the ring's topology (and in the replay's clients). */
  node: number;
  body: Buffer;
  count: number;
  /** Input record numbers and lines, in body order. */
  records: number[];
  lines: number[];
  /** Each record's position in the batch. */
  index: number[];
}

export interface RoutedBatch {
  slices: OwnerSlice[];
  /** Per record of the batch: how many nodes it was routed to (its copies). */
  copies: Uint8Array;
  /** Records from rejects-file lines that name their owner: routed to that node alone. */
  owed: number;
  /** Records whose rejects-file line named a node that does not own them (now): routed to all their owners. */
  notOwedThere: number;
}

const QUOTE = 0x22;
const BACKSLASH = 0x5c;
const COMMA = 0x2c;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

const isWs = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The end of the JSON object or array at buf[p] (strings and nesting skipped). */
function skipValue(buf: Uint8Array, p: number): number {
  let depth = 0;
  for (; p < buf.length; p++) {
    const c = buf[p]!;
    if (c === QUOTE) {
      for (p++; p < buf.length && buf[p] !== QUOTE; p++) if (buf[p] === BACKSLASH) p++;
    } else if (c === LBRACE || c === LBRACKET) depth++;
    else if (c === RBRACE || c === RBRACKET) {
      depth--;
      if (depth === 0) return p + 1;
    }
  }
  throw new Error('a batch body ends inside a record');
}

/** Routes records to their owners on a ring; indices are positions in the ring's topology. */
export class OwnerRouter {
  readonly ring: Ring;
  private readonly byId: Map<string, number>;
  private readonly cache = new Map<string, readonly number[]>();
  private readonly numbers = new Float64Array(SCAN_SLOTS);

  constructor(
    ring: Ring,
    /** Placements remembered before the cache starts over: memory stays bounded on any input. */
    private readonly maxCached = 100_000,
  ) {
    this.ring = ring;
    this.byId = new Map(ring.topology.nodes.map((n, k) => [n.id.toLowerCase(), k]));
  }

  get nodeCount(): number {
    return this.ring.topology.nodes.length;
  }

  /** The ring node with this identity, or undefined. */
  nodeIndex(id: string): number | undefined {
    return this.byId.get(id.toLowerCase());
  }

  /** The owners of `lower(uuid)-metric`, primary first, as topology indices. */
  ownersOfKey(key: string): readonly number[] {
    let owners = this.cache.get(key);
    if (owners === undefined) {
      owners = this.ring.ownersOfKey(key).map((n) => this.byId.get(n.id.toLowerCase())!);
      if (this.cache.size >= this.maxCached) this.cache.clear();
      this.cache.set(key, owners);
    }
    return owners;
  }

  ownersOf(uuid: string, metric: string): readonly number[] {
    return this.ownersOfKey(metricKey(uuid, metric));
  }

  /**
   * Splits a batch (its body: `[record,record,...]`, records as read and already validated) into
   * one slice per destination node. A record from a rejects-file line that names its owner
   * (`batch.owedTo`) goes to that node alone, when it still owns the record.
   */
  split(batch: Batch): RoutedBatch {
    const buf = batch.body;
    const perNode: Array<{ ranges: number[]; records: number[]; lines: number[]; index: number[] } | undefined> = [];
    const copies = new Uint8Array(batch.count);
    const at: ScannedStrings = { idFrom: -1, idTo: -1, metricFrom: -1, metricTo: -1 };
    let prev: { idFrom: number; idTo: number; metricFrom: number; metricTo: number; owners: readonly number[] } | undefined;
    let notOwedThere = 0;
    let owed = 0;
    let p = 0;
    while (isWs(buf[p])) p++;
    if (buf[p] !== LBRACKET) throw new Error('a batch body is not a JSON array');
    p++;
    for (let k = 0; k < batch.count; k++) {
      while (isWs(buf[p]) || buf[p] === COMMA) p++;
      const start = p;
      let owners: readonly number[];
      const end = scanNntRecord(buf, p, this.numbers, 0, undefined, at);
      if (end >= 0) {
        p = end;
        if (prev && sameBytes(buf, at.idFrom, at.idTo, prev.idFrom, prev.idTo) && sameBytes(buf, at.metricFrom, at.metricTo, prev.metricFrom, prev.metricTo)) {
          owners = prev.owners;
        } else {
          owners = this.ownersOf(uuidAt(buf, at.idFrom, at.idTo) ?? '', metricAt(buf, at.metricFrom, at.metricTo) ?? '');
          prev = { idFrom: at.idFrom, idTo: at.idTo, metricFrom: at.metricFrom, metricTo: at.metricTo, owners };
        }
      } else {
        // Not a plain record (parts, escapes): parse it; it was validated, so id and metric are there.
        p = skipValue(buf, p);
        const v = JSON.parse(Buffer.prototype.utf8Slice.call(buf, start, p) as string) as { id: string; metric: string };
        owners = this.ownersOf(v.id, v.metric);
      }
      const owedId = batch.owedTo?.[k];
      if (owedId !== undefined) {
        const i = this.nodeIndex(owedId);
        if (i !== undefined && owners.includes(i)) {
          owners = [i];
          owed++;
        } else notOwedThere++;
      }
      copies[k] = owners.length;
      for (const i of owners) {
        const s = (perNode[i] ??= { ranges: [], records: [], lines: [], index: [] });
        s.ranges.push(start, p);
        s.records.push(batch.records[k]!);
        s.lines.push(batch.lines[k]!);
        s.index.push(k);
      }
    }
    const slices: OwnerSlice[] = [];
    perNode.forEach((s, node) => {
      if (!s) return;
      let size = 1 + s.records.length; // brackets and commas
      for (let j = 0; j < s.ranges.length; j += 2) size += s.ranges[j + 1]! - s.ranges[j]!;
      const body = Buffer.allocUnsafe(size);
      let o = 0;
      body[o++] = LBRACKET;
      for (let j = 0; j < s.ranges.length; j += 2) {
        if (j > 0) body[o++] = COMMA;
        o += buf.copy(body, o, s.ranges[j]!, s.ranges[j + 1]!);
      }
      body[o++] = RBRACKET;
      slices.push({ node, body: body.subarray(0, o), count: s.records.length, records: s.records, lines: s.lines, index: s.index });
    });
    return { slices, copies, owed, notOwedThere };
  }
}
