/**
 * The receipt hook of destructive runs (`sweep`, `retention apply`): the look before the first
 * DELETE (`before()`, or `start()` early, while the preflight runs), each node's look after its last
 * step (`nodeEnded()`, after `--settle`, while the other nodes still run; `after()` looks at the
 * nodes never reported ended), then `after()` diffs the two looks (client/receipt.ts), journals the
 * receipt as one `receipt` line under the run's id, and returns it. Reads only; a look that fails
 * is recorded in the receipt as a problem, never a reason to stop the run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import { limiter, type Gate } from '../client/concurrency.js';
import type { NodeClient } from '../client/node-client.js';
import { makeReceipt, receiptToJson, receiptTotals, takeLook, type LookScope, type NodeLook, type Receipt } from '../client/receipt.js';
import type { WireNodeState } from '../protocol/index.js';
import type { JournalEntry } from './journal.js';
import type { MetricFamily } from './render/prometheus.js';

export interface ReceiptHookOptions {
  /** Wait this long after a node's last step before its after-look (node-managed deletion is asynchronous). */
  settleMs: number;
  /** Nodes looked at at once (each look's lists are read in parallel). */
  concurrency: number;
  signal: AbortSignal;
  now: () => number;
  /** `/state` answers the preflight just read, by node URL: the before-look does not ask again. */
  states?: ReadonlyMap<string, WireNodeState>;
}

export class ReceiptHook {
  private beforeLook: Promise<NodeLook[]> | undefined;
  private scope: LookScope | undefined;
  private readonly afterLooks = new Map<string, Promise<NodeLook>>();
  /** The after-looks of nodes ending at about the same time share the run's concurrency. */
  private readonly gate: Gate;
  private readonly byUrl: ReadonlyMap<string, NodeClient>;
  constructor(
    private readonly clients: readonly NodeClient[],
    private readonly opts: ReceiptHookOptions,
  ) {
    this.gate = limiter(opts.concurrency);
    this.byUrl = new Map(clients.map((c) => [c.url, c]));
  }

  private look(clients: readonly NodeClient[], states?: ReadonlyMap<string, WireNodeState>): Promise<NodeLook[]> {
    const o = this.opts;
    return takeLook(clients, {
      concurrency: o.concurrency,
      call: { signal: o.signal },
      now: o.now,
      ...(this.scope ? { scope: this.scope } : {}),
      ...(states ? { states } : {}),
    });
  }

  /**
   * Starts the look before anything is sent (with the preflight's `/state` answers when given), once:
   * call it only where nothing waits for a person before the first DELETE, or the look grows stale.
   * `scope`: the lists the run's DELETEs can change (lookScopeOf its requests), the only ones both
   * looks read; every list when absent.
   */
  start(scope?: LookScope): void {
    if (this.beforeLook) return;
    this.scope = scope;
    this.beforeLook = this.look(this.clients, this.opts.states);
  }

  /** The look before anything is sent: the one start() began, else one taken now. */
  async before(scope?: LookScope): Promise<void> {
    this.start(scope);
    await this.beforeLook;
  }

  /** `node`'s last step has ended (nothing more is sent to it): its after-look starts, after --settle. */
  nodeEnded(node: string): void {
    const client = this.byUrl.get(node);
    if (!this.beforeLook || !client || this.afterLooks.has(node)) return;
    this.afterLooks.set(node, this.lookAfter(client));
  }

  private async lookAfter(client: NodeClient): Promise<NodeLook> {
    const o = this.opts;
    if (o.settleMs > 0) await sleep(o.settleMs, undefined, { signal: o.signal }).catch(() => undefined);
    const [look] = await this.gate(() => this.look([client]));
    return look!;
  }

  /** Looks at the nodes not looked at since their last step, diffs; journals the receipt under `run` when a journal is given. Null when no before-look was taken. */
  async after(journal: { append(entry: JournalEntry): boolean } | undefined, run: string, attempt?: number): Promise<Receipt | null> {
    if (!this.beforeLook) return null;
    const before = await this.beforeLook;
    for (const c of this.clients) this.nodeEnded(c.url);
    const after = await Promise.all(this.afterLooks.values());
    const receipt = makeReceipt(before, after, this.opts.settleMs);
    journal?.append({ kind: 'receipt', run, ...(attempt !== undefined ? { attempt } : {}), receipt: receiptToJson(receipt) });
    return receipt;
  }
}

/** `receipt: 12 shard(s) removed on 3 node(s), 41.5 MB freed so far` (the store frees space asynchronously). */
export function receiptLine(r: Receipt): string {
  const t = receiptTotals(r);
  const freed = t.freedMb === null ? 'free space not reported' : `${Math.round(t.freedMb * 10) / 10} MB freed so far`;
  const incomplete = t.incomplete
    ? `; incomplete on ${t.incomplete} node(s): ${r.nodes
        .filter((n) => n.problem)
        .map((n) => `${n.node} (${n.problem})`)
        .join(', ')}`
    : '';
  return `receipt: ${t.shardsRemoved} shard(s) removed on ${r.nodes.length} node(s), ${freed}${incomplete}`;
}

/** Shards removed per node, type and span, for --metrics-file. */
export function receiptFamilies(command: string, r: Receipt): MetricFamily[] {
  return [
    {
      name: 'tsnode_shards_removed',
      help: 'Shards the last run removed (listed before it, not after), per node, type and span; absent where the inventories could not be read.',
      type: 'gauge',
      samples: r.nodes.flatMap((n) =>
        n.spans.flatMap((s) => (s.shardsRemoved === null ? [] : [{ labels: { command, node: n.node, type: s.type, span: String(s.span) }, value: s.shardsRemoved }])),
      ),
    },
  ];
}
