/**
 * What a destructive command checks about the cluster before anything is sent, from what every
 * listed node says about itself (`GET /state`, else `/stats.json`):
 * - **identity**: two listed URLs answering with one identity are one node; a second DELETE to it
 *   would cancel the first, so that list is refused (always: no flag makes it safe);
 * - **coverage** (issue 15), whenever the nodes expose a topology: refused when the list misses
 *   ring nodes (named), when the nodes disagree on the topology hash, or when a rebalance is in
 *   progress; `allowPartial` lets the run go ahead, and the report keeps the missing nodes for the
 *   result and the journal;
 * - **spans**: spans a sweep names must be configured on every node that reports its spans, and
 *   among the spans the target declares (a profile's) for the nodes that do not.
 * Nodes without these endpoints (older stores, plain lists) keep working: the report says in one
 * line what could not be checked. Only GETs are sent here.
 */
import { fanOut } from './fan-out.js';
import { checkCoverage, type CoverageReport, type CoverageVerdict } from './coverage.js';
import { DiscoveryError, fetchTopology, probeNode, type NodeSelf } from './discovery.js';
import type { WireNodeState } from '../protocol/cluster.js';
import { NodeRequestError } from './errors.js';
import type { CallOptions, NodeClient } from './node-client.js';
import { checkSpans, describeMissingSpan, groupMissingSpans } from './spans.js';
import type { PreflightCheck, PreflightProblem } from './sweep-preflight.js';
import { nodeApiUrl, type Topology } from '../ring/index.js';

/** One listed node and what it said about itself. */
export interface ListedFacts {
  url: string;
  /** Its answer, when it gave one. */
  self?: NodeSelf;
  /** It answers neither /state nor /stats.json (404): an older store, or not a node of the store. */
  noEndpoints?: boolean;
  /** Why it gave no answer (unreachable, or an answer that is not one). */
  error?: string;
}

export interface ClusterFacts {
  nodes: ListedFacts[];
  /** The topology the first node reporting one runs (null: none reports one, or it could not be read). */
  topology: Topology | null;
  /** A node announces a topology that could not be read: why. */
  topologyError?: string;
}

/** Asks every listed node who it is, and reads the topology the first one with a topology runs. */
/** `states`, when given, gets each node's `/state` answer (receipts read free space from it). */
export async function gatherClusterFacts(
  clients: readonly NodeClient[],
  opts: { concurrency?: number; call?: CallOptions; states?: Map<string, WireNodeState> } = {},
): Promise<ClusterFacts> {
  // A phase's probe: a node silent past its headers timeout is asked once, not four times.
  const call: CallOptions = { ...opts.call, probe: true };
  const keep = opts.states;
  const outcomes = await fanOut(clients, (c) => probeNode(c, call, keep ? (s) => keep.set(c.url, s) : undefined), { concurrency: opts.concurrency ?? 32 });
  const nodes: ListedFacts[] = outcomes.map((o) => {
    if (o.ok) return { url: o.node, self: o.value };
    // (fanOut wraps what is not a NodeRequestError, keeping it as the cause)
    const cause: unknown = o.error.cause;
    if (cause instanceof DiscoveryError && cause.code === 'no_cluster_endpoints') return { url: o.node, noEndpoints: true };
    return { url: o.node, error: o.error.detail };
  });
  const withRing = nodes.findIndex((n) => n.self?.current);
  if (withRing < 0) return { nodes, topology: null };
  const hash = nodes[withRing]!.self!.current!;
  try {
    const { topology } = await fetchTopology(clients[withRing]!, hash, call);
    return { nodes, topology };
  } catch (err) {
    const why = err instanceof NodeRequestError ? err.detail : err instanceof Error ? err.message : String(err);
    return { nodes, topology: null, topologyError: `${nodes[withRing]!.url} announces topology ${hash.slice(0, 12)} but it could not be read: ${why}` };
  }
}

/** Listed URLs that answered with the same identity: one node under several URLs. */
export function duplicateIdentities(facts: ClusterFacts): Array<{ identity: string; urls: string[] }> {
  const byId = new Map<string, string[]>();
  for (const n of facts.nodes) if (n.self) byId.set(n.self.identity, [...(byId.get(n.self.identity) ?? []), n.url]);
  return [...byId].filter(([, urls]) => urls.length > 1).map(([identity, urls]) => ({ identity, urls }));
}

