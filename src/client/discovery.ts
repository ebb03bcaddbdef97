/**
 * Discovering a ring from one node: what the node says about itself (`GET /state`, or the stats
 * tree at `GET /stats.json` where /state is missing), then the topology it names
 * (`GET /topology/json/<hash>`, or the XML form the production client reads). Node URLs are built
 * from each node's address and API port, with the seed's scheme.
 *
 * Nodes without these endpoints (older store versions, plain lists of reference nodes started
 * without --topology) are reported as such, never guessed at: a DiscoveryError says which.
 */
import { TsnodeError } from '../tsnode-error.js';
import { NO_TOPOLOGY, type WireNodeState, type WireNodeStats } from '../protocol/cluster.js';
import { nodeApiUrl, Ring, topologyHash, type RingNode, type Topology } from '../ring/index.js';
import { NodeHttpError, NodeRequestError } from './errors.js';
import type { CallOptions, NodeClient } from './node-client.js';

/** What one node says about itself. Absent facts are null (the node did not report them). */
export interface NodeSelf {
  url: string;
  identity: string;
  /** Its current topology hash, or null when it has none (`-`). */
  current: string | null;
  /** The topology it is moving to, or null when no rebalance is in progress (`-`). */
  next: string | null;
  version: string | null;
  /** Smallest numeric span (base_rollup), seconds. */
  baseRollup: number | null;
  nntRollups: number[] | null;
  histogramRollups: number[] | null;
  /**
   * How far its own data is behind its peers' (`/state` max_peer_lag, seconds); null when it does not
   * say (stats.json, or a node without it).
   */
  lagSeconds?: number | null;
  /** Which endpoint answered. */
  via: 'state' | 'stats.json';
}

export type DiscoveryErrorCode = 'no_cluster_endpoints' | 'no_topology' | 'topology_unavailable';

/** The node answered, but not with what discovery needs; the message says what, the hint what to do. */
export class DiscoveryError extends TsnodeError {
  declare readonly code: DiscoveryErrorCode;
  declare readonly hint: string;
  readonly node: string;
  constructor(node: string, code: DiscoveryErrorCode, message: string, hint: string) {
    super(code, `${node}: ${message}`, { hint });
    this.name = 'DiscoveryError';
    this.node = node;
  }
}

const hashOrNull = (h: string | undefined | null): string | null => (h === undefined || h === null || h === '' || h === NO_TOPOLOGY ? null : h.toLowerCase());

export function selfFromState(url: string, s: WireNodeState): NodeSelf {
  const nnt = s.nnt?.rollups ?? s.rollups ?? null;
  return {
    url,
    identity: s.identity.toLowerCase(),
    current: hashOrNull(s.current),
    next: hashOrNull(s.next),
    version: s.version ?? null,
    baseRollup: s.base_rollup ?? (nnt && nnt.length ? Math.min(...nnt) : null),
    nntRollups: nnt ? [...nnt].sort((a, b) => a - b) : null,
    histogramRollups: s.histogram?.rollups ? [...s.histogram.rollups].sort((a, b) => a - b) : null,
    lagSeconds: peerLagOf(s),
    via: 'state',
  };
}

/** `max_peer_lag` when it is a number of seconds (a string of one too), else null. */
export function peerLagOf(s: WireNodeState): number | null {
  const raw = (s as Record<string, unknown>).max_peer_lag;
  const n = typeof raw === 'number' ? raw : typeof raw === 'string' && raw.trim() !== '' ? Number(raw) : NaN;
  return Number.isFinite(n) && n >= 0 ? n : null;
}

const leafText = (l: { _value?: unknown } | undefined): string | undefined => (typeof l?._value === 'string' ? l._value : undefined);

export function selfFromStats(url: string, s: WireNodeStats): NodeSelf | undefined {
  const identity = leafText(s.identity);
  if (!identity) return undefined;
  return {
    url,
    identity: identity.toLowerCase(),
    current: hashOrNull(leafText(s.topology?.current)),
    next: hashOrNull(leafText(s.topology?.next)),
    version: leafText(s.semver) ?? leafText(s.version) ?? null,
    baseRollup: null,
    nntRollups: null,
    histogramRollups: null,
    via: 'stats.json',
  };
}

const isStatus = (err: unknown, status: number): boolean => err instanceof NodeHttpError && err.status === status;

/**
 * Asks a node who it is: `GET /state`, and `GET /stats.json` when /state is not there (404).
 * Unreachable nodes and failures other than a 404 throw as NodeRequestError; a node with neither
 * endpoint throws DiscoveryError `no_cluster_endpoints`. `onState` gets the `/state` answer, for a
 * caller that needs more of it (receipts: free space) without asking again.
 */
