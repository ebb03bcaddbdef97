/**
 * The topology hash and metric placement, computed byte for byte as the store's clients compute
 * them (circonus-labs/gosnowth topology.go), so that tsnode, the reference node and a production
 * ring agree on which nodes own a metric.
 *
 * The hash: SHA-256 over, for each node in topology order, its id bytes, two zero bytes, its
 * weight as a big-endian uint16 (and its side as a uint16 when the ring is sided); then, when the
 * ring keeps other than 2 copies, 38 zero bytes and the copies as a uint16 (plus two zero bytes
 * when sided). A ring of 2 copies hashes without that tail: the store's older format had no copies.
 *
 * The ring: each node holds `weight` slots; slot w sits at SHA-256 of a 38-byte buffer holding the
 * id and w as a big-endian uint16 in bytes 36-37. On a sided ring the top bit of a slot's first
 * byte is its side (a: 0, b: 1). A metric's key is `lower(uuid)-metric`; its primary owner is the
 * node of the first slot at or after SHA-256(key), wrapping around; each further copy flips the top
 * bit of that location and takes the next slot of a node not chosen yet (on the matching side).
 */
import type * as Crypto from 'node:crypto';
import { createRequire } from 'node:module';
import { TopologyError, type RingNode, type Topology } from './topology.js';

// node:crypto (~3 ms to load) only once something is hashed: a read from a single node, which
// loads the ring's code to understand a topology answer, never places a metric.
const require = createRequire(import.meta.url);
let loaded: typeof Crypto | undefined;
const crypto = (): typeof Crypto => (loaded ??= require('node:crypto') as typeof Crypto);

const SIDE_CODE = { a: 1, b: 2 } as const;

function u16(value: number): Buffer {
  const b = Buffer.alloc(2);
  b.writeUInt16BE(value & 0xffff);
  return b;
}

const isSided = (t: Topology): boolean => t.nodes.some((n) => n.side !== undefined);

/** The hex SHA-256 a store announces as the topology's `current` (or `next`) hash. */
export function topologyHash(t: Topology): string {
  const sided = isSided(t);
  const h = crypto().createHash('sha256');
  for (const n of t.nodes) {
    h.update(Buffer.from(n.id, 'utf8'));
    h.update(Buffer.from([0, 0]));
    h.update(u16(n.weight));
    if (sided) h.update(u16(n.side ? SIDE_CODE[n.side] : 0));
  }
  if (t.writeCopies !== 2) {
    h.update(Buffer.alloc(38));
    h.update(u16(t.writeCopies));
    if (sided) h.update(Buffer.alloc(2));
  }
  return h.digest('hex');
}

/** The placement key of a metric: the check UUID in lower case, a dash, the metric name as is. */
export function metricKey(uuid: string, metric: string): string {
  return `${uuid.toLowerCase()}-${metric}`;
}

/** SHA-256 of `data`, a string as UTF-8 (the one-shot form: about twice as fast as a Hash object for short inputs). */
const sha256 = (data: Buffer | string): Buffer => crypto().hash('sha256', data, 'buffer');

/** Where slot `w` of a node sits on the ring. */
export function slotLocation(node: Pick<RingNode, 'id' | 'side'>, w: number): Buffer {
  const buf = Buffer.alloc(38);
  Buffer.from(node.id, 'utf8').copy(buf, 0, 0, 38);
  buf.writeUInt16BE(w, 36);
  const loc = sha256(buf);
  if (node.side === 'a') loc[0] = loc[0]! & 0x7f;
  else if (node.side === 'b') loc[0] = loc[0]! | 0x80;
  return loc;
}

/** The first 6 bytes of a location as a number (exact: 48 bits): most comparisons end there. */
const prefixOf = (loc: Buffer): number => ((loc[0]! * 256 + loc[1]!) * 256 + loc[2]!) * 2 ** 24 + ((loc[3]! << 16) | (loc[4]! << 8) | loc[5]!);

/**
 * Every slot of a topology in ring order, as the store's `/toporing` lists them: the node, the
 * slot's number from 1 to the node's weight (slot w is `idx` w + 1), and where it sits as a
 * fraction of the ring, from 0 up to 1 (its leading 48 bits over 2^48).
 */
