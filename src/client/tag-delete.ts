/**
 * A tag-query delete on many nodes, as node steps that return data and never print: the store's
 * dry run on every node (no confirmation header), the confirmed delete looping per node while the
 * node says more remain, and the after-look (the same dry run again) that proves each deleted
 * metric gone. The store's tag-query deletes are node-local and not journaled (data-deletion.md:
 * "issue the same API call to each node"), so each node is asked for itself and judged on its own
 * answers. cli/commands/delete turns these into tables, a confirmation, a receipt and an exit code.
 */
import { deleteStatusOf, type DeleteResultRow, type DeleteStatus } from '../protocol/index.js';
import { forEachBounded } from './concurrency.js';
import { NodeRequestError } from './errors.js';
import type { NodeClient, TagDeleteScope } from './node-client.js';

export interface TagDeleteRequest {
  query: string;
  account: number;
  scope: TagDeleteScope;
}

/** A metric on one node: its check uuid (from the reference node's payload; '' when the node gives none) and its name. */
export interface MetricKey {
  uuid: string;
  metric: string;
}

export const metricKey = (m: MetricKey): string => `${m.uuid}\u0000${m.metric}`;

/** One node's dry run: each metric with its status word, or why the node gave no answer. */
export interface NodeLook {
  node: string;
  metrics: Array<MetricKey & { status: DeleteStatus | 'unknown'; result: string }>;
  /** The node listed only `limit` metrics and has more. */
  incomplete: boolean;
  error?: string;
}

function keyOf(row: DeleteResultRow): MetricKey {
  const payload = typeof row.payload === 'string' && /^[0-9a-f-]{36}$/i.test(row.payload) ? row.payload.toLowerCase() : '';
  return { uuid: payload, metric: row.metric_name };
}

function errorText(err: unknown): string {
  return err instanceof NodeRequestError ? err.message : err instanceof Error ? err.message : String(err);
}

/** The store's dry run on one node: what a confirmed call would do, at most `limit` metrics. */
export async function lookOnNode(client: NodeClient, req: TagDeleteRequest, limit: number, signal?: AbortSignal): Promise<NodeLook> {
  try {
    const page = await client.tagDelete({ ...req, limit, confirm: false, local: true }, signal ? { signal } : {});
    const metrics = page.rows.map((r) => ({ ...keyOf(r), status: deleteStatusOf(r.delete_result) ?? ('unknown' as const), result: r.delete_result }));
    return { node: client.url, metrics, incomplete: page.incomplete };
  } catch (err) {
    return { node: client.url, metrics: [], incomplete: false, error: errorText(err) };
  }
}

/** The dry run on every node, `concurrency` at a time. */
export async function lookOnNodes(clients: readonly NodeClient[], req: TagDeleteRequest, opts: { limit: number; concurrency?: number; signal?: AbortSignal }): Promise<NodeLook[]> {
  const out = new Array<NodeLook>(clients.length);
  await forEachBounded(clients.length, opts.concurrency ?? 32, async (i) => {
    out[i] = await lookOnNode(clients[i]!, req, opts.limit, opts.signal);
  });
  return out;
}

/** Why a node's delete loop stopped. */
export type LoopEnd = 'complete' | 'failed' | 'stalled' | 'round_limit' | 'interrupted';

export interface NodeDeletion {
  node: string;
  /** Every metric the node answered `deleted` for, in the order it did. */
  deleted: MetricKey[];
  rounds: number;
  end: LoopEnd;
  /** Other answers the node gave in confirmed calls (a status other than `deleted`). */
  other: Array<MetricKey & { result: string }>;
  error?: string;
}

export interface DeleteProgress {
  node: string;
  round: number;
  /** Deleted on this node so far. */
  deleted: number;
  /** What this round deleted (the metrics not deleted by an earlier round). */
  fresh: MetricKey[];
}

/**
 * The confirmed delete on one node: calls with `X-Snowth-Confirm-Delete: 1` and the advisory limit
 * `batch`, again while the node answers `X-Snowth-Incomplete-Results: true`, at most `maxRounds`.
 * A round that deletes nothing new while the node still says more remain ends the loop as
 * `stalled`: the same request would only be sent again for nothing.
 */
