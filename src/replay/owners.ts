/* eslint-disable @typescript-eslint/no-unsafe-call, @typescript-eslint/no-unsafe-member-access -- Buffer's latin1Slice/utf8Slice: untyped Node internals, used on purpose (no subarray per field) */
/**
 * Owner routing for the write pipeline: the records of one batch, split by the ring into one
 * slice per destination node, each record in the slices of exactly its `write_copies` owners.
 *
 * The batch body is read as bytes (no string per record): a small scanner finds each record's end
 * and its id and metric, skipping every other value; a record whose id or metric has an escape is
 * parsed. Each slice's body is the records' bytes copied as they were read (neighbours in one
 * copy). Placement is cached per metric (a ring placement costs a few microseconds).
 */
import { sameBytes } from '../protocol/record-scan.js';
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
const COLON = 0x3a;
const LBRACE = 0x7b;
const RBRACE = 0x7d;
const LBRACKET = 0x5b;
const RBRACKET = 0x5d;

const isWs = (c: number | undefined): boolean => c === 0x20 || c === 0x0a || c === 0x0d || c === 0x09;

/** The end of the JSON value at buf[p] (a string, an object or array with what is inside, or a number or word). */
function skipValue(buf: Uint8Array, p: number): number {
  const c = buf[p];
  if (c === QUOTE) {
    for (p++; p < buf.length && buf[p] !== QUOTE; p++) if (buf[p] === BACKSLASH) p++;
    return p + 1;
  }
  if (c === LBRACE || c === LBRACKET) {
    let depth = 0;
    for (; p < buf.length; p++) {
      const d = buf[p]!;
      if (d === QUOTE) {
        for (p++; p < buf.length && buf[p] !== QUOTE; p++) if (buf[p] === BACKSLASH) p++;
      } else if (d === LBRACE || d === LBRACKET) depth++;
      else if (d === RBRACE || d === RBRACKET) {
        depth--;
        if (depth === 0) return p + 1;
      }
    }
    throw new Error('a batch body ends inside a record');
  }
  // A number, true, false or null: up to the next separator.
  while (p < buf.length) {
    const d = buf[p]!;
    if (d === COMMA || d === RBRACE || d === RBRACKET || isWs(d)) return p;
    p++;
  }
  return p;
}

/**
 * Where the record object at buf[p] ends, and where its `id` and `metric` strings are (the bytes
 * between the quotes). Only what routing needs: other values are skipped, not read. A key or an
 * id or metric with an escape sets `escaped` (the caller parses that record instead).
 */
interface Located {
  end: number;
  idFrom: number;
  idTo: number;
  metricFrom: number;
  metricTo: number;
  escaped: boolean;
}

const ID_KEY = [0x69, 0x64]; // id
const METRIC_KEY = [0x6d, 0x65, 0x74, 0x72, 0x69, 0x63]; // metric

function keyIs(buf: Uint8Array, from: number, to: number, key: readonly number[]): boolean {
  if (to - from !== key.length) return false;
  for (let i = 0; i < key.length; i++) if (buf[from + i] !== key[i]) return false;
  return true;
}

const METRIC_OPEN = Buffer.from('{"metric":"');
const ID_OPEN = Buffer.from('{"id":"');
const THEN_ID = Buffer.from('","id":"');
const THEN_METRIC = Buffer.from('","metric":"');

function startsWith(buf: Uint8Array, p: number, prefix: Uint8Array): boolean {
  for (let i = 0; i < prefix.length; i++) if (buf[p + i] !== prefix[i]) return false;
  return true;
}

/** The end of a string's text from `p` (its closing quote), or -1 when it has an escape. */
function plainStringEnd(buf: Buffer, p: number): number {
  const q = buf.indexOf(QUOTE, p);
  for (let i = p; i < q; i++) if (buf[i] === BACKSLASH) return -1;
  return q;
}

/**
 * The common shape, as JSON.stringify writes a record: `{"metric":"...","id":"...",...}` (or id
 * first) with no object or array after them. Anything else (spaces around the first two keys,
 * escapes, parts) returns false and `locate` scans the record key by key.
 */
