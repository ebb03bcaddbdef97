import { describe, expect, it } from 'vitest';
import { makeReceipt, receiptToJson, receiptTotals, type NodeLook } from '../../src/client/receipt.js';
import type { ShardRange } from '../../src/protocol/index.js';

const A = 'http://a:8112';
const day = (i: number): ShardRange => ({ start: i * 86_400, end: (i + 1) * 86_400 });

function look(nnt60: ShardRange[], opts: { raw?: ShardRange[]; freeMB?: number; at?: number; problem?: string } = {}): NodeLook {
  if (opts.problem) return { node: A, at: opts.at ?? 0, inventory: null, fs: new Map(), problem: opts.problem };
  return {
    node: A,
    at: opts.at ?? 1_000,
    inventory: {
      node: A,
      nnt: { byPeriod: new Map([[60, nnt60]]) },
      histogram: new Map([[60, { problem: 'GET /histogram/60/list_shards answered 404' }]]),
      raw: { shards: opts.raw ?? [] },
      histogramRaw: { shards: [] },
    },
    fs: new Map(
      opts.freeMB === undefined
        ? []
        : [
            [60, { id: 'fs0', totalMB: 1000, freeMB: opts.freeMB }],
            [300, { id: 'fs0', totalMB: 1000, freeMB: opts.freeMB }],
          ],
    ),
  };
}

describe('makeReceipt', () => {
  it('counts exactly the shards listed before and not after, merges them into ranges, and reads fs once per file system', () => {
    const before = look([day(1), day(2), day(3), day(7), day(8)], { raw: [day(0)], freeMB: 100, at: 1_000 });
    // day 9 is new data written meanwhile: not a removal, and it does not hide one.
    const after = look([day(3), day(8), day(9)], { raw: [], freeMB: 130.5, at: 5_000 });
    const r = makeReceipt([before], [after], 2_000);
    const s60 = r.nodes[0]!.spans.find((s) => s.span === 60)!;
    expect(s60).toMatchObject({ shardsBefore: 5, shardsAfter: 3, shardsRemoved: 3, oldestBefore: 86_400, oldestAfter: 3 * 86_400, freeMbBefore: 100, freeMbAfter: 130.5 });
    expect(s60.removedRanges).toEqual([
      { start: 86_400, end: 3 * 86_400 },
      { start: 7 * 86_400, end: 8 * 86_400 },
    ]);
    const raw = r.nodes[0]!.spans.find((s) => s.span === 'raw' && s.type === 'nnt')!;
    expect(raw).toMatchObject({ shardsRemoved: 1, oldestAfter: null, freeMbBefore: null });
    const h = r.nodes[0]!.spans.find((s) => s.type === 'histogram' && s.span === 60)!;
    expect(h.shardsRemoved).toBeNull();
    expect(h.problem).toMatch(/before: .*404.*after: .*404/);
    // Two periods on one file system count once.
    expect(receiptTotals(r)).toEqual({ shardsRemoved: 4, freedMb: 30.5, incomplete: 0 });
    const json = receiptToJson(r);
    expect(json.settle_seconds).toBe(2);
    expect(json.nodes[0]!.spans[0]).toMatchObject({ type: 'nnt', span: 60, shards_before: 5, shards_after: 3, shards_removed: 3, oldest_before: 86_400, free_mb_after: 130.5 });
  });

  it('a node whose after-look failed has no removal counts and says why', () => {
    const r = makeReceipt([look([day(1)])], [look([], { problem: 'unreachable: connection refused' })]);
    expect(r.nodes[0]!.problem).toMatch(/after: unreachable/);
    expect(r.nodes[0]!.afterAt).toBeNull();
    expect(r.nodes[0]!.spans.find((s) => s.span === 60)!.shardsRemoved).toBeNull();
    expect(receiptTotals(r).incomplete).toBe(1);
  });
});
