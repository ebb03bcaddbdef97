/**
 * Owner routing: which nodes a write or a read goes to when the nodes run a ring. A metric lives
 * on its `write_copies` owners; a write anywhere else puts it where nobody reads it, and a read
 * anywhere else finds nothing. So before routing, the listed nodes are asked who they are
 * (`GET /state`), and the ring is followed only when they agree on one topology; otherwise the
 * caller gets the reason in words, for one line or a usage error.
 *
 * Facts come from the nodes' answers only. A node that did not answer (or answered an error) is
 * not counted against the ring: it says nothing about which topology it runs. A node that
 * answered without a topology (`current` "-", or no /state and no /stats.json: an older store)
 * is: a list mixing ring and plain nodes is not a ring.
 */
import { fanOut } from './fan-out.js';
import { DiscoveryError, fetchTopology, probeNode, ringFromTopology, type DiscoveredNode, type DiscoveredRing, type NodeSelf } from './discovery.js';
import { NodeRequestError } from './errors.js';
import type { CallOptions, NodeClient } from './node-client.js';
import type { RetryPolicy } from './retry.js';
import { smallestSpan, type SmallestSpan } from './spans.js';
import { endpoint, shortHash } from './endpoint.js';

/** Probes retry once, briefly: a node that is down should cost a probe about a second, not a full backoff. */
export const PROBE_RETRY: RetryPolicy = { retries: 1, baseDelayMs: 100, maxDelayMs: 400 };

/** What one node said about itself, or why it said nothing usable. */
export interface ProbedNode {
  url: string;
  /** Its answer to GET /state (or /stats.json); null when there was none. */
  self: NodeSelf | null;
  /** It answered, but has neither /state nor /stats.json (404): an older store, no topology to read. */
  noEndpoints: boolean;
  /** Why there is no `self` (unreachable, an error answer, an answer that is not a node's). */
  error: string | null;
}

/** The ring, with one client per ring node, as a router needs it. */
export interface RingTargets {
  ring: DiscoveredRing;
  /** One client per ring node, in topology order: the listed one that is that node, else one at its ring address. */
  clients: NodeClient[];
  /** Per ring node (topology order): what it said when asked, or null (not asked, or no answer). */
  selves: Array<NodeSelf | null>;
  /** Ring nodes the node list does not name: reached at their ring address. */
  unlisted: DiscoveredNode[];
  /** Listed nodes that answered as a node outside the ring: nothing is routed to them. */
  notInRing: string[];
  /** Ring nodes asked that did not answer (routing still counts them: the ring says they own data). */
  unanswered: string[];
}

export interface NodeSurvey {
  /** Every listed node, as it answered (empty when the ring came from a seed and nothing was asked). */
  listed: ProbedNode[];
  /** The ring the nodes run, or null. */
  targets: RingTargets | null;
  /** When `targets` is null: why the nodes expose no ring, in words (for one line or a usage error). */
  noRing: string | null;
  /** `none`: no node runs a topology (plain nodes, older stores); `mixed`: some do, but not one ring together. */
  noRingKind: 'none' | 'mixed' | null;
  /** Things worth a warning: a rebalance in progress, a hash that does not check out, unanswered nodes. */
  notes: string[];
}

export interface SurveyOptions {
  /** A client for a URL (sharing the run's dispatcher), for ring nodes the list does not name. */
  clientFor: (url: string) => NodeClient;
  call?: CallOptions;
  /** The ring already discovered from a seed: the listed nodes are its nodes, no topology is fetched. */
  seeded?: DiscoveredRing;
  /**
   * Ask the nodes at all. Off (with `seeded`): only the ring is set up, nobody is asked; on: every
   * listed node and every ring node the list does not name answers GET /state (for its spans).
   */
  probe?: boolean;
  /**
   * Set up the ring when the nodes run one (default): its topology is fetched and the ring nodes
   * the list does not name are asked too. Off: the listed nodes are only asked and judged (a
   * caller that writes to the list as it is wants their spans, not the ring's).
   */
  followRing?: boolean;
  /** Ask the ring nodes the list does not name too (default: when probing). A read needs only the ring, not their spans. */
  askUnlisted?: boolean;
}

function failure(url: string, err: unknown): ProbedNode {
  if (err instanceof DiscoveryError && err.code === 'no_cluster_endpoints') return { url, self: null, noEndpoints: true, error: null };
  const error = err instanceof NodeRequestError ? err.detail : err instanceof Error ? err.message : String(err);
  return { url, self: null, noEndpoints: false, error };
}

