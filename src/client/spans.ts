/**
 * Span checks before anything is sent: the rollup spans a sweep names must be configured on every
 * node (a node refuses the DELETE otherwise, after others may have started), and a write's records
 * must sit on the smallest span, which the nodes report as `base_rollup`. Pure: it judges what the
 * nodes said about themselves (discovery.ts probeNode).
 */
import type { NodeSelf } from './discovery.js';

export type SpanFacts = Pick<NodeSelf, 'url' | 'baseRollup' | 'nntRollups' | 'histogramRollups'>;

export interface SpanProblem {
  url: string;
  kind: 'nnt' | 'histogram';
  /** The requested span the node does not have. */
  span: number;
  /** What the node has. */
  configured: number[];
}

export interface SpanCheck {
  ok: boolean;
  /** Requested spans some node does not have. */
  unknown: SpanProblem[];
  /** Nodes that did not report the spans needed to judge (older stores' /stats.json, say). */
  unreported: string[];
  problems: string[];
}

/** Checks requested numeric and histogram spans (seconds) against every node's configured spans. */
export function checkSpans(request: { nnt?: readonly number[]; histogram?: readonly number[] }, nodes: readonly SpanFacts[]): SpanCheck {
  const unknown: SpanProblem[] = [];
  const unreported = new Set<string>();
  for (const kind of ['nnt', 'histogram'] as const) {
    const wanted = request[kind];
    if (!wanted || wanted.length === 0) continue;
    for (const n of nodes) {
      const configured = kind === 'nnt' ? n.nntRollups : n.histogramRollups;
      if (configured === null) {
        unreported.add(n.url);
        continue;
      }
      for (const span of wanted) if (!configured.includes(span)) unknown.push({ url: n.url, kind, span, configured });
    }
  }
  const problems = unknown.map((p) => `${p.url} has no ${p.kind === 'nnt' ? 'numeric' : 'histogram'} span ${p.span}s (it has ${p.configured.join(', ')})`);
  if (unreported.size > 0) problems.push(`did not report their spans, so they could not be checked: ${[...unreported].join(', ')}`);
  return { ok: unknown.length === 0 && unreported.size === 0, unknown, unreported: [...unreported], problems };
}

export type SmallestSpan = { kind: 'agreed'; span: number } | { kind: 'disagree'; spans: Array<{ span: number; nodes: string[] }> } | { kind: 'unreported'; nodes: string[] };

/**
 * The smallest numeric span every node shares (`base_rollup`), or why there is none: the nodes
 * disagree (named, by span), or some did not report it (named).
 */
export function smallestSpan(nodes: readonly SpanFacts[]): SmallestSpan {
  if (nodes.length === 0) return { kind: 'unreported', nodes: [] };
  const unreported = nodes.filter((n) => n.baseRollup === null).map((n) => n.url);
  if (unreported.length > 0) return { kind: 'unreported', nodes: unreported };
  const bySpan = new Map<number, string[]>();
  for (const n of nodes) bySpan.set(n.baseRollup!, [...(bySpan.get(n.baseRollup!) ?? []), n.url]);
  if (bySpan.size === 1) return { kind: 'agreed', span: [...bySpan.keys()][0]! };
  return { kind: 'disagree', spans: [...bySpan].sort((a, b) => a[0] - b[0]).map(([span, urls]) => ({ span, nodes: urls })) };
}

/** One node lacking one span, for a message (`what` names the span, and the rule when there is one). */
export interface MissingSpan {
  what: string;
  type: 'nnt' | 'histogram';
  node: string;
  configured: readonly number[];
  /** Where the node's list came from: itself (default) or a profile's declaration. */
  source?: 'node' | 'profile';
}

/** The nodes lacking one span (`what`), by the span list they have, in the order they came. */
export interface MissingSpanGroup {
  what: string;
  type: 'nnt' | 'histogram';
  nodes: string[];
  lists: Array<{ configured: readonly number[]; source: 'node' | 'profile'; nodes: string[] }>;
}

/** Groups per-node problems so each distinct problem is named once. */
export function groupMissingSpans(problems: readonly MissingSpan[]): MissingSpanGroup[] {
  const groups = new Map<string, MissingSpanGroup>();
  for (const p of problems) {
    const g = groups.get(p.what) ?? { what: p.what, type: p.type, nodes: [], lists: [] };
    groups.set(p.what, g);
    const source = p.source ?? 'node';
    const key = p.configured.join(',');
    let list = g.lists.find((l) => l.source === source && l.configured.join(',') === key);
    if (!list) g.lists.push((list = { configured: p.configured, source, nodes: [] }));
    list.nodes.push(p.node);
    g.nodes.push(p.node);
  }
  return [...groups.values()];
}

/**
 * `nnt span 3600 of nnt:3600=30d (retention.yaml:5:3) is not configured on any of the 4 nodes
 * (their nnt spans: 60, 300)`; `nodeCount` (how many nodes were checked) allows "any of the N".
 */
export function describeMissingSpan(g: MissingSpanGroup, nodeCount?: number): string {
  const count = g.nodes.length;
  const where =
    count === 1 ? g.nodes[0]! : nodeCount === count ? `any of the ${count} nodes` : `${count}${nodeCount !== undefined ? ` of the ${nodeCount}` : ''} nodes (${someOf(g.nodes)})`;
  const per = (l: MissingSpanGroup['lists'][number]): string => (l.source === 'profile' ? ' per the profile' : '');
  const spans = (l: MissingSpanGroup['lists'][number]): string => l.configured.join(', ') || 'none';
  const have =
    g.lists.length === 1
      ? `${count === 1 ? 'its' : 'their'} ${g.type} spans${per(g.lists[0]!)}: ${spans(g.lists[0]!)}`
      : `their ${g.type} spans: ${g.lists.map((l) => `${spans(l)}${per(l)} on ${someOf(l.nodes)}`).join('; ')}`;
  return `${g.what} is not configured on ${where} (${have})`;
}

function someOf(items: readonly string[]): string {
  return items.length > 3 ? `${items.slice(0, 3).join(', ')} and ${items.length - 3} more` : items.join(', ');
}
