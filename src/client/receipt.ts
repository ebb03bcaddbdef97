/**
 * Receipts: what a destructive run removed, proved per node by its shard inventories before the
 * first DELETE and after its last step (after a settling delay, for stores that delete by
 * themselves). Per node, type and span: shards before and after, the shards removed (those listed
 * before and not after), the oldest shard's start before and after, and the rollup file system's
 * free megabytes before and after (`/state` `nntbs.rollup_<period>.fs`): "freed so far", since the
 * store frees space asynchronously. `takeLook` reads (client), `makeReceipt` diffs (pure).
 */
import { rollupFsOf, type NodeInventory, type RollupFs, type ShardList, type ShardRange, type SweepRequest, type WireNodeState } from '../protocol/index.js';
import { answerSchemas } from './answers.js';
import { NodeRequestError } from './errors.js';
import { fetchListed } from './inventory.js';
import { fanOut } from './fan-out.js';
import type { CallOptions, NodeClient } from './node-client.js';

/** The inventories a look reads: a list the run cannot change is not asked for, and the receipt says nothing about it. */
export interface LookScope {
  /** `GET /list_nntbs_shards` (every numeric span in one answer). */
  nnt: boolean;
  /** `GET /raw/list_shards`: always; else when a numeric step's spans cover every span the node reports (or it reports none). */
  raw: boolean;
  /** The span lists of the numeric steps that name spans. */
  nntSpanLists?: readonly (readonly number[])[];
  /** `GET /histogram_raw/list_shards`: always; else when a step names the node's smallest histogram period (or it reports none). */
  histogramRaw: boolean;
  /** `GET /histogram/{period}/list_shards` for these periods... */
  histogramPeriods: readonly number[];
  /** ...and for every period the node reports in `/state` (a histogram step naming no span sweeps them all). */
  histogramOwn: boolean;
}

/** Every list: what a look without a scope reads. */
export const FULL_LOOK: LookScope = { nnt: true, raw: true, histogramRaw: true, histogramPeriods: [], histogramOwn: true };

/**
 * What a run's DELETEs can change: numeric steps the nntbs shards, and the raw shards when a step
 * sweeps every span (raw data goes with them); histogram steps the histogram shards of the periods
 * they name (all the node's when they name none), and the raw histograms when that includes the
 * smallest period; text has no shard inventory. Span-dependent parts are settled per node (lookAtNode).
 */
export function lookScopeOf(requests: readonly Pick<SweepRequest, 'types' | 'nntRollups' | 'histogramRollups'>[]): LookScope {
  const nntReqs = requests.filter((r) => r.types.includes('nnt'));
  const hist = requests.filter((r) => r.types.includes('histogram'));
  return {
    nnt: nntReqs.length > 0,
    raw: nntReqs.some((r) => !r.nntRollups?.length),
    nntSpanLists: nntReqs.flatMap((r) => (r.nntRollups?.length ? [r.nntRollups] : [])),
    histogramRaw: hist.some((r) => !r.histogramRollups?.length),
    histogramPeriods: [...new Set(hist.flatMap((r) => r.histogramRollups ?? []))].sort((a, b) => a - b),
    histogramOwn: hist.some((r) => !r.histogramRollups?.length),
  };
}

/** The lists of a look: those its scope did not ask for are absent. */
export type LookInventory = Partial<Pick<NodeInventory, 'nnt' | 'raw' | 'histogramRaw'>> & Pick<NodeInventory, 'node' | 'histogram'>;

/** One node's inventories and file systems at one moment. */
export interface NodeLook {
  node: string;
  /** Epoch milliseconds when it was taken. */
  at: number;
  inventory: LookInventory | null;
  fs: ReadonlyMap<number, RollupFs>;
  /** Why it could not be taken. */
  problem?: string;
}

export type ReceiptSpanKey = number | 'raw';