async function probeAll(clients: readonly NodeClient[], call: CallOptions): Promise<ProbedNode[]> {
  const outcomes = await fanOut(clients, async (c) => {
    try {
      const self = await probeNode(c, call);
      return { url: c.url, self, noEndpoints: false, error: null } satisfies ProbedNode;
    } catch (err) {
      // Inside: fanOut would turn a DiscoveryError into a bad answer.
      return failure(c.url, err);
    }
  });
  return outcomes.map((o, i) => (o.ok ? o.value : failure(clients[i]!.url, o.error)));
}

const plural = (n: number, one: string, many = `${one}s`): string => `${n} ${n === 1 ? one : many}`;

/** Why the probed nodes are not one ring, or null when they are (at least one runs it, none runs another or none). */
function judge(probes: readonly ProbedNode[]): { kind: 'none' | 'mixed'; why: string } | { kind: 'ring'; hash: string; from: number } {
  const withRing = new Map<string, string[]>();
  const plain: string[] = [];
  for (const p of probes) {
    if (p.noEndpoints || (p.self && p.self.current === null)) plain.push(p.url);
    else if (p.self) withRing.set(p.self.current!, [...(withRing.get(p.self.current!) ?? []), p.url]);
  }
  const silent = probes.length - plain.length - [...withRing.values()].reduce((a, u) => a + u.length, 0);
  if (withRing.size === 0) {
    const who =
      plain.length === probes.length
        ? probes.length === 1
          ? 'the node runs no topology'
          : `none of the ${probes.length} nodes runs a topology`
        : `none of the ${plural(plain.length, 'node')} that answered runs a topology`;
    const why =
      plain.length === 0
        ? `${probes.length === 1 ? 'the node did not answer' : `none of the ${probes.length} listed nodes answered`} GET /state as a node, so no ring is known`
        : `${who} (GET /state says current "-", or there is no /state: an older store)`;
    return { kind: 'none', why: silent > 0 && plain.length > 0 ? `${why}; ${plural(silent, 'node')} did not answer` : why };
  }
  if (withRing.size > 1) {
    return { kind: 'mixed', why: `the listed nodes run different topologies: ${[...withRing].map(([h, urls]) => `${shortHash(h)} (${urls.join(', ')})`).join('; ')}` };
  }
  const [hash, urls] = [...withRing][0]!;
  if (plain.length > 0) {
    return {
      kind: 'mixed',
      why: `the listed nodes do not run one ring: ${urls.join(', ')} run${urls.length === 1 ? 's' : ''} topology ${shortHash(hash)}, ${plain.join(', ')} run${plain.length === 1 ? 's' : ''} none`,
    };
  }
  return { kind: 'ring', hash, from: probes.findIndex((p) => p.self?.current === hash) };
}

/**
 * Matches the listed nodes to the ring's: by the identity a node answered with, else (no answer)
 * by address. Each ring node gets the listed client that is it, else a client at its ring address.
 */
function targetsOf(ring: DiscoveredRing, listed: readonly NodeClient[], probes: readonly (ProbedNode | undefined)[], clientFor: (url: string) => NodeClient): RingTargets {
  const used = new Set<number>();
  const clients: NodeClient[] = [];
  const selves: Array<NodeSelf | null> = [];
  const unlisted: DiscoveredNode[] = [];
  for (const n of ring.nodes) {
    const id = n.id.toLowerCase();
    let i = probes.findIndex((p, k) => !used.has(k) && p?.self?.identity === id);
    if (i < 0) i = listed.findIndex((c, k) => !used.has(k) && !probes[k]?.self && endpoint(c.url) === endpoint(n.url));
    if (i >= 0) {
      used.add(i);
      clients.push(listed[i]!);
      selves.push(probes[i]?.self ?? null);
    } else {
      clients.push(clientFor(n.url));
      selves.push(null);
      unlisted.push(n);
    }
  }
  const notInRing = listed.filter((_, k) => !used.has(k) && probes[k]?.self).map((c) => c.url);
  return { ring, clients, selves, unlisted, notInRing, unanswered: [] };
}

/**
 * Asks the listed nodes who they are and finds the ring they run together, if any: every node that
 * answered runs the same topology (at least one does, none runs another or none). With a ring, the
 * ring nodes the list does not name are asked too (for their spans), at their ring address.
 */