export async function deleteOnNode(
  client: NodeClient,
  req: TagDeleteRequest,
  opts: { batch: number; maxRounds: number; signal?: AbortSignal; onProgress?: (p: DeleteProgress) => void },
): Promise<NodeDeletion> {
  const seen = new Set<string>();
  const result: NodeDeletion = { node: client.url, deleted: [], rounds: 0, end: 'complete', other: [] };
  for (;;) {
    if (opts.signal?.aborted) return { ...result, end: 'interrupted' };
    if (result.rounds >= opts.maxRounds) return { ...result, end: 'round_limit' };
    let page;
    try {
      page = await client.tagDelete({ ...req, limit: opts.batch, confirm: true, local: true }, opts.signal ? { signal: opts.signal } : {});
    } catch (err) {
      return { ...result, end: opts.signal?.aborted ? 'interrupted' : 'failed', error: errorText(err) };
    }
    result.rounds++;
    const fresh: MetricKey[] = [];
    for (const row of page.rows) {
      const key = keyOf(row);
      if (deleteStatusOf(row.delete_result) !== 'deleted') result.other.push({ ...key, result: row.delete_result });
      else if (!seen.has(metricKey(key))) {
        seen.add(metricKey(key));
        result.deleted.push(key);
        fresh.push(key);
      }
    }
    opts.onProgress?.({ node: client.url, round: result.rounds, deleted: result.deleted.length, fresh });
    if (!page.incomplete) return result;
    if (fresh.length === 0) return { ...result, end: 'stalled' };
  }
}

/** The confirmed delete on every node at once (`concurrency` nodes at a time), each looping on its own. */
export async function deleteOnNodes(
  clients: readonly NodeClient[],
  req: TagDeleteRequest,
  opts: { batch: number; maxRounds: number; concurrency?: number; signal?: AbortSignal; onProgress?: (p: DeleteProgress) => void },
): Promise<NodeDeletion[]> {
  const out = new Array<NodeDeletion>(clients.length);
  await forEachBounded(clients.length, opts.concurrency ?? 32, async (i) => {
    out[i] = await deleteOnNode(clients[i]!, req, opts);
  });
  return out;
}

/** What the after-look proves about one node's deleted metrics. */
export interface NodeProof {
  node: string;
  /** Deleted metrics the after-look shows gone (`no content`, `not found`, or absent from the list). */
  gone: number;
  /** Deleted metrics the node lists again with data (`found`): a late replay brought them back. */
  reappeared: MetricKey[];
  /** Metrics with data still to delete that this run did not delete (the loop stopped early, or they are new). */
  remaining: MetricKey[];
  /** The after-look failed or was cut short: nothing is proven about what it did not list. */
  unconfirmed?: string;
}

/**
 * Judges the after-look of one node against its dry run and what it said it deleted. A full
 * delete removes the index entry, so a deleted metric is absent from the list; a time-bounded one
 * stays listed as `no content`. Every metric the dry run found (or the node said it deleted) and
 * the after-look no longer shows with data is gone, even if the answer that deleted it was lost.
 * An after-look that listed only `limit` metrics proves absence of nothing.
 */
export function proveGone(deletion: Pick<NodeDeletion, 'node' | 'deleted'>, after: NodeLook, before?: NodeLook): NodeProof {
  const proof: NodeProof = { node: deletion.node, gone: 0, reappeared: [], remaining: [] };
  if (after.error !== undefined) return { ...proof, unconfirmed: `the after-look failed: ${after.error}` };
  const deleted = new Set(deletion.deleted.map(metricKey));
  const withData = new Map<string, MetricKey>();
  for (const m of after.metrics) if (m.status === 'found') withData.set(metricKey(m), { uuid: m.uuid, metric: m.metric });
  const targets = new Map<string, MetricKey>(deletion.deleted.map((k) => [metricKey(k), k]));
  for (const m of before?.metrics ?? []) if (m.status === 'found') targets.set(metricKey(m), { uuid: m.uuid, metric: m.metric });
  for (const [key, k] of targets) {
    if (!withData.has(key)) proof.gone++;
    else if (deleted.has(key)) proof.reappeared.push(k);
  }
  for (const [key, m] of withData) if (!deleted.has(key)) proof.remaining.push(m);
  if (after.incomplete) proof.unconfirmed = 'the after-look listed only part of the matching metrics';
  return proof;
}
