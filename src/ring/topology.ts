/**
 * A ring topology: which nodes make up the cluster, with what weight, and how many copies of
 * each metric it keeps. The shapes the store uses on the wire (`/topology/json` arrays, the
 * `<nodes>` XML) and tsnode's topology file all come in here and leave validated.
 *
 * Depends on nothing else in src/: the client and the reference node share it.
 */
import { TsnodeError } from '../tsnode-error.js';

/** `a` / `b`: the node serves one side of a two-sided ring. Absent: both sides (the usual case). */
export type RingSide = 'a' | 'b';

export interface RingNode {
  /** The node's identity, a UUID (lower case in files tsnode writes). */
  id: string;
  /** Host or IP the other nodes and clients reach it at. */
  address: string;
  /** The node's cluster (peer) port. */
  port: number;
  /** The node's HTTP API port: clients talk to `address:apiport`. */
  apiport: number;
  /** Slots the node holds on the ring: its share of the data. */
  weight: number;
  side?: RingSide;
}

export interface Topology {
  /** Copies of each metric the ring keeps (the store's `write_copies`, `n` in older answers). */
  writeCopies: number;
  nodes: RingNode[];
}

/** A topology that does not hold together; names the field, the value and what was expected. */
export class TopologyError extends TsnodeError {
  declare readonly code: 'invalid_topology';
  readonly field: string;
  readonly expected: string;
  constructor(field: string, message: string, expected: string) {
    super('invalid_topology', field ? `${field}: ${message}` : message, { hint: `expected ${expected}` });
    this.name = 'TopologyError';
    this.field = field;
    this.expected = expected;
  }
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** A host name or an IP address (IPv6 without brackets): no spaces, quotes, slashes or markup. */
const ADDRESS = /^[A-Za-z0-9._:%-]{1,253}$/;

/** The most slots a ring may have: compiling hashes each one, and placement searches them. */
export const MAX_RING_SLOTS = 1_000_000;

const show = (v: unknown): string => {
  const s = typeof v === 'string' ? JSON.stringify(v) : v === undefined ? 'missing' : (JSON.stringify(v) ?? String(v));
  return s.length > 60 ? `${s.slice(0, 57)}...` : s;
};

function intIn(value: unknown, field: string, min: number, max: number, what: string): number {
  // The store's XML carries numbers as attribute text; JSON as numbers. Both are accepted.
  const n = typeof value === 'string' && /^\d{1,6}$/.test(value.trim()) ? Number(value.trim()) : value;
  if (typeof n !== 'number' || !Number.isInteger(n) || n < min || n > max) {
    throw new TopologyError(field, `${show(value)} is not ${what}`, `a whole number from ${min} to ${max}`);
  }
  return n;
}

function sideOf(value: unknown, field: string): RingSide | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') throw new TopologyError(field, `${show(value)} is not a side`, '"a", "b" or "both"');
  const v = value.trim().toLowerCase();
  if (v === 'a' || v === 'b') return v;
  if (v === 'both' || v === '') return undefined;
  throw new TopologyError(field, `${show(value)} is not a side`, '"a", "b" or "both"');
}

export interface NodeCheckOptions {
  /** Lower-case the ids (tsnode's own files); a store's answer is taken byte for byte, as its hash covers the bytes. */
  lowerCaseIds: boolean;
}

/** Validates one node object (from JSON, or XML attributes as strings). */
export function checkNode(raw: unknown, field: string, opts: NodeCheckOptions): RingNode {
  if (raw === null || typeof raw !== 'object' || Array.isArray(raw)) {
    throw new TopologyError(field, `${show(raw)} is not a node object`, 'an object with id, address, port, apiport, weight');
  }
  const o = raw as Record<string, unknown>;
  if (typeof o.id !== 'string' || !UUID.test(o.id)) {
    throw new TopologyError(`${field}.id`, `${show(o.id)} is not a node identity`, 'a UUID like 1f846f26-0cfd-4df5-b4f1-e0930604e577');
  }
  if (typeof o.address !== 'string' || !ADDRESS.test(o.address)) {
    throw new TopologyError(`${field}.address`, `${show(o.address)} is not an address`, 'an IP address or host name, e.g. 10.8.20.1 or node1.example.com');
  }
  const port = intIn(o.port, `${field}.port`, 1, 65535, 'a port');
  const apiport = o.apiport === undefined ? port : intIn(o.apiport, `${field}.apiport`, 1, 65535, 'a port');
  const weight = intIn(o.weight, `${field}.weight`, 1, 65535, 'a weight');
  const side = sideOf(o.side, `${field}.side`);
  return { id: opts.lowerCaseIds ? o.id.toLowerCase() : o.id, address: o.address, port, apiport, weight, ...(side ? { side } : {}) };
}

