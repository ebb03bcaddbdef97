/**
 * The receipt hook of destructive runs (`sweep`, `retention apply`): the look before the first
 * DELETE (`before()`, or `start()` early, while the preflight runs), each node's look after its last
 * step (`nodeEnded()`, after `--settle`, while the other nodes still run; `after()` looks at the
 * nodes never reported ended), then `after()` diffs the two looks (receipt.ts), journals the
 * receipt as one `receipt` line under the run's id, and returns it. Reads only; a look that fails
 * is recorded in the receipt as a problem, never a reason to stop the run. The run core takes a
 * sweep's receipt itself (run/sweep.ts); `retention apply` holds one (cli/commands/retention).
 */
import { abortableSleep } from './clock.js';
import { limiter, type Gate } from './concurrency.js';
import type { NodeClient } from './node-client.js';
import { makeReceipt, receiptToJson, takeLook, type LookScope, type NodeLook, type Receipt, type ReceiptJson } from './receipt.js';
import type { WireNodeState } from '../protocol/index.js';

/** The journal line a receipt is kept as, under its run's id (and a retention step's attempt). */
export type ReceiptEntry = {
  kind: 'receipt';
  run: string;
  attempt?: number;
  receipt: ReceiptJson;
};

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
    if (o.settleMs > 0) await abortableSleep(o.settleMs, o.signal).catch(() => undefined);
    const [look] = await this.gate(() => this.look([client]));
    return look!;
  }

  /** Looks at the nodes not looked at since their last step, diffs; journals the receipt under `run` when a journal is given. Null when no before-look was taken. */
  async after(journal: { append(entry: ReceiptEntry): boolean } | undefined, run: string, attempt?: number): Promise<Receipt | null> {
    if (!this.beforeLook) return null;
    const before = await this.beforeLook;
    for (const c of this.clients) this.nodeEnded(c.url);
    const after = await Promise.all(this.afterLooks.values());
    const receipt = makeReceipt(before, after, this.opts.settleMs);
    journal?.append({ kind: 'receipt', run, ...(attempt !== undefined ? { attempt } : {}), receipt: receiptToJson(receipt) });
    return receipt;
  }
}