/** The coverage part of a check, as results and the journal carry it. */
export interface CoverageOutcome {
  /** `unchecked`: no listed node exposes a topology (a plain list, an older store). */
  verdict: CoverageVerdict | 'unchecked' | 'unreadable';
  /** The topology hash the nodes agree on. */
  hash: string | null;
  /** Ring nodes the list does not reach. */
  missing: Array<{ id: string; url: string }>;
  /** What is wrong, one line each (empty when covered or unchecked). */
  problems: string[];
  /** The run goes ahead despite the problems (allowPartial). */
  allowed: boolean;
  /** One line for stderr: what was checked and how it came out. */
  note: string;
}

export interface ClusterCheckReport {
  coverage: CoverageOutcome;
  /** Spans a sweep names that some node does not have. */
  unknownSpans: string[];
  /** Lines for stderr about what could not be checked (never a reason to refuse). */
  notes: string[];
  /** Everything that refuses the run (after allowPartial). */
  problems: PreflightProblem[];
}

export interface ClusterCheckOptions {
  /** Go ahead when the list misses ring nodes, the nodes disagree on the topology, or a rebalance runs. */
  allowPartial?: boolean;
  /** Spans a sweep names (seconds), checked against every node that reports its spans. */
  spans?: { nnt?: readonly number[] | undefined; histogram?: readonly number[] | undefined };
  /**
   * The spans the target declares (a profile's nnt_rollups, histogram_rollups), and where: what
   * `spans` are checked against on nodes that do not report their own.
   */
  declared?: { nnt?: DeclaredSpans | undefined; histogram?: DeclaredSpans | undefined };
}

export interface DeclaredSpans {
  spans: readonly number[];
  /** For messages: `profiles.prod.nnt_rollups (~/.config/tsnode/config.yaml:7)`. */
  from: string;
}

const plural = (n: number, what: string): string => `${n} ${what}${n === 1 ? '' : 's'}`;

/** Judges the facts. Pure. */
export function judgeCluster(facts: ClusterFacts, opts: ClusterCheckOptions = {}): ClusterCheckReport {
  const problems: PreflightProblem[] = [];
  const notes: string[] = [];
  for (const d of duplicateIdentities(facts)) {
    problems.push({
      message: `${d.urls.join(' and ')} answer as the same node (identity ${d.identity}): it would get one DELETE per URL, each cancelling the one before; list it once`,
    });
  }

  const coverage = coverageOf(facts, opts.allowPartial === true);
  if (coverage.problems.length && !coverage.allowed) for (const p of coverage.problems) problems.push({ message: p });

  const unknownSpans: string[] = [];
  if (opts.spans && (opts.spans.nnt?.length || opts.spans.histogram?.length)) {
    const selves = facts.nodes.flatMap((n) => (n.self ? [n.self] : []));
    const spans = checkSpans({ ...(opts.spans.nnt ? { nnt: opts.spans.nnt } : {}), ...(opts.spans.histogram ? { histogram: opts.spans.histogram } : {}) }, selves);
    // Each distinct missing span once, with the nodes that lack it (issue 25: not once per node).
    for (const g of groupMissingSpans(spans.unknown.map((u) => ({ what: `${u.kind} span ${u.span}`, type: u.kind, node: u.url, configured: u.configured })))) {
      const line = describeMissingSpan(g, facts.nodes.length);
      unknownSpans.push(line);
      problems.push({ message: `${line}: ${g.nodes.length === 1 ? 'its DELETE' : 'their DELETEs'} would be refused` });
    }
    const unchecked = new Set<string>();
    for (const kind of ['nnt', 'histogram'] as const) {
      const wanted = opts.spans[kind];
      if (!wanted?.length) continue;
      // Nodes that do not say which spans they have (no /state, or an older one without spans).
      const silent = facts.nodes.filter((n) => !n.self || (kind === 'nnt' ? n.self.nntRollups : n.self.histogramRollups) === null).map((n) => n.url);
      if (silent.length === 0) continue;
      const declared = opts.declared?.[kind];
      if (!declared) {
        for (const url of silent) unchecked.add(url);
        continue;
      }
      const missing = wanted.filter((span) => !declared.spans.includes(span));
      if (missing.length) {
        const line = `${kind} span${missing.length === 1 ? '' : 's'} ${missing.join(', ')} ${missing.length === 1 ? 'is' : 'are'} not among the ${kind} spans ${declared.from} declares (${declared.spans.join(', ')}), which stand for the ${plural(silent.length, 'node')} that do not report theirs: ${listSome(silent)}`;
        unknownSpans.push(line);
        problems.push({ message: `${line}; their DELETE would be refused` });
      } else notes.push(`${kind} spans checked against ${declared.from} for ${plural(silent.length, 'node')} that do not report theirs`);
    }
    if (unchecked.size) notes.push(`spans could not be checked on ${plural(unchecked.size, 'node')} (they do not report them): ${listSome([...unchecked])}`);
  }
  return { coverage, unknownSpans, notes: [coverage.note, ...notes], problems };
}

