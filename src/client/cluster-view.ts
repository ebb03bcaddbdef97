/**
 * What `tsnode nodes` and `tsnode locate` show, as data: every node of the ring the listed nodes
 * run (each asked who it is), and the owners of a metric, checked against a node's own answer.
 * Facts come from the nodes' answers only: a node that did not answer is `unreachable`, one that
 * answered something else than expected is `unexpected`, never the other way round.
 */
import { metricKey } from '../ring/index.js';
import { fanOut } from './fan-out.js';
import { checkCoverage, type CoverageReport, type ListedNode } from './coverage.js';
import { DiscoveryError, fetchTopology, probeNode, ringFromTopology, type DiscoveredNode, type DiscoveredRing, type NodeSelf } from './discovery.js';
import { NodeHttpError, NodeRequestError } from './errors.js';
import type { CallOptions, NodeClient } from './node-client.js';
import { endpoint } from './endpoint.js';

export type NodeState = 'ok' | 'unreachable' | 'unexpected';

export interface NodeReport {
  /** The ring's id for the node, else the identity it reported, else null. */
  id: string | null;
  url: string;
  /** Its ring weight, or null when it is not a ring node. */
  weight: number | null;
  inRing: boolean;
  /** Whether the node list named it (ring nodes missing from the list are asked too). */
  listed: boolean;
  state: NodeState;
  /** How its topology compares with the ring's: the same, another one, none, or unknown (no answer). */
  topology: 'same' | 'other' | 'none' | 'unknown';
  self: NodeSelf | null;
  /** Why the state is not `ok`. */
  error: string | null;
}

export interface ClusterView {
  ring: DiscoveredRing | null;
  nodes: NodeReport[];
  coverage: CoverageReport;
}

const UNREACHABLE_CODES = new Set(['unreachable', 'timeout', 'aborted']);

function failure(err: unknown): { state: NodeState; error: string } {
  if (err instanceof NodeRequestError) return { state: UNREACHABLE_CODES.has(err.code) ? 'unreachable' : 'unexpected', error: err.detail };
  if (err instanceof DiscoveryError) return { state: 'unexpected', error: err.message.slice(err.node.length + 2) };
  return { state: 'unexpected', error: err instanceof Error ? err.message : String(err) };
}

type Probe = { self: NodeSelf } | { state: NodeState; error: string };

async function probe(client: NodeClient, call: CallOptions): Promise<Probe> {
  try {
    return { self: await probeNode(client, call) };
  } catch (err) {
    return failure(err);
  }
}

/** The ring the listed nodes run: read from the first listed node that reports a topology. */
async function ringOf(clients: readonly NodeClient[], probes: readonly Probe[], call: CallOptions): Promise<DiscoveredRing | null> {
  const i = probes.findIndex((p) => 'self' in p && p.self.current !== null);
  if (i < 0) return null;
  const self = (probes[i] as { self: NodeSelf }).self;
  const { topology, format } = await fetchTopology(clients[i]!, self.current!, call);
  return ringFromTopology(self, self.current!, topology, format);
}

function report(
  base: { id: string | null; url: string; weight: number | null; inRing: boolean; listed: boolean },
  p: Probe,
  ring: DiscoveredRing | null,
  ringId?: string,
): NodeReport {
  if (!('self' in p)) return { ...base, state: p.state, topology: 'unknown', self: null, error: p.error };
  const self = p.self;
  const topology = self.current === null ? 'none' : !ring || self.current === ring.hash ? 'same' : 'other';
  if (ringId !== undefined && self.identity !== ringId.toLowerCase()) {
    return { ...base, state: 'unexpected', topology, self, error: `answers as node ${self.identity}, not as ring node ${ringId}` };
  }
  return { ...base, id: base.id ?? self.identity, state: 'ok', topology, self, error: null };
}

/**
 * Asks every listed node who it is, reads the ring from the first that runs a topology, and asks
 * the ring nodes the list does not name too (at their ring address, with the list's scheme).
 */