export async function surveyNodes(listed: readonly NodeClient[], opts: SurveyOptions): Promise<NodeSurvey> {
  const call: CallOptions = { retry: PROBE_RETRY, ...opts.call };
  const probe = opts.probe ?? true;
  const notes: string[] = [];
  if (opts.seeded) {
    const ring = opts.seeded;
    const probes = probe ? await probeAll(listed, call) : [];
    const targets = targetsOf(ring, listed, probe ? probes : listed.map(() => undefined), opts.clientFor);
    await finish(targets, probes, probe && opts.askUnlisted !== false, call, notes);
    return { listed: probes, targets, noRing: null, noRingKind: null, notes };
  }
  const probes = await probeAll(listed, call);
  const verdict = judge(probes);
  if (verdict.kind !== 'ring') return { listed: probes, targets: null, noRing: verdict.why, noRingKind: verdict.kind, notes };
  if (opts.followRing === false) return { listed: probes, targets: null, noRing: null, noRingKind: null, notes };
  const seedSelf = probes[verdict.from]!.self!;
  const { topology, format } = await fetchTopology(listed[verdict.from]!, verdict.hash, call);
  const ring = ringFromTopology(seedSelf, verdict.hash, topology, format);
  if (!ring.verified) {
    notes.push(
      `the topology from ${ring.seed.url} hashes to ${ring.computedHash} here, not to the ${ring.hash} it announces: owners computed by tsnode may differ from the store's`,
    );
  }
  const targets = targetsOf(ring, listed, probes, opts.clientFor);
  await finish(targets, probes, opts.askUnlisted !== false, call, notes);
  return { listed: probes, targets, noRing: null, noRingKind: null, notes };
}

/** Asks the unlisted ring nodes (when probing), and notes what a router's user should hear about. */
async function finish(targets: RingTargets, probes: readonly ProbedNode[], probe: boolean, call: CallOptions, notes: string[]): Promise<void> {
  const unlistedIdx = targets.ring.nodes.flatMap((n, k) => (targets.unlisted.includes(n) ? [k] : []));
  if (probe && unlistedIdx.length > 0) {
    const more = await probeAll(
      unlistedIdx.map((k) => targets.clients[k]!),
      call,
    );
    more.forEach((p, j) => {
      const k = unlistedIdx[j]!;
      // At the ring's address but answering as another node: not that ring node.
      if (p.self && p.self.identity !== targets.ring.nodes[k]!.id.toLowerCase()) {
        notes.push(`${p.url} answers as node ${p.self.identity}, not as ring node ${targets.ring.nodes[k]!.id}`);
        return;
      }
      targets.selves[k] = p.self;
    });
  }
  if (probe) {
    targets.ring.nodes.forEach((n, k) => {
      if (targets.selves[k] === null) targets.unanswered.push(targets.clients[k]!.url);
    });
  }
  const rebalancing = [...probes.map((p) => p.self), ...targets.selves].find((s) => s?.next);
  if (rebalancing?.next)
    notes.push(`${rebalancing.url} is rebalancing to topology ${shortHash(rebalancing.next)}: owners are computed on the current one, ${shortHash(targets.ring.hash)}`);
  if (targets.ring.next && !rebalancing)
    notes.push(`the ring is rebalancing to topology ${shortHash(targets.ring.next)}: owners are computed on the current one, ${shortHash(targets.ring.hash)}`);
  if (targets.notInRing.length > 0) notes.push(`listed but not nodes of ring ${shortHash(targets.ring.hash)} (nothing is routed to them): ${targets.notInRing.join(', ')}`);
  if (targets.unanswered.length > 0) notes.push(`ring nodes that did not answer GET /state: ${targets.unanswered.join(', ')}`);
}

/** The owners of a metric as clients, primary first. */
export function ownerClients(targets: RingTargets, uuid: string, metric: string): NodeClient[] {
  const index = new Map(targets.ring.topology.nodes.map((n, k) => [n.id, k]));
  return targets.ring.ring.ownersOf(uuid, metric).map((n) => targets.clients[index.get(n.id)!]!);
}

export type SpanDecision =
  { kind: 'agreed'; span: number; unreported: string[] } | { kind: 'disagree'; spans: Array<{ span: number; nodes: string[] }> } | { kind: 'unreported'; nodes: string[] };

/**
 * The smallest numeric span of the nodes a write goes to, from what they reported (`base_rollup`):
 * agreed by every node that reported one (those that did not are named), disagreed (by span), or
 * reported by none.
 */
export function writeSpan(nodes: ReadonlyArray<{ url: string; self: NodeSelf | null }>): SpanDecision {
  const reporters = nodes.filter((n) => n.self?.baseRollup != null).map((n) => n.self!);
  const unreported = nodes.filter((n) => n.self?.baseRollup == null).map((n) => n.url);
  if (reporters.length === 0) return { kind: 'unreported', nodes: unreported };
  const judged: SmallestSpan = smallestSpan(reporters.map((s) => ({ url: s.url, baseRollup: s.baseRollup, nntRollups: s.nntRollups, histogramRollups: s.histogramRollups })));
  if (judged.kind === 'agreed') return { kind: 'agreed', span: judged.span, unreported };
  if (judged.kind === 'disagree') return judged;
  return { kind: 'unreported', nodes: unreported };
}
