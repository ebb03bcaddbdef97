/**
 * `find` across nodes: the same tag query asked of every node for its own data
 * (`X-Snowth-Proxied: 1`), the answers joined into one list of metrics with the nodes that hold
 * each. A node that fails or cuts its answer short is reported as such, never silently dropped.
 */
import { parseTagQuery } from '../tags/index.js';
import { fanOut } from './fan-out.js';
import type { NodeClient } from './node-client.js';

export interface FindOptions {
  query: string;
  account: number;
  /** Most metrics one node may list (its advisory limit). */
  limit: number;
  concurrency?: number;
  signal?: AbortSignal;
}

export interface FoundAcross {
  uuid: string;
  metric_name: string;
  /** The store's type words (`numeric`, `text`, `histogram`), joined over the nodes' answers. */
  type: string;
  /** The nodes holding it, in node-list order. */
  nodes: string[];
}

export type NodeFind = { node: string; ok: true; count: number; incomplete: boolean } | { node: string; ok: false; error: string };

export interface FindResult {
  metrics: FoundAcross[];
  nodes: NodeFind[];
}

/** Throws TagQueryError (nothing sent) when the query does not parse. */
export async function findAcross(clients: readonly NodeClient[], opts: FindOptions): Promise<FindResult> {
  parseTagQuery(opts.query);
  const call = { query: opts.query, account: opts.account, limit: opts.limit, local: true };
  const outcomes = await fanOut(clients, (c) => c.findTags(call, opts.signal ? { signal: opts.signal } : {}), { concurrency: opts.concurrency ?? 32 });
  const byKey = new Map<string, FoundAcross & { types: Set<string> }>();
  const nodes: NodeFind[] = [];
  for (const o of outcomes) {
    if (!o.ok) {
      nodes.push({ node: o.node, ok: false, error: o.error.message });
      continue;
    }
    nodes.push({ node: o.node, ok: true, count: o.value.rows.length, incomplete: o.value.incomplete });
    for (const m of o.value.rows) {
      const key = `${m.uuid.toLowerCase()} ${m.metric_name}`;
      let entry = byKey.get(key);
      if (!entry) byKey.set(key, (entry = { uuid: m.uuid.toLowerCase(), metric_name: m.metric_name, type: '', nodes: [], types: new Set() }));
      if (!entry.nodes.includes(o.node)) entry.nodes.push(o.node);
      for (const t of (m.type ?? '').split(',')) if (t !== '') entry.types.add(t);
    }
  }
  const metrics = [...byKey.values()]
    .map(({ types, ...m }) => ({ ...m, type: [...types].join(',') }))
    .sort((a, b) => (a.metric_name < b.metric_name ? -1 : a.metric_name > b.metric_name ? 1 : a.uuid < b.uuid ? -1 : a.uuid > b.uuid ? 1 : 0));
  return { metrics, nodes };
}

export type NodeCount = { node: string; ok: true; count: number; estimate: boolean } | { node: string; ok: false; error: string };

/** `find --count`: each node's count; `total` adds them up (a metric kept on n nodes counts n times). */
export async function countAcross(clients: readonly NodeClient[], opts: Omit<FindOptions, 'limit'>): Promise<{ total: number; nodes: NodeCount[] }> {
  parseTagQuery(opts.query);
  const call = { query: opts.query, account: opts.account, local: true };
  const outcomes = await fanOut(clients, (c) => c.countTags(call, opts.signal ? { signal: opts.signal } : {}), { concurrency: opts.concurrency ?? 32 });
  const nodes: NodeCount[] = outcomes.map((o) =>
    o.ok ? { node: o.node, ok: true, count: o.value.count, estimate: o.value.estimate } : { node: o.node, ok: false, error: o.error.message },
  );
  return { total: nodes.reduce((sum, n) => sum + (n.ok ? n.count : 0), 0), nodes };
}
