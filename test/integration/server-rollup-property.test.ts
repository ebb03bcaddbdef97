import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import fc from 'fast-check';
import type { RunningNode } from '../../src/server/server.js';
import { memoryNode, nnt, rollup, write } from './server-helpers.js';

let node: RunningNode;
beforeAll(async () => {
  node = await memoryNode({ rollups: [60, 300, 1800] });
});
afterAll(() => node.close());

describe('property: stored larger spans always equal a recomputation from the raw records', () => {
  it('holds for random batches with out-of-order records, duplicates and replaces', async () => {
    let run = 0;
    const rec = fc.record({ minute: fc.integer({ min: 0, max: 59 }), count: fc.integer({ min: 0, max: 5 }), value: fc.integer({ min: -50, max: 50 }) });
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(rec, { minLength: 1, maxLength: 15 }), { minLength: 1, maxLength: 5 }), async (batches) => {
        const metric = `rp${run++}`;
        for (const batch of batches) {
          const r = await write(
            node.url,
            batch.map((x) => nnt(x.minute * 60, { count: x.count, value: x.value, derivative: x.value / 2 }, metric)),
          );
          expect(r.status).toBe(200);
        }
        for (const span of ['300s', '1800s']) {
          const q = { start: '0.000', end: '3600.000', span, type: 'all' };
          const stored = await rollup(node.url, { ...q, engine: 'nnt' }, metric);
          const raw = await rollup(node.url, { ...q, engine: 'recalc' }, metric);
          expect(stored.length).toBe(raw.length);
          stored.forEach(([ts, a], i) => {
            const b = raw[i][1];
            expect(ts).toBe(raw[i][0]);
            if (b === null) {
              expect(a).toBeNull();
              return;
            }
            expect(a.count).toBe(b.count);
            for (const k of ['value', 'stddev', 'derivative', 'derivative_stddev']) {
              expect(Math.abs(a[k] - b[k]), `${span} ${ts} ${k}`).toBeLessThan(1e-9 * Math.max(1, Math.abs(b[k])));
            }
          });
        }
      }),
      { numRuns: 60 },
    );
  });
});

describe('replaces and appends mixed in one batch', () => {
  it('recomputes a bucket with a replaced record once, however the batch is ordered', async () => {
    const m = 'mixed';
    await write(node.url, [nnt(0, { count: 1 }, m), nnt(60, { count: 1 }, m)]);
    await write(node.url, [nnt(0, { count: 5 }, m), nnt(300, { count: 1 }, m), nnt(120, { count: 1 }, m), nnt(60, { count: 2 }, m)]);
    const rows = await rollup(node.url, { start: '0.000', end: '600.000', span: '300s', engine: 'nnt', type: 'count' }, m);
    expect(rows).toEqual([
      [0, 5 + 2 + 1],
      [300, 1],
    ]);
    await write(node.url, [nnt(720, { count: 1 }, m), nnt(600, { count: 1 }, m), nnt(660, { count: 1 }, m), nnt(620 - 20, { count: 4 }, m)]);
    expect(await rollup(node.url, { start: '600.000', end: '900.000', span: '300s', engine: 'nnt', type: 'count' }, m)).toEqual([[600, 6]]);
  });
});
