/**
 * What a node shows about its retention, read-only: its shard inventories (the four list
 * endpoints), whether it has a sweep API (else it manages its own retention), its configured
 * retention and its rollups' file systems (`GET /state`). A list the node does not give is a
 * `problem` naming the request, never an empty list: "lists nothing" and "holds nothing" differ.
 */
import { rollupFsOf, retentionConfigOf, type ManagedBy, type NodeInventory, type NodeRetentionConfig, type RollupFs, type ShardList, type ShardRange } from '../protocol/index.js';
import { answerSchemas } from './answers.js';
import { NodeHttpError, NodeRequestError } from './errors.js';
import { fanOut } from './fan-out.js';
import type { CallOptions, NodeClient } from './node-client.js';
import { NO_RETRY } from './retry.js';

export interface NodeRetentionFacts {
  node: string;
  /** Null when the sweep API probe gave no answer (see `problem`). */
  managedBy: ManagedBy | null;
  inventory: NodeInventory | null;
  /** `/state` `retention` (a tsnode extension); null when the node does not report one. */
  retention: NodeRetentionConfig | null;
  /** `/state` `nntbs.rollup_<period>.fs`, per period; empty when not reported. */
  fs: ReadonlyMap<number, RollupFs>;
  /** Why the node could not be looked at: nothing else is known. */
  problem?: string;
}

export interface InventoryOptions {
  /** Histogram periods to list besides those the node reports in `/state` (the policy's). */
  histogramPeriods?: readonly number[];
  call?: CallOptions;
}

function why(err: unknown, path: string): string {
  if (err instanceof NodeHttpError && err.status === 404) return `GET ${path} answered 404: the node lists no such shards (a store or node without shard inventories)`;
  if (err instanceof NodeRequestError) return `GET ${path}: ${err.detail}`;
  throw err;
}

async function listOf(path: string, fetch: () => Promise<ShardRange[]>): Promise<ShardList> {
  try {
    return { shards: await fetch() };
  } catch (err) {
    return { problem: why(err, path) };
  }
}

/** The lists of one node a look asks for (receipts): each false list is not requested and stays absent. */
export interface ListSelection {
  nnt: boolean;
  raw: boolean;
  histogramRaw: boolean;
  histogramPeriods: readonly number[];
}

/**
 * The selected inventories of one node: in parallel, or with `inTurn` one request after another
 * (on one kept-alive connection: a parallel look opens a connection per extra list, on both sides).
 */
export async function fetchListed(
  client: NodeClient,
  sel: ListSelection,
  call: CallOptions = {},
  opts: { inTurn?: boolean } = {},
): Promise<Pick<NodeInventory, 'node' | 'histogram'> & Partial<Pick<NodeInventory, 'nnt' | 'raw' | 'histogramRaw'>>> {
  const periods = [...new Set(sel.histogramPeriods)].sort((a, b) => a - b);
  const nntList = (): Promise<NodeInventory['nnt']> =>
    client.nntShards(call).then(
      (byPeriod): NodeInventory['nnt'] => ({ byPeriod }),
      (err: unknown): NodeInventory['nnt'] => ({ problem: why(err, '/list_nntbs_shards') }),
    );
  const skipped = (): Promise<undefined> => Promise.resolve(undefined);
  const asks: Array<() => Promise<ShardList | NodeInventory['nnt'] | undefined>> = [
    sel.nnt ? nntList : skipped,
    sel.raw ? () => listOf('/raw/list_shards', () => client.startEndShards({ kind: 'raw' }, call)) : skipped,
    sel.histogramRaw ? () => listOf('/histogram_raw/list_shards', () => client.startEndShards({ kind: 'histogram_raw' }, call)) : skipped,
    ...periods.map((period) => () => listOf(`/histogram/${period}/list_shards`, () => client.startEndShards({ kind: 'histogram', period }, call))),
  ];
  const got = opts.inTurn ? await inTurn(asks) : await Promise.all(asks.map((ask) => ask()));
  const [nnt, raw, histogramRaw, ...hist] = got as [NodeInventory['nnt'] | undefined, ShardList | undefined, ShardList | undefined, ...ShardList[]];
  return {
    node: client.url,
    ...(nnt ? { nnt } : {}),
    ...(raw ? { raw } : {}),
    ...(histogramRaw ? { histogramRaw } : {}),
    histogram: new Map(periods.map((p, i) => [p, hist[i]!])),
  };
}

async function inTurn<T>(asks: ReadonlyArray<() => Promise<T>>): Promise<T[]> {
  const out: T[] = [];
  for (const ask of asks) out.push(await ask());
  return out;
}

/** The four inventories of one node; `histogramPeriods` are the periods whose histogram shards are asked for. */
export async function fetchInventory(client: NodeClient, histogramPeriods: readonly number[], call: CallOptions = {}): Promise<NodeInventory> {
  const got = await fetchListed(client, { nnt: true, raw: true, histogramRaw: true, histogramPeriods }, call);
  return { node: got.node, nnt: got.nnt!, raw: got.raw!, histogramRaw: got.histogramRaw!, histogram: got.histogram };
}

/** Whether the node sweeps: a 404 on `GET /sweep_delete` means it has no sweep API and manages its own retention. */
export async function managedByOf(client: NodeClient, call: CallOptions = {}): Promise<ManagedBy> {
  try {
    await client.sweepStatus({ ...call, retry: NO_RETRY });
    return 'sweep';
  } catch (err) {
    if (err instanceof NodeRequestError && err.code === 'no_sweep_api') return 'node';
    throw err;
  }
}

/** Everything verify and receipts read from one node. Never throws for the node's sake: a node that cannot be read has `problem`. */
export async function fetchRetentionFacts(client: NodeClient, opts: InventoryOptions = {}): Promise<NodeRetentionFacts> {
  const call = opts.call ?? {};
  try {
    const [state, managedBy] = await Promise.all([client.nodeState(call), managedByOf(client, call)]);
    const storage = (await answerSchemas()).stateStorageSchema.safeParse(state);
    const own = state.histogram?.rollups ?? [];
    const inventory = await fetchInventory(client, [...own, ...(opts.histogramPeriods ?? [])], call);
    return {
      node: client.url,
      managedBy,
      inventory,
      retention: storage.success ? retentionConfigOf(storage.data) : null,
      fs: storage.success ? rollupFsOf(storage.data.nntbs) : new Map(),
    };
  } catch (err) {
    if (!(err instanceof NodeRequestError)) throw err;
    return { node: client.url, managedBy: null, inventory: null, retention: null, fs: new Map(), problem: err.detail };
  }
}

/** fetchRetentionFacts on every node, `concurrency` at a time, in node order. */
export async function gatherRetentionFacts(clients: readonly NodeClient[], opts: InventoryOptions & { concurrency?: number } = {}): Promise<NodeRetentionFacts[]> {
  const out = await fanOut(clients, (c) => fetchRetentionFacts(c, opts), { concurrency: opts.concurrency ?? 32 });
  return out.map((o) => (o.ok ? o.value : { node: o.node, managedBy: null, inventory: null, retention: null, fs: new Map(), problem: o.error.detail }));
}