function coverageOf(facts: ClusterFacts, allowPartial: boolean): CoverageOutcome {
  const silent = facts.nodes.filter((n) => !n.self);
  const base = { hash: null, missing: [], allowed: false };
  if (facts.topologyError) {
    const problems = [`the ring's coverage could not be checked: ${facts.topologyError}`];
    return {
      ...base,
      verdict: 'unreadable',
      problems,
      allowed: allowPartial,
      note: `coverage: not checked (${facts.topologyError})${allowPartial ? '; going ahead (--allow-partial)' : ''}`,
    };
  }
  const report: CoverageReport = checkCoverage(
    facts.nodes.map((n) => (n.self ? { url: n.url, self: n.self } : { url: n.url })),
    facts.topology,
  );
  if (report.verdict === 'no_topology') {
    const why = silent.length === facts.nodes.length ? 'no listed node reports a topology (GET /state, /stats.json)' : 'no listed node runs with a topology';
    return { ...base, verdict: 'unchecked', problems: [], note: `coverage: could not be checked: ${why}; the node list is taken as complete` };
  }
  const missing = report.missing.map((n) => ({ id: n.id, url: nodeApiUrl(n) }));
  const short = report.hash?.slice(0, 12) ?? '?';
  if (report.verdict === 'covered') {
    const extra = report.problems.length ? ` (${report.problems.join('; ')})` : '';
    return { verdict: 'covered', hash: report.hash, missing, problems: [], allowed: false, note: `coverage: every node of ring ${short} is listed${extra}` };
  }
  const problems = report.problems;
  const what =
    report.verdict === 'missing'
      ? `${plural(missing.length, 'ring node')} not in the list: ${missing.map((m) => `${m.id} (${m.url})`).join(', ')}`
      : report.verdict === 'disagree'
        ? 'the listed nodes disagree on the topology'
        : 'a rebalance is in progress';
  return {
    verdict: report.verdict,
    hash: report.hash,
    missing,
    problems,
    allowed: allowPartial,
    note: allowPartial ? `coverage: ${what}; going ahead (--allow-partial)` : `coverage: ${what}`,
  };
}

/**
 * The identity, coverage and span checks as one preflight rule (sweep.ts runPreflightChecks): it
 * gathers the facts when the preflight is done, and hands its report to `onReport` (for the
 * result, the journal and stderr) before returning what refuses the run.
 */
export function clusterCheck(
  clients: readonly NodeClient[],
  opts: ClusterCheckOptions & { concurrency?: number; call?: CallOptions; onReport?: (r: ClusterCheckReport) => void },
): PreflightCheck {
  return async () => {
    const facts = await gatherClusterFacts(clients, { ...(opts.concurrency ? { concurrency: opts.concurrency } : {}), ...(opts.call ? { call: opts.call } : {}) });
    const report = judgeCluster(facts, opts);
    opts.onReport?.(report);
    return report.problems;
  };
}

/** A report already made, as a preflight rule (retention apply gathers the facts once, for its plan too). */
export function reportCheck(report: ClusterCheckReport): PreflightCheck {
  return () => report.problems;
}

function listSome(items: readonly string[]): string {
  return items.length > 5 ? `${items.slice(0, 5).join(', ')} and ${items.length - 5} more` : items.join(', ');
}