export function ringSlots(t: Topology): Array<{ id: string; idx: number; location: number }> {
  const out: Array<{ id: string; idx: number; location: number; loc: Buffer }> = [];
  for (const n of t.nodes) {
    for (let w = 0; w < n.weight; w++) {
      const loc = slotLocation(n, w);
      out.push({ id: n.id, idx: w + 1, location: prefixOf(loc) / 2 ** 48, loc });
    }
  }
  out.sort((x, y) => Buffer.compare(x.loc, y.loc));
  return out.map(({ id, idx, location }) => ({ id, idx, location }));
}

/** A compiled ring: the topology, its hash, and its slots in ring order. */
export class Ring {
  readonly topology: Topology;
  readonly hash: string;
  readonly sided: boolean;
  /** Slot locations in ring order; `prefixes[i]` is the leading 48 bits of `locations[i]`. */
  private readonly locations: Buffer[];
  private readonly prefixes: Float64Array;
  /** `owner[i]`: the index (in topology.nodes) of slot i's node. */
  private readonly owner: Uint32Array;

  private constructor(topology: Topology) {
    this.topology = topology;
    this.hash = topologyHash(topology);
    this.sided = isSided(topology);
    const slots: Array<{ loc: Buffer; prefix: number; node: number }> = [];
    topology.nodes.forEach((n, i) => {
      for (let w = 0; w < n.weight; w++) {
        const loc = slotLocation(n, w);
        slots.push({ loc, prefix: prefixOf(loc), node: i });
      }
    });
    if (slots.length === 0) throw new TopologyError('nodes', 'the ring has no slots (every weight is 0)', 'at least one node with a weight above 0');
    slots.sort((x, y) => x.prefix - y.prefix || Buffer.compare(x.loc, y.loc));
    this.locations = slots.map((s) => s.loc);
    this.prefixes = Float64Array.from(slots.map((s) => s.prefix));
    this.owner = Uint32Array.from(slots.map((s) => s.node));
  }

  /** Builds the ring (hashes every slot once). */
  static compile(topology: Topology): Ring {
    return new Ring(topology);
  }

  get writeCopies(): number {
    return this.topology.writeCopies;
  }

  get slotCount(): number {
    return this.locations.length;
  }

  /** The first slot at or after `loc`, wrapping to 0 past the end. */
  private firstAtOrAfter(loc: Buffer): number {
    const prefix = prefixOf(loc);
    let lo = 0;
    let hi = this.prefixes.length;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      const p = this.prefixes[mid]!;
      if (p < prefix || (p === prefix && Buffer.compare(this.locations[mid]!, loc) < 0)) lo = mid + 1;
      else hi = mid;
    }
    return lo === this.prefixes.length ? 0 : lo;
  }

  /** The next node (by index) clockwise from `loc` that is not taken yet and serves the location's side. */
  private next(loc: Buffer, taken: readonly number[]): number | undefined {
    const side = this.sided ? ((loc[0]! & 0x80) === 0 ? 0 : 0x80) : undefined;
    // As the store scans: from the start to the end of the ring, then once more from slot 0.
    let i = this.firstAtOrAfter(loc);
    for (let lap = 0; lap < 2; lap++, i = 0) {
      for (; i < this.locations.length; i++) {
        if (side !== undefined && (this.locations[i]![0]! & 0x80) !== side) continue;
        const node = this.owner[i]!;
        if (!taken.includes(node)) return node;
      }
    }
    return undefined;
  }

  /** The owners of an arbitrary key, primary first: at most `copies` distinct nodes. */
  ownersOfKey(key: string, copies: number = this.writeCopies): RingNode[] {
    const loc = sha256(key);
    const taken: number[] = [];
    const out: RingNode[] = [];
    for (let c = 0; c < copies; c++) {
      const node = this.next(loc, taken);
      if (node === undefined) break;
      taken.push(node);
      out.push(this.topology.nodes[node]!);
      loc[0] = loc[0]! ^ 0x80;
    }
    return out;
  }

  /** The nodes that own a metric, primary first: `write_copies` of them (fewer only if the ring is smaller). */
  ownersOf(uuid: string, metric: string, copies: number = this.writeCopies): RingNode[] {
    return this.ownersOfKey(metricKey(uuid, metric), copies);
  }
}
