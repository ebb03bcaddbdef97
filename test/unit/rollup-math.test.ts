import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { aggOf, emptyAgg, mergeAll, mergeInto, secondOrder, type Agg } from '../../src/server/rollup-math.js';
import { mergeEntryInto } from '../../src/server/chunks.js';

const rec = (count: number, value: number, stddev = 0, extra: Partial<Agg> = {}): Agg => ({
  ...aggOf({ count, value, stddev, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 }),
  ...extra,
});

describe('rollup math', () => {
  it('sums counts and weights means by count', () => {
    const m = mergeAll([rec(1, 1), rec(3, 5)])!;
    expect(m.count).toBe(4);
    expect(m.records).toBe(2);
    expect(m.value).toBe(4); // (1*1 + 3*5) / 4
  });

  it('pools stddev as sqrt(Σ n(s²+m²)/N − m²)', () => {
    // n=1 m=1 s=0 and n=3 m=5 s=2: (1*(0+1) + 3*(4+25))/4 − 4² = 88/4 − 16 = 6
    const m = mergeAll([rec(1, 1, 0), rec(3, 5, 2)])!;
    expect(m.stddev).toBeCloseTo(Math.sqrt(6), 12);
    // n=2 m=10 s=1, n=2 m=14 s=3: (2*(1+100) + 2*(9+196))/4 − 12² = 612/4 − 144 = 9 → 3
    expect(mergeAll([rec(2, 10, 1), rec(2, 14, 3)])!.stddev).toBeCloseTo(3, 12);
  });

  it('merges derivative and counter with their stddevs the same way, weighted by count', () => {
    const a = rec(1, 0, 0, { derivative: 2, derivative_stddev: 0, counter: 10, counter_stddev: 1 });
    const b = rec(3, 0, 0, { derivative: 6, derivative_stddev: 2, counter: 30, counter_stddev: 1 });
    const m = mergeAll([a, b])!;
    expect(m.derivative).toBe(5); // (2 + 18) / 4
    // (1*(0+4) + 3*(4+36))/4 − 25 = 124/4 − 25 = 6
    expect(m.derivative_stddev).toBeCloseTo(Math.sqrt(6), 12);
    expect(m.counter).toBe(25); // (10 + 90) / 4
    // (1*(1+100) + 3*(1+900))/4 − 625 = 2804/4 − 625 = 76
    expect(m.counter_stddev).toBeCloseTo(Math.sqrt(76), 12);
  });

  it('keeps precision when the means are huge compared with the spread', () => {
    const m = mergeAll([rec(1, 1e9, 1), rec(1, 1e9 + 2, 1)])!;
    // pooled: (1+1)/2 + variance of means (1) = 2
    expect(m.stddev).toBeCloseTo(Math.sqrt(2), 9);
  });

  it('weights records equally when every count is 0, and ignores zero-count records otherwise', () => {
    expect(mergeAll([rec(0, 2), rec(0, 4)])!.value).toBe(3);
    expect(mergeAll([rec(0, 100), rec(2, 4)])!.value).toBe(4);
    expect(mergeAll([rec(2, 4), rec(0, 100)])!.value).toBe(4);
    expect(mergeAll([rec(0, 100), rec(2, 4), rec(0, 7)])!.records).toBe(3);
  });

  it('merging nothing is null; merging into empty copies', () => {
    expect(mergeAll([])).toBeNull();
    const e = emptyAgg();
    mergeInto(e, rec(2, 3, 1));
    expect(e).toEqual(rec(2, 3, 1));
  });

  it('is associative: any grouping gives the same aggregate', () => {
    const arbAgg = fc.record({
      count: fc.integer({ min: 0, max: 1000 }),
      value: fc.double({ min: -1e6, max: 1e6, noNaN: true }),
      stddev: fc.double({ min: 0, max: 1e3, noNaN: true }),
    });
    fc.assert(
      fc.property(fc.array(arbAgg, { minLength: 1, maxLength: 12 }), fc.nat(), (xs, cut) => {
        const aggs = xs.map((x) => rec(x.count, x.value, x.stddev));
        const whole = mergeAll(aggs)!;
        const k = cut % aggs.length;
        const left = mergeAll(aggs.slice(0, k));
        const right = mergeAll(aggs.slice(k))!;
        const grouped = left ? mergeInto(left, right) : right;
        expect(grouped.count).toBe(whole.count);
        const tol = (x: number): number => 1e-6 * Math.max(1, Math.abs(x));
        expect(Math.abs(grouped.value - whole.value)).toBeLessThanOrEqual(tol(whole.value));
        expect(Math.abs(grouped.stddev - whole.stddev)).toBeLessThanOrEqual(tol(whole.stddev) + 1e-3);
      }),
    );
  });
});

describe('second-order members', () => {
  it('are the per-second rate of change between consecutive buckets', () => {
    const prev = rec(1, 0, 0, { derivative: 2, derivative_stddev: 1, counter: 10, counter_stddev: 4 });
    const cur = rec(1, 0, 0, { derivative: 8, derivative_stddev: 4, counter: 40, counter_stddev: 1 });
    expect(secondOrder(prev, cur, 60)).toEqual({ derivative2: 0.1, derivative2_stddev: 0.05, counter2: 0.5, counter2_stddev: -0.05 });
  });

  it("are all 0 when the previous bucket is empty (the store's read-rollup example), whatever the bucket holds", () => {
    const cur = rec(3, 7, 1, { derivative: 8, derivative_stddev: 4, counter: 40, counter_stddev: 1 });
    expect(secondOrder(null, cur, 60)).toEqual({ derivative2: 0, derivative2_stddev: 0, counter2: 0, counter2_stddev: 0 });
  });
});

describe('mergeEntryInto (the packed form used by the node store)', () => {
  it('gives exactly what mergeInto gives, in every weighting case', () => {
    const agg = fc.record({
      count: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 1000 })),
      records: fc.integer({ min: 0, max: 5 }),
      value: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }),
      stddev: fc.double({ noNaN: true, min: 0, max: 1e6 }),
      derivative: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }),
      derivative_stddev: fc.double({ noNaN: true, min: 0, max: 1e6 }),
      counter: fc.double({ noNaN: true, noDefaultInfinity: true, min: -1e9, max: 1e9 }),
      counter_stddev: fc.double({ noNaN: true, min: 0, max: 1e6 }),
    });
    const entry = (a: Agg): Float64Array => Float64Array.of(0, a.count, a.records, a.value, a.stddev, a.derivative, a.derivative_stddev, a.counter, a.counter_stddev);
    fc.assert(
      fc.property(fc.array(agg, { minLength: 1, maxLength: 6 }), (aggs) => {
        const acc = emptyAgg();
        const packed = entry(emptyAgg());
        for (const a of aggs) {
          mergeInto(acc, a);
          mergeEntryInto(packed, 0, entry(a), 0, a.records);
        }
        expect([...packed.subarray(1)]).toEqual([...entry(acc).subarray(1)]);
      }),
      { numRuns: 2000 },
    );
  });
});