export async function probeNode(client: NodeClient, call: CallOptions = {}, onState?: (state: WireNodeState) => void): Promise<NodeSelf> {
  try {
    const state = await client.nodeState(call);
    onState?.(state);
    return selfFromState(client.url, state);
  } catch (err) {
    if (!isStatus(err, 404)) throw err;
  }
  let stats: WireNodeStats;
  try {
    stats = await client.nodeStats(call);
  } catch (err) {
    if (!isStatus(err, 404)) throw err;
    throw new DiscoveryError(
      client.url,
      'no_cluster_endpoints',
      'answers neither GET /state nor GET /stats.json (404): an older store version, or not a node of the store',
      'list the nodes yourself with --nodes (a file or a comma list)',
    );
  }
  const self = selfFromStats(client.url, stats);
  if (!self) {
    throw new NodeRequestError(client.url, 'bad_answer', '/stats.json has no identity leaf ({"identity": {"_value": "<uuid>"}})', { retryable: false });
  }
  return self;
}

/** A ring node with the URL its API is reached at. */
export interface DiscoveredNode extends RingNode {
  url: string;
}

export interface DiscoveredRing {
  /** The node the ring was read from. */
  seed: NodeSelf;
  /** The hash the seed announces (its `current`). */
  hash: string;
  /** The topology the ring is moving to, or null (no rebalance in progress). */
  next: string | null;
  topology: Topology;
  /** The compiled ring, for placement (compiled when first read). */
  readonly ring: Ring;
  nodes: DiscoveredNode[];
  /** Which form of the topology answered. */
  format: 'json' | 'xml';
  /**
   * Whether the topology hashes, as tsnode computes it, to the hash the seed announced. When not,
   * the node list is still the seed's, but placement computed here may differ from the store's.
   */
  verified: boolean;
  computedHash: string;
}

/** The scheme of a node URL, for building the other nodes' URLs. */
function schemeOf(url: string): 'http' | 'https' {
  return url.toLowerCase().startsWith('https:') ? 'https' : 'http';
}

/** Fetches a topology by hash: the JSON form first, the XML form (what gosnowth reads) when JSON is missing. */
export async function fetchTopology(client: NodeClient, hash: string, call: CallOptions = {}): Promise<{ topology: Topology; format: 'json' | 'xml' }> {
  try {
    return { topology: await client.topology(hash, 'json', call), format: 'json' };
  } catch (err) {
    if (!isStatus(err, 404)) throw err;
  }
  try {
    return { topology: await client.topology(hash, 'xml', call), format: 'xml' };
  } catch (err) {
    if (!isStatus(err, 404)) throw err;
    throw new DiscoveryError(
      client.url,
      'topology_unavailable',
      `announces topology ${hash} but answers 404 to both /topology/json/${hash} and /topology/xml/${hash}`,
      'the node may be changing topology: try again, or list the nodes with --nodes',
    );
  }
}

/** Builds the discovered ring from a topology: URLs from address and API port, with `scheme`. */
export function ringFromTopology(seed: NodeSelf, hash: string, topology: Topology, format: 'json' | 'xml'): DiscoveredRing {
  const scheme = schemeOf(seed.url);
  const computedHash = topologyHash(topology);
  let compiled: Ring | undefined;
  return {
    seed,
    hash,
    next: seed.next,
    topology,
    // Compiled on first use: a node list (a sweep's --seed) needs no placement, and compiling hashes every slot.
    get ring(): Ring {
      return (compiled ??= Ring.compile(topology));
    },
    nodes: topology.nodes.map((n) => ({ ...n, url: nodeApiUrl(n, scheme) })),
    format,
    verified: computedHash === hash,
    computedHash,
  };
}

/**
 * Discovers the ring from a seed node: who it is, which topology it runs, and that topology's nodes.
 * Throws DiscoveryError when the seed has no topology or no such endpoints, NodeRequestError when
 * it cannot be reached or answers something unexpected.
 */
export async function discoverRing(seed: NodeClient, call: CallOptions = {}): Promise<DiscoveredRing> {
  const self = await probeNode(seed, call);
  if (self.current === null) {
    throw new DiscoveryError(
      seed.url,
      'no_topology',
      `node ${self.identity} runs without a topology (its ${self.via === 'state' ? '/state' : '/stats.json'} says current "-"), so it knows no ring`,
      'start the nodes with a topology (tsnode cluster up does; tsnode serve --topology), or list them with --nodes',
    );
  }
  const { topology, format } = await fetchTopology(seed, self.current, call);
  return ringFromTopology(self, self.current, topology, format);
}