export interface ReceiptSpan {
  type: 'nnt' | 'histogram';
  span: ReceiptSpanKey;
  shardsBefore: number | null;
  shardsAfter: number | null;
  /** Listed before and not after; null when either list is missing. */
  shardsRemoved: number | null;
  /** The removed shards, contiguous ones merged into one range. */
  removedRanges: ShardRange[];
  oldestBefore: number | null;
  oldestAfter: number | null;
  freeMbBefore: number | null;
  freeMbAfter: number | null;
  /** Why a side is missing. */
  problem?: string;
}

export interface NodeReceipt {
  node: string;
  beforeAt: number | null;
  afterAt: number | null;
  spans: ReceiptSpan[];
  /** Each distinct file system the rollups report (by `id`; periods often share one): free MB before and after. */
  fs: Array<{ id: string; freeMbBefore: number | null; freeMbAfter: number | null }>;
  /** Why the receipt of this node is incomplete (a look could not be taken). */
  problem?: string;
}

export interface Receipt {
  settleMs: number;
  nodes: NodeReceipt[];
}

/** Raw numeric records go only with a sweep of every numeric span: a list naming them all, or none. */
function rawTouched(scope: LookScope, state: WireNodeState): boolean {
  if (scope.raw) return true;
  const spans = state.nnt?.rollups ?? state.rollups ?? [];
  return (scope.nntSpanLists ?? []).some((l) => spans.length === 0 || spans.every((s) => l.includes(s)));
}

/** The raw histograms are the smallest histogram period's. */
function histogramRawTouched(scope: LookScope, own: readonly number[]): boolean {
  if (scope.histogramRaw) return true;
  if (scope.histogramPeriods.length === 0) return false;
  return own.length === 0 || scope.histogramPeriods.includes(Math.min(...own));
}

/**
 * One node's look: `/state` (free space, the node's histogram periods) unless `state` is the one
 * the run's preflight just read, then the lists of `scope`. Never throws for the node's sake.
 */
export async function lookAtNode(client: NodeClient, scope: LookScope, opts: { call?: CallOptions; state?: WireNodeState; now?: () => number } = {}): Promise<NodeLook> {
  const now = opts.now ?? Date.now;
  const call = opts.call ?? {};
  try {
    const state = opts.state ?? (await client.nodeState(call));
    const storage = (await answerSchemas()).stateStorageSchema.safeParse(state);
    const own = state.histogram?.rollups ?? [];
    const periods = [...scope.histogramPeriods, ...(scope.histogramOwn ? own : [])];
    // In turn: a node's lists on the one connection the run's polls keep (a look is a few small answers).
    const sel = { nnt: scope.nnt, raw: rawTouched(scope, state), histogramRaw: histogramRawTouched(scope, own), histogramPeriods: periods };
    const inventory = await fetchListed(client, sel, call, { inTurn: true });
    return { node: client.url, at: now(), inventory, fs: storage.success ? rollupFsOf(storage.data.nntbs) : new Map() };
  } catch (err) {
    if (!(err instanceof NodeRequestError)) throw err;
    return { node: client.url, at: now(), inventory: null, fs: new Map(), problem: err.detail };
  }
}

/**
 * Takes a look at every node (read-only GETs), `concurrency` at a time: the lists of `scope`
 * (default every list). `states` are `/state` answers already read, by node URL. Never throws for a node's sake.
 */
export async function takeLook(
  clients: readonly NodeClient[],
  opts: { scope?: LookScope; states?: ReadonlyMap<string, WireNodeState>; histogramPeriods?: readonly number[]; concurrency?: number; call?: CallOptions; now?: () => number } = {},
): Promise<NodeLook[]> {
  const now = opts.now ?? Date.now;
  const base = opts.scope ?? FULL_LOOK;
  const scope = opts.histogramPeriods ? { ...base, histogramPeriods: [...base.histogramPeriods, ...opts.histogramPeriods] } : base;
  const out = await fanOut(
    clients,
    (c) => {
      const state = opts.states?.get(c.url);
      return lookAtNode(c, scope, { now, ...(opts.call ? { call: opts.call } : {}), ...(state ? { state } : {}) });
    },
    { concurrency: opts.concurrency ?? 32 },
  );
  return out.map((o) => (o.ok ? o.value : { node: o.node, at: now(), inventory: null, fs: new Map(), problem: o.error.detail }));
}