function locateFast(buf: Buffer, p: number, out: Located): boolean {
  let idFirst: boolean;
  if (startsWith(buf, p, METRIC_OPEN)) idFirst = false;
  else if (startsWith(buf, p, ID_OPEN)) idFirst = true;
  else return false;
  const aFrom = p + (idFirst ? ID_OPEN.length : METRIC_OPEN.length);
  const aTo = plainStringEnd(buf, aFrom);
  if (aTo < 0) return false;
  const then = idFirst ? THEN_METRIC : THEN_ID;
  if (!startsWith(buf, aTo, then)) return false;
  const bFrom = aTo + then.length;
  const bTo = plainStringEnd(buf, bFrom);
  if (bTo < 0) return false;
  // The rest, up to the `}` that closes the record: one pass that only tracks whether it is inside
  // a string; an escape, an object or an array (parts) is left to the full scan.
  let end = -1;
  let inString = false;
  for (let i = bTo + 1; i < buf.length; i++) {
    const c = buf[i]!;
    if (inString) {
      if (c === QUOTE) inString = false;
      else if (c === BACKSLASH) return false;
    } else if (c === QUOTE) {
      inString = true;
    } else if (c === RBRACE) {
      end = i;
      break;
    } else if (c === LBRACE || c === LBRACKET) return false;
  }
  if (end < 0) return false;
  out.end = end + 1;
  out.escaped = false;
  if (idFirst) {
    out.idFrom = aFrom;
    out.idTo = aTo;
    out.metricFrom = bFrom;
    out.metricTo = bTo;
  } else {
    out.metricFrom = aFrom;
    out.metricTo = aTo;
    out.idFrom = bFrom;
    out.idTo = bTo;
  }
  return true;
}

function locate(buf: Buffer, p: number, out: Located): void {
  if (locateFast(buf, p, out)) return;
  out.idFrom = out.idTo = out.metricFrom = out.metricTo = -1;
  out.escaped = false;
  if (buf[p] !== LBRACE) throw new Error('a batch record is not a JSON object');
  p++;
  for (;;) {
    while (isWs(buf[p])) p++;
    if (buf[p] === RBRACE) break;
    if (buf[p] !== QUOTE) throw new Error('a batch record has a malformed key');
    const kFrom = ++p;
    while (p < buf.length && buf[p] !== QUOTE) {
      if (buf[p] === BACKSLASH) {
        out.escaped = true;
        p++;
      }
      p++;
    }
    const kTo = p++;
    while (isWs(buf[p])) p++;
    if (buf[p] !== COLON) throw new Error('a batch record has a key without a value');
    p++;
    while (isWs(buf[p])) p++;
    const isId = keyIs(buf, kFrom, kTo, ID_KEY);
    const isMetric = !isId && keyIs(buf, kFrom, kTo, METRIC_KEY);
    const vFrom = p;
    p = skipValue(buf, p);
    if ((isId || isMetric) && buf[vFrom] === QUOTE) {
      for (let i = vFrom + 1; i < p - 1; i++) if (buf[i] === BACKSLASH) out.escaped = true;
      // The last of a repeated key wins, as in JSON.parse.
      if (isId) {
        out.idFrom = vFrom + 1;
        out.idTo = p - 1;
      } else {
        out.metricFrom = vFrom + 1;
        out.metricTo = p - 1;
      }
    }
    while (isWs(buf[p])) p++;
    if (buf[p] === COMMA) p++;
  }
  out.end = p + 1;
  if (out.idFrom < 0 || out.metricFrom < 0) out.escaped = true;
}

const latin1 = (buf: Uint8Array, from: number, to: number): string => Buffer.prototype.latin1Slice.call(buf, from, to) as string;

/** A remembered placement: the id's and metric's bytes as they were in a record, and its owners. */
interface Placed {
  id: Uint8Array;
  metric: Uint8Array;
  owners: readonly number[];
  /** Another placement whose bytes hash the same. */
  next: Placed | undefined;
}

