/**
 * What the CLI says about a receipt: its line on stderr and its --metrics-file families. The hook
 * that takes one is the client's (client/receipt-hook.ts).
 */
import { receiptTotals, type Receipt } from '../client/receipt.js';
import type { MetricFamily } from './render/prometheus.js';

export { ReceiptHook, type ReceiptHookOptions } from '../client/receipt-hook.js';

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