/** Checks the topology as a whole: ids and API addresses unique, copies possible, size bounded. */
export function checkTopology(t: Topology, where = ''): Topology {
  const at = (f: string): string => (where ? `${where} ${f}` : f);
  if (t.nodes.length === 0) throw new TopologyError(at('nodes'), 'the topology lists no nodes', 'at least one node');
  const ids = new Map<string, number>();
  const endpoints = new Map<string, number>();
  t.nodes.forEach((n, i) => {
    const id = n.id.toLowerCase();
    const first = ids.get(id);
    if (first !== undefined) throw new TopologyError(at(`nodes[${i}].id`), `${n.id} is listed twice (also nodes[${first}])`, 'each node once');
    ids.set(id, i);
    const endpoint = `${n.address.toLowerCase()}:${n.apiport}`;
    const same = endpoints.get(endpoint);
    if (same !== undefined) throw new TopologyError(at(`nodes[${i}]`), `API address ${endpoint} is also nodes[${same}]'s`, 'each node at its own address:apiport');
    endpoints.set(endpoint, i);
  });
  const slots = t.nodes.reduce((s, n) => s + n.weight, 0);
  if (slots > MAX_RING_SLOTS) throw new TopologyError(at('nodes'), `the weights add up to ${slots} ring slots`, `at most ${MAX_RING_SLOTS} in all`);
  if (!Number.isInteger(t.writeCopies) || t.writeCopies < 1 || t.writeCopies > Math.min(255, t.nodes.length)) {
    throw new TopologyError(
      at('write_copies'),
      `${show(t.writeCopies)} copies cannot be kept on ${t.nodes.length} node${t.nodes.length === 1 ? '' : 's'}`,
      `a whole number from 1 to ${Math.min(255, t.nodes.length)} (each copy lives on a different node)`,
    );
  }
  return t;
}

/**
 * tsnode's topology file as JSON: `{"write_copies": 2, "nodes": [{"id", "address", "port",
 * "apiport", "weight"}, ...]}`. A bare `/topology/json` array (nodes carrying `n`) is read too.
 */
export function topologyFromJson(value: unknown, where = ''): Topology {
  const at = (f: string): string => (where ? `${where} ${f}` : f);
  if (Array.isArray(value)) return topologyFromNodeArray(value, where);
  if (value === null || typeof value !== 'object') {
    throw new TopologyError(at('(top level)'), `${show(value)} is not a topology`, '{"write_copies": 2, "nodes": [{"id", "address", "port", "apiport", "weight"}, ...]}');
  }
  const o = value as Record<string, unknown>;
  if (!Array.isArray(o.nodes)) throw new TopologyError(at('nodes'), `${show(o.nodes)} is not a list of nodes`, 'an array of {"id", "address", "port", "apiport", "weight"}');
  const nodes = o.nodes.map((n, i) => checkNode(n, at(`nodes[${i}]`), { lowerCaseIds: true }));
  const copies = o.write_copies ?? o.n;
  const writeCopies = copies === undefined ? Math.min(2, nodes.length) : intIn(copies, at('write_copies'), 1, 255, 'a number of copies');
  return checkTopology({ writeCopies, nodes }, where);
}

/** A store's `/topology/json/<hash>` answer: an array of nodes, each with the ring's copies as `n`. */
export function topologyFromNodeArray(value: readonly unknown[], where = ''): Topology {
  const at = (f: string): string => (where ? `${where} ${f}` : f);
  const nodes = value.map((n, i) => checkNode(n, at(`[${i}]`), { lowerCaseIds: false }));
  const ns = new Set(value.map((n) => (n && typeof n === 'object' ? (n as Record<string, unknown>).n : undefined)));
  if (ns.size !== 1) throw new TopologyError(at('n'), `the nodes disagree on the number of copies (${[...ns].map(show).join(', ')})`, 'the same n on every node');
  const writeCopies = intIn([...ns][0], at('[0].n'), 1, 255, 'a number of copies');
  return checkTopology({ writeCopies, nodes }, where);
}

/** The `/topology/json` array form: each node with the ring's copies as `n` (and its side when the ring is sided). */
export function topologyToNodeArray(t: Topology): Array<{ id: string; address: string; port: number; apiport: number; weight: number; n: number; side?: RingSide }> {
  return t.nodes.map((n) => ({ id: n.id, address: n.address, port: n.port, apiport: n.apiport, weight: n.weight, n: t.writeCopies, ...(n.side ? { side: n.side } : {}) }));
}

/** tsnode's topology file form (what `cluster up` writes and `serve --topology` reads). */
export function topologyToFile(t: Topology): { write_copies: number; nodes: RingNode[] } {
  return { write_copies: t.writeCopies, nodes: t.nodes.map((n) => ({ ...n })) };
}

/** The base URL of a ring node's API: `scheme://address:apiport` (IPv6 in brackets). */
export function nodeApiUrl(node: Pick<RingNode, 'address' | 'apiport'>, scheme: 'http' | 'https' = 'http'): string {
  const host = node.address.includes(':') ? `[${node.address}]` : node.address;
  return `${scheme}://${host}:${node.apiport}`;
}
