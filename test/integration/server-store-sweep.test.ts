import { afterEach, describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { SqliteStore } from '../../src/server/sqlite-store.js';
import type { NntRecord } from '../../src/protocol/index.js';

// What a sweep leaves in the larger spans, checked against the raw records that remain.
const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const stores: SqliteStore[] = [];
const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function store(onDisk = false): SqliteStore {
  let dataDir: string | null = null;
  if (onDisk) {
    dataDir = mkdtempSync(join(tmpdir(), 'tsnode-sweepstore-'));
    dirs.push(dataDir);
  }
  const s = new SqliteStore({ dataDir, rollups: [60, 300, 1800], histogramRollups: [60] });
  stores.push(s);
  return s;
}
const rec = (offset: number, count: number, value: number, metric = 'm'): NntRecord => ({
  metric,
  id: UUID,
  offset,
  count,
  value,
  derivative: 0,
  counter: 0,
  stddev: 0,
  derivative_stddev: 0,
  counter_stddev: 0,
});
/** [bucket, count, value] of one span. */
const rows = (s: SqliteStore, span: number, from = 0, to = 100_000): number[][] => {
  const sid = s.findSeries(UUID, 'm');
  return sid === undefined ? [] : s.rollupRows(sid, span, from, to).map((r) => [r[0], r[1], r[3]]);
};
const sweep = (s: SqliteStore, before: number, spans: number[], raw: boolean): void => {
  s.sweepNnt(s.findSeries(UUID, 'm')!, before, spans, raw);
};

describe('a sweep and the larger spans', () => {
  it('a later write into a bucket of a swept span is recomputed from every raw record in it', () => {
    const s = store();
    s.writeNnt([rec(0, 1, 1), rec(60, 1, 3)]);
    expect(rows(s, 300)).toEqual([[0, 2, 2]]);
    sweep(s, 600, [300], false); // the 300 s bucket goes, the raw records stay
    expect(rows(s, 300)).toEqual([]);
    s.writeNnt([rec(120, 1, 5)]);
    // Not [0, 1, 5]: the bucket no longer existed, and a merge into it would miss the two kept raw records.
    expect(rows(s, 300)).toEqual([[0, 3, 3]]);
  });

  it('after a sweep of every span, a later write into the swept range counts only the records that remain', () => {
    const s = store();
    s.writeNnt([rec(0, 1, 1), rec(60, 1, 3), rec(600, 1, 7)]);
    sweep(s, 300, [60, 300, 1800], true);
    s.writeNnt([rec(120, 2, 4)]);
    expect(rows(s, 300)).toEqual([
      [0, 2, 4],
      [600, 1, 7],
    ]);
    expect(rows(s, 1800)).toEqual([[0, 3, 5]]);
  });

  it('a larger bucket straddling the delete time keeps its records at and after it (sweep of every span)', () => {
    const s = store();
    s.writeNnt([rec(0, 1, 1), rec(60, 1, 3), rec(120, 2, 6), rec(240, 1, 10)]);
    expect(rows(s, 300)).toEqual([[0, 5, 5.2]]);
    sweep(s, 120, [60, 300, 1800], true);
    expect(rows(s, 60)).toEqual([
      [120, 2, 6],
      [240, 1, 10],
    ]);
    // The bucket of 0 holds what is kept of it (labelled by its start, as every bucket).
    expect(rows(s, 300)).toEqual([[0, 3, 22 / 3]]);
    expect(rows(s, 1800)).toEqual([[0, 3, 22 / 3]]);
  });

  it('a larger bucket straddling the delete time keeps its records at and after it (sweep of one span)', () => {
    const s = store();
    s.writeNnt([rec(0, 1, 1), rec(60, 1, 3), rec(120, 2, 6), rec(240, 1, 10)]);
    sweep(s, 120, [1800], false);
    expect(rows(s, 1800)).toEqual([[0, 3, 22 / 3]]);
    expect(rows(s, 300)).toEqual([[0, 5, 5.2]]); // not swept
    expect(rows(s, 60)).toHaveLength(4);
  });

  it('holds for random writes and sweeps: every stored larger bucket is the merge of the raw records the rules keep in it', () => {
    // The model: the raw records by ts, and per larger span its buckets as sets of raw ts. A write
    // adds its ts to an existing bucket; a bucket that is missing (new, or swept) or has a record
    // replaced is computed from every raw record in it. A sweep drops the buckets before its time
    // and recomputes the one straddling it from the raw records at or after that time.
    const SPANS = [300, 1800];
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(
            fc.record({
              kind: fc.constant('write' as const),
              slots: fc.array(fc.integer({ min: 0, max: 59 }), { minLength: 1, maxLength: 6 }),
              count: fc.integer({ min: 1, max: 5 }),
            }),
            fc.record({ kind: fc.constant('sweep' as const), before: fc.integer({ min: 0, max: 60 }), which: fc.constantFrom('all', '60', '300', '1800') }),
          ),
          { minLength: 1, maxLength: 12 },
        ),
        (ops) => {
          const s = new SqliteStore({ dataDir: null, rollups: [60, 300, 1800], histogramRollups: [60] });
          try {
            const raw = new Map<number, { count: number; value: number }>();
            const buckets = new Map<number, Map<number, Set<number>>>(SPANS.map((span) => [span, new Map()]));
            const rawIn = (b: number, from: number, to: number): Set<number> => new Set([...raw.keys()].filter((ts) => ts >= from && ts < to && ts >= b));
            let v = 0;
            for (const op of ops) {
              if (op.kind === 'write') {
                const batch = [...new Set(op.slots)].map((k) => rec(k * 60, op.count, (v += 1.5)));
                const replaced = new Set(batch.filter((r) => raw.has(r.offset)).map((r) => r.offset));
                s.writeNnt(batch);
                for (const r of batch) raw.set(r.offset, { count: r.count, value: r.value });
                for (const span of SPANS) {
                  const m = buckets.get(span)!;
                  for (const r of batch) {
                    const b = r.offset - (r.offset % span);
                    const cur = m.get(b);
                    if (cur === undefined || [...replaced].some((ts) => ts >= b && ts < b + span)) m.set(b, rawIn(b, b, b + span));
                    else cur.add(r.offset);
                  }
                }
              } else {
                const before = op.before * 60;
                const sid = s.findSeries(UUID, 'm');
                if (sid === undefined) continue;
                const all = op.which === 'all';
                const spans = all ? [60, 300, 1800] : [Number(op.which)];
                s.sweepNnt(sid, before, spans, all);
                if (all) for (const ts of [...raw.keys()]) if (ts < before) raw.delete(ts);
                for (const span of SPANS.filter((x) => spans.includes(x))) {
                  const m = buckets.get(span)!;
                  for (const b of [...m.keys()]) if (b < before) m.delete(b);
                  const b0 = before - (before % span);
                  if (b0 < before) {
                    const kept = rawIn(b0, before, b0 + span);
                    if (kept.size > 0) m.set(b0, kept);
                  }
                }
              }
              for (const span of SPANS) {
                const want = [...buckets.get(span)!]
                  .filter(([, set]) => set.size > 0)
                  .sort((a, b) => a[0] - b[0])
                  .map(([b, set]) => {
                    let n = 0;
                    let sum = 0;
                    for (const ts of set) {
                      n += raw.get(ts)!.count;
                      sum += raw.get(ts)!.count * raw.get(ts)!.value;
                    }
                    return [b, n, sum / n];
                  });
                const got = rows(s, span);
                expect(
                  got.map((r) => [r[0], r[1]]),
                  `span ${span} after ${JSON.stringify(op)}`,
                ).toEqual(want.map((r) => [r[0], r[1]]));
                got.forEach((r, i) => expect(r[2]).toBeCloseTo(want[i]![2]!, 9));
              }
            }
          } finally {
            void s.close();
          }
        },
      ),
      { numRuns: 150, seed: 1313 },
    );
  });

  it('the same on disk, with the writes still in the ingest log when the sweep comes', () => {
    const s = store(true);
    s.writeNnt([rec(0, 1, 1), rec(60, 1, 3)]);
    s.flush();
    sweep(s, 600, [300], false);
    s.writeNnt([rec(120, 1, 5)]); // logged, not flushed
    expect(rows(s, 300)).toEqual([[0, 3, 3]]);
    s.flush();
    expect(rows(s, 300)).toEqual([[0, 3, 3]]);
  });
});