const key = (s: ShardRange): string => `${s.start}:${s.end}`;

/** Merges sorted ranges that touch into one. */
function mergeRanges(ranges: readonly ShardRange[]): ShardRange[] {
  const sorted = [...ranges].sort((a, b) => a.start - b.start);
  const out: ShardRange[] = [];
  for (const r of sorted) {
    const last = out[out.length - 1];
    if (last && r.start <= last.end) last.end = Math.max(last.end, r.end);
    else out.push({ ...r });
  }
  return out;
}

/** Every (type, span) list of a look, keyed `nnt:60`, `histogram:raw`, ... */
function listsOf(look: NodeLook | undefined): Map<string, ShardList> {
  const out = new Map<string, ShardList>();
  const inv = look?.inventory;
  if (!inv) return out;
  if (inv.nnt && 'byPeriod' in inv.nnt) for (const [p, shards] of inv.nnt.byPeriod) out.set(`nnt:${p}`, { shards });
  else if (inv.nnt) out.set('nnt:*', inv.nnt);
  for (const [p, list] of inv.histogram) out.set(`histogram:${p}`, list);
  if (inv.raw) out.set('nnt:raw', inv.raw);
  if (inv.histogramRaw) out.set('histogram:raw', inv.histogramRaw);
  return out;
}

function oldestOf(list: ShardList | undefined): number | null {
  if (!list || !('shards' in list) || list.shards.length === 0) return null;
  let m = Infinity;
  for (const s of list.shards) if (s.start < m) m = s.start;
  return m;
}

function spanReceipt(k: string, before: ShardList | undefined, after: ShardList | undefined, fsBefore: NodeLook | undefined, fsAfter: NodeLook | undefined): ReceiptSpan {
  const [type, spanText] = k.split(':') as ['nnt' | 'histogram', string];
  const span: ReceiptSpanKey = spanText === 'raw' ? 'raw' : Number(spanText);
  const b = before && 'shards' in before ? before.shards : null;
  const a = after && 'shards' in after ? after.shards : null;
  let removed: ShardRange[] = [];
  if (b && a) {
    const still = new Set(a.map(key));
    removed = b.filter((s) => !still.has(key(s)));
  }
  const fs = (look: NodeLook | undefined): number | null => (type === 'nnt' && typeof span === 'number' ? (look?.fs.get(span)?.freeMB ?? null) : null);
  const problems = [before && 'problem' in before ? `before: ${before.problem}` : null, after && 'problem' in after ? `after: ${after.problem}` : null].filter(Boolean);
  return {
    type,
    span,
    shardsBefore: b ? b.length : null,
    shardsAfter: a ? a.length : null,
    shardsRemoved: b && a ? removed.length : null,
    removedRanges: mergeRanges(removed),
    oldestBefore: oldestOf(before),
    oldestAfter: oldestOf(after),
    freeMbBefore: fs(fsBefore),
    freeMbAfter: fs(fsAfter),
    ...(problems.length ? { problem: problems.join('; ') } : {}),
  };
}

const order = (k: string): [number, number] => {
  const [type, span] = k.split(':');
  return [type === 'nnt' ? 0 : 1, span === 'raw' ? Number.MAX_SAFE_INTEGER : span === '*' ? -1 : Number(span)];
};

/** The file systems of a node's rollups, once each (by id; a period without an id is its own). */
function distinctFs(b: NodeLook, a: NodeLook | undefined): NodeReceipt['fs'] {
  const out = new Map<string, { id: string; freeMbBefore: number | null; freeMbAfter: number | null }>();
  const idOf = (period: number, fs: RollupFs): string => fs.id ?? `rollup_${period}`;
  for (const [p, fs] of b.fs) if (!out.has(idOf(p, fs))) out.set(idOf(p, fs), { id: idOf(p, fs), freeMbBefore: fs.freeMB, freeMbAfter: null });
  for (const [p, fs] of a?.fs ?? []) {
    const e = out.get(idOf(p, fs)) ?? { id: idOf(p, fs), freeMbBefore: null, freeMbAfter: null };
    if (e.freeMbAfter === null) e.freeMbAfter = fs.freeMB;
    out.set(e.id, e);
  }
  return [...out.values()];
}