/** FNV-1a over the id's bytes, a separator, and the metric's bytes; kept to 30 bits (a small integer key). */
function hashOf(buf: Uint8Array, idFrom: number, idTo: number, metricFrom: number, metricTo: number): number {
  let h = 0x811c9dc5;
  for (let i = idFrom; i < idTo; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  h = Math.imul(h ^ 0xff, 0x01000193);
  for (let i = metricFrom; i < metricTo; i++) h = Math.imul(h ^ buf[i]!, 0x01000193);
  return h & 0x3fffffff;
}

function equalBytes(kept: Uint8Array, buf: Uint8Array, from: number, to: number): boolean {
  if (kept.length !== to - from) return false;
  for (let i = 0; i < kept.length; i++) if (kept[i] !== buf[from + i]) return false;
  return true;
}

/** Routes records to their owners on a ring; indices are positions in the ring's topology. */
export class OwnerRouter {
  readonly ring: Ring;
  private readonly byId: Map<string, number>;
  /** Placements by key (`ownersOf`). */
  private readonly cache = new Map<string, readonly number[]>();
  /**
   * Placements by the id's and metric's bytes as they are in a record, hashed (no string is made
   * on a hit); a miss computes the placement key properly (lower-case id, decoded metric).
   */
  private readonly byBytes = new Map<number, Placed>();
  private readonly at: Located = { end: 0, idFrom: -1, idTo: -1, metricFrom: -1, metricTo: -1, escaped: false };

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

  /** The owners of the record whose id and metric `at` locates in `buf`, from their bytes. */
  private placedBytes(buf: Uint8Array, at: Located): readonly number[] {
    const h = hashOf(buf, at.idFrom, at.idTo, at.metricFrom, at.metricTo);
    const first = this.byBytes.get(h);
    for (let e = first; e !== undefined; e = e.next) {
      if (equalBytes(e.id, buf, at.idFrom, at.idTo) && equalBytes(e.metric, buf, at.metricFrom, at.metricTo)) return e.owners;
    }
    const owners = this.place(latin1(buf, at.idFrom, at.idTo), Buffer.prototype.utf8Slice.call(buf, at.metricFrom, at.metricTo) as string);
    if (this.byBytes.size >= this.maxCached) this.byBytes.clear();
    const kept: Placed = { id: Uint8Array.prototype.slice.call(buf, at.idFrom, at.idTo), metric: Uint8Array.prototype.slice.call(buf, at.metricFrom, at.metricTo), owners, next: this.byBytes.get(h) };
    this.byBytes.set(h, kept);
    return owners;
  }

  /**
   * Splits a batch (its body: `[record,record,...]`, records as read and already validated) into
   * one slice per destination node. A record from a rejects-file line that names its owner
   * (`batch.owedTo`) goes to that node alone, when it still owns the record.
   */
  split(batch: Batch): RoutedBatch {
    const buf = batch.body;
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
    let p = 0;
    while (isWs(buf[p])) p++;
    if (buf[p] !== LBRACKET) throw new Error('a batch body is not a JSON array');
    p++;
    for (let k = 0; k < batch.count; k++) {
      while (isWs(buf[p]) || buf[p] === COMMA) p++;
      const start = p;
      locate(buf, p, at);
      p = at.end;
      let owners: readonly number[];
      if (at.escaped) {
        // Escapes in the id or metric: the placement key is the decoded text.
        const v = JSON.parse(Buffer.prototype.utf8Slice.call(buf, start, p) as string) as { id: string; metric: string };
        owners = this.ownersOf(v.id, v.metric);
        prevIdFrom = -1;
      } else if (
        prevIdFrom >= 0 &&
        sameBytes(buf, at.idFrom, at.idTo, prevIdFrom, prevIdTo) &&
        sameBytes(buf, at.metricFrom, at.metricTo, prevMetricFrom, prevMetricTo)
      ) {
        owners = prevOwners;
      } else {
        owners = this.placedBytes(buf, at);
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
      copies[k] = owners.length;
      for (let o = 0; o < owners.length; o++) {
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
      let size = r.length / 2 + 1; // brackets, and a comma between ranges
      for (let j = 0; j < r.length; j += 2) size += r[j + 1]! - r[j]!;
      const body = Buffer.allocUnsafe(size);
      let o = 0;
      body[o++] = LBRACKET;
      for (let j = 0; j < r.length; j += 2) {
        if (j > 0) body[o++] = COMMA;
        o += buf.copy(body, o, r[j], r[j + 1]);
      }
      body[o] = RBRACKET;
      const idx = index[node]!;
      slices.push({ node, body, count: idx.length, records: idx.map((k) => batch.records[k]!), lines: idx.map((k) => batch.lines[k]!), index: idx });
    });
    return { slices, copies, owed, notOwedThere };
  }
}

/** Slices for one node joined into one request body: their records in order, one JSON array. */
export function joinSlices(node: number, slices: readonly OwnerSlice[]): OwnerSlice {
  if (slices.length === 1) return slices[0]!;
  let size = 1 + slices.length; // brackets, and a comma between slices
  for (const s of slices) size += s.body.length - 2;
  const body = Buffer.allocUnsafe(size);
  let o = 0;
  body[o++] = LBRACKET;
  slices.forEach((s, k) => {
    if (k > 0) body[o++] = COMMA;
    o += s.body.copy(body, o, 1, s.body.length - 1);
  });
  body[o++] = RBRACKET;
  return {
    node,
    body,
    count: slices.reduce((a, s) => a + s.count, 0),
    // concat, not flatMap: these are thousands of numbers a request, and flatMap is several times slower.
    records: ([] as number[]).concat(...slices.map((s) => s.records)),
    lines: ([] as number[]).concat(...slices.map((s) => s.lines)),
    index: ([] as number[]).concat(...slices.map((s) => s.index)),
  };
}
