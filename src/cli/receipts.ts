/**
 * The receipt hook of destructive runs (`sweep`, `retention apply`): `before()` once the run is
 * confirmed and before its first DELETE, `after()` once its last step has ended (after
 * `--settle`); `after()` diffs the two looks (client/receipt.ts), journals the receipt as one
 * `receipt` line under the run's id, and returns it. Reads only; a look that fails is recorded in
 * the receipt as a problem, never a reason to stop the run.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { NodeClient } from '../client/node-client.js';
import { makeReceipt, receiptToJson, receiptTotals, takeLook, type LookScope, type NodeLook, type Receipt } from '../client/receipt.js';
import type { WireNodeState } from '../protocol/index.js';
import type { JournalEntry } from './journal.js';
import type { MetricFamily } from './render/prometheus.js';

export interface ReceiptHookOptions {
  /** Wait this long after the last step before the after-look (node-managed deletion is asynchronous). */
  settleMs: number;
  concurrency: number;
  signal: AbortSignal;
  now: () => number;
  /** `/state` answers the preflight just read, by node URL: the before-look does not ask again. */
  states?: ReadonlyMap<string, WireNodeState>;
}

export class ReceiptHook {
  private beforeLook: NodeLook[] | undefined;
  private scope: LookScope | undefined;
  constructor(
    private readonly clients: readonly NodeClient[],
    private readonly opts: ReceiptHookOptions,
  ) {}

  private look(states?: ReadonlyMap<string, WireNodeState>): Promise<NodeLook[]> {
    const o = this.opts;
    return takeLook(this.clients, {
      concurrency: o.concurrency,
      call: { signal: o.signal },
      now: o.now,
      ...(this.scope ? { scope: this.scope } : {}),
      ...(states ? { states } : {}),
    });
  }

  /**
   * The look before anything is sent (with the preflight's `/state` answers when given). `scope`:
   * the lists the run's DELETEs can change (lookScopeOf its requests), the only ones both looks
   * read; every list when absent.
   */
  async before(scope?: LookScope): Promise<void> {
    this.scope = scope;
    this.beforeLook = await this.look(this.opts.states);
  }

  /** Settles, looks again, diffs; journals the receipt under `run` when a journal is given. Null when before() never ran. */
  async after(journal: { append(entry: JournalEntry): boolean } | undefined, run: string, attempt?: number): Promise<Receipt | null> {
    if (!this.beforeLook) return null;
    if (this.opts.settleMs > 0) await sleep(this.opts.settleMs, undefined, { signal: this.opts.signal }).catch(() => undefined);
    const receipt = makeReceipt(this.beforeLook, await this.look(), this.opts.settleMs);
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