/** Diffs the looks before and after into a receipt; nodes in the order of `before`. Pure. */
export function makeReceipt(before: readonly NodeLook[], after: readonly NodeLook[], settleMs = 0): Receipt {
  const afterBy = new Map(after.map((l) => [l.node, l]));
  const nodes = before.map((b): NodeReceipt => {
    const a = afterBy.get(b.node);
    const lb = listsOf(b);
    const la = listsOf(a);
    const keys = [...new Set([...lb.keys(), ...la.keys()])]
      .filter((k) => !k.endsWith(':*'))
      .sort((x, y) => {
        const [tx, sx] = order(x);
        const [ty, sy] = order(y);
        return tx - ty || sx - sy;
      });
    const problems = [b.problem ? `before: ${b.problem}` : null, !a ? 'after: no look was taken' : a.problem ? `after: ${a.problem}` : null].filter(Boolean);
    return {
      node: b.node,
      beforeAt: b.problem ? null : b.at,
      afterAt: a && !a.problem ? a.at : null,
      spans: keys.map((k) => spanReceipt(k, lb.get(k), la.get(k), b, a)),
      fs: distinctFs(b, a),
      ...(problems.length ? { problem: problems.join('; ') } : {}),
    };
  });
  return { settleMs, nodes };
}

/** Totals for a one-line summary: shards removed (known), and the nodes whose receipt is incomplete. */
export function receiptTotals(r: Receipt): { shardsRemoved: number; freedMb: number | null; incomplete: number } {
  let shards = 0;
  let freed: number | null = null;
  let incomplete = 0;
  for (const n of r.nodes) {
    if (n.problem) incomplete++;
    for (const s of n.spans) shards += s.shardsRemoved ?? 0;
    for (const f of n.fs) if (f.freeMbBefore !== null && f.freeMbAfter !== null) freed = (freed ?? 0) + (f.freeMbAfter - f.freeMbBefore);
  }
  return { shardsRemoved: shards, freedMb: freed, incomplete };
}

export interface ReceiptSpanJson {
  type: 'nnt' | 'histogram';
  span: ReceiptSpanKey;
  shards_before: number | null;
  shards_after: number | null;
  shards_removed: number | null;
  removed_ranges: Array<{ start: number; end: number }>;
  oldest_before: number | null;
  oldest_after: number | null;
  free_mb_before: number | null;
  free_mb_after: number | null;
  problem?: string;
}

export interface ReceiptJson {
  settle_seconds: number;
  nodes: Array<{
    node: string;
    before_at: string | null;
    after_at: string | null;
    spans: ReceiptSpanJson[];
    fs: Array<{ id: string; free_mb_before: number | null; free_mb_after: number | null }>;
    problem?: string;
  }>;
}

const isoMs = (ms: number | null): string | null => (ms === null ? null : new Date(ms).toISOString());

/** The receipt as the journal and `history show -o json` carry it (snake_case). */
export function receiptToJson(r: Receipt): ReceiptJson {
  return {
    settle_seconds: r.settleMs / 1000,
    nodes: r.nodes.map((n) => ({
      node: n.node,
      before_at: isoMs(n.beforeAt),
      after_at: isoMs(n.afterAt),
      spans: n.spans.map((s) => ({
        type: s.type,
        span: s.span,
        shards_before: s.shardsBefore,
        shards_after: s.shardsAfter,
        shards_removed: s.shardsRemoved,
        removed_ranges: s.removedRanges,
        oldest_before: s.oldestBefore,
        oldest_after: s.oldestAfter,
        free_mb_before: s.freeMbBefore,
        free_mb_after: s.freeMbAfter,
        ...(s.problem !== undefined ? { problem: s.problem } : {}),
      })),
      fs: n.fs.map((f) => ({ id: f.id, free_mb_before: f.freeMbBefore, free_mb_after: f.freeMbAfter })),
      ...(n.problem !== undefined ? { problem: n.problem } : {}),
    })),
  };
}
