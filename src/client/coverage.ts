/**
 * Coverage: does a node list reach the whole ring? The store's sweep API is node-local, so a sweep
 * "on every node" only covers the ring when the list holds every ring node. Pure: it judges what
 * the nodes said about themselves (discovery.ts probeNode) against the topology they run.
 *
 * Verdicts, worst first:
 * - `disagree`: listed nodes report different topology hashes (one ring cannot be judged);
 * - `rebalancing`: a node reports a `next` topology: data is moving between nodes;
 * - `missing`: ring nodes are not in the list (named);
 * - `covered`: every ring node is listed;
 * - `no_topology`: no listed node runs with a topology: nothing to check against (a plain list).
 */
import { nodeApiUrl, type RingNode, type Topology } from '../ring/index.js';
import type { NodeSelf } from './discovery.js';
import { endpoint, shortHash } from './endpoint.js';

/** A listed node and what it said about itself, or nothing when it did not answer. */
export interface ListedNode {
  url: string;
  self?: NodeSelf;
}

export type CoverageVerdict = 'covered' | 'missing' | 'disagree' | 'rebalancing' | 'no_topology';

export interface CoverageReport {
  verdict: CoverageVerdict;
  /** The topology hash the listed nodes agree on, or null (none, or they disagree). */
  hash: string | null;
  /** Ring nodes the list does not reach. */
  missing: RingNode[];
  /** Each topology hash reported, with the listed nodes reporting it (more than one: disagreement). */
  hashes: Array<{ hash: string; nodes: string[] }>;
  /** Listed nodes that report a `next` topology. */
  rebalancing: Array<{ url: string; next: string }>;
  /** Listed nodes that answered with an identity that is not in the ring (or with no topology among ring nodes). */
  notInRing: string[];
  /** Listed nodes that did not answer and match no ring node's address: whether they are ring nodes is unknown. */
  unknown: string[];
  /** One line per problem, for messages. */
  problems: string[];
}

/**
 * Judges `listed` against `topology` (the ring of the hash the nodes agree on; null when none was
 * fetched). Ring nodes are matched by identity where the listed node answered, else by address.
 */
export function checkCoverage(listed: readonly ListedNode[], topology: Topology | null): CoverageReport {
  const byHash = new Map<string, string[]>();
  const rebalancing: Array<{ url: string; next: string }> = [];
  for (const l of listed) {
    if (!l.self) continue;
    if (l.self.current !== null) byHash.set(l.self.current, [...(byHash.get(l.self.current) ?? []), l.url]);
    if (l.self.next !== null) rebalancing.push({ url: l.url, next: l.self.next });
  }
  const hashes = [...byHash].map(([hash, nodes]) => ({ hash, nodes }));
  const report: CoverageReport = { verdict: 'covered', hash: null, missing: [], hashes, rebalancing, notInRing: [], unknown: [], problems: [] };

  if (hashes.length === 0) {
    report.verdict = 'no_topology';
    return report;
  }
  if (hashes.length > 1) {
    report.verdict = 'disagree';
    report.problems.push(`the listed nodes run different topologies: ${hashes.map((h) => `${shortHash(h.hash)} (${h.nodes.join(', ')})`).join('; ')}`);
  } else {
    report.hash = hashes[0]!.hash;
  }
  for (const r of rebalancing) report.problems.push(`${r.url} is rebalancing to topology ${shortHash(r.next)}: data is moving between nodes`);
  if (report.verdict !== 'disagree' && rebalancing.length > 0) report.verdict = 'rebalancing';

  if (topology && report.hash !== null) {
    const ringIds = new Set(topology.nodes.map((n) => n.id.toLowerCase()));
    const byEndpoint = new Map(topology.nodes.map((n) => [endpoint(nodeApiUrl(n)), n]));
    const reached = new Set<string>();
    for (const l of listed) {
      if (l.self) {
        if (ringIds.has(l.self.identity)) reached.add(l.self.identity);
        else report.notInRing.push(l.url);
        continue;
      }
      const match = byEndpoint.get(endpoint(l.url));
      if (match) reached.add(match.id.toLowerCase());
      else report.unknown.push(l.url);
    }
    report.missing = topology.nodes.filter((n) => !reached.has(n.id.toLowerCase()));
    if (report.missing.length > 0) {
      report.problems.push(
        `${report.missing.length} of ${topology.nodes.length} ring nodes are not in the list: ${report.missing.map((n) => `${n.id} (${nodeApiUrl(n)})`).join(', ')}`,
      );
      if (report.verdict === 'covered') report.verdict = 'missing';
    }
    if (report.notInRing.length > 0) report.problems.push(`listed but not in ring ${shortHash(report.hash)}: ${report.notInRing.join(', ')}`);
    if (report.unknown.length > 0) report.problems.push(`did not answer, so whether they are ring nodes is unknown: ${report.unknown.join(', ')}`);
  }
  return report;
}