export async function inspectCluster(listed: readonly NodeClient[], clientFor: (url: string) => NodeClient, call: CallOptions = {}): Promise<ClusterView> {
  const outcomes = await fanOut(listed, (c) => probe(c, call));
  const probes = outcomes.map((o): Probe => (o.ok ? o.value : failure(o.error)));
  const ring = await ringOf(listed, probes, call);
  const listedNodes: ListedNode[] = listed.map((c, i) => {
    const p = probes[i]!;
    return 'self' in p ? { url: c.url, self: p.self } : { url: c.url };
  });
  const coverage = checkCoverage(listedNodes, ring?.topology ?? null);
  if (!ring) {
    return {
      ring: null,
      coverage,
      nodes: listed.map((c, i) => report({ id: null, url: c.url, weight: null, inRing: false, listed: true }, probes[i]!, null)),
    };
  }
  // A ring node is the listed node that answered with its identity, else the one at its address.
  const used = new Set<number>();
  const matchOf = (n: DiscoveredNode): number => {
    const byId = probes.findIndex((p, i) => !used.has(i) && 'self' in p && p.self.identity === n.id.toLowerCase());
    if (byId >= 0) return byId;
    return listed.findIndex((c, i) => !used.has(i) && !('self' in probes[i]!) && endpoint(c.url) === endpoint(n.url));
  };
  const matches = ring.nodes.map((n) => {
    const i = matchOf(n);
    if (i >= 0) used.add(i);
    return i;
  });
  const unlisted = ring.nodes.filter((_, k) => matches[k]! < 0);
  const extra = await fanOut(
    unlisted.map((n) => clientFor(n.url)),
    (c) => probe(c, call),
  );
  let e = 0;
  const nodes: NodeReport[] = ring.nodes.map((n, k) => {
    const i = matches[k]!;
    const base = { id: n.id, url: i >= 0 ? listed[i]!.url : n.url, weight: n.weight, inRing: true, listed: i >= 0 };
    const p = i >= 0 ? probes[i]! : ((o) => (o.ok ? o.value : failure(o.error)))(extra[e++]!);
    return report(base, p, ring, n.id);
  });
  listed.forEach((c, i) => {
    if (used.has(i)) return;
    nodes.push(report({ id: null, url: c.url, weight: null, inRing: false, listed: true }, probes[i]!, ring));
  });
  return { ring, nodes, coverage };
}

export interface LocateResult {
  key: string;
  ring: DiscoveredRing;
  /** The owners tsnode computes, primary first. */
  owners: DiscoveredNode[];
  /**
   * What the node that served the topology says (`/locate/json`): `agrees`, `differs` (its owners
   * in `nodeOwners`), `unavailable` (it has no /locate/json: an older store) or `failed` (`error`).
   */
  check: { node: string; result: 'agrees' | 'differs' | 'unavailable' | 'failed'; nodeOwners?: string[]; error?: string };
}

/** The owners of a metric on the ring the listed nodes run; throws DiscoveryError when none runs one. */
export async function locateMetric(listed: readonly NodeClient[], uuid: string, metric: string, call: CallOptions = {}): Promise<LocateResult> {
  const outcomes = await fanOut(listed, (c) => probe(c, call));
  const probes = outcomes.map((o): Probe => (o.ok ? o.value : failure(o.error)));
  const ring = await ringOf(listed, probes, call);
  if (!ring) {
    const answered = probes.filter((p) => 'self' in p).length;
    throw new DiscoveryError(
      listed.map((c) => c.url).join(', '),
      'no_topology',
      answered === 0 ? 'no listed node answered (GET /state, /stats.json)' : `none of the ${answered} node(s) that answered runs with a topology`,
      'locate needs a ring: point --seed at a node of one (tsnode cluster up makes one)',
    );
  }
  const owners = ring.ring.ownersOf(uuid, metric);
  const byId = new Map(ring.nodes.map((n) => [n.id, n]));
  const computed = owners.map((n) => byId.get(n.id)!);
  const server = listed.find((c) => c.url === ring.seed.url)!;
  let check: LocateResult['check'];
  try {
    const answer = await server.locate(uuid, metric, call);
    const nodeOwners = answer.location.map((l) => l.id.toLowerCase());
    const same = nodeOwners.length === computed.length && nodeOwners.every((id, i) => id === computed[i]!.id.toLowerCase());
    check = same ? { node: server.url, result: 'agrees' } : { node: server.url, result: 'differs', nodeOwners };
  } catch (err) {
    check =
      err instanceof NodeHttpError && err.status === 404
        ? { node: server.url, result: 'unavailable', error: err.detail }
        : { node: server.url, result: 'failed', error: err instanceof NodeRequestError ? err.detail : String(err) };
  }
  return { key: metricKey(uuid, metric), ring, owners: computed, check };
}
