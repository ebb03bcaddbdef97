import { describe, expect, it } from 'vitest';
import { ENTRY } from '../../src/server/chunks.js';
import { LOG_ENTRY } from '../../src/server/packed-write.js';
import { enqueue, type SeriesRecords } from '../../src/server/storage/series-records.js';

/** A logged write's entries: per record, the series id then a raw entry (ts, count, flags, value, ...). */
function logged(records: Array<[sid: number, ts: number]>): Float64Array {
  const e = new Float64Array(records.length * LOG_ENTRY);
  records.forEach(([sid, ts], i) => {
    e[i * LOG_ENTRY] = sid;
    e[i * LOG_ENTRY + 1] = ts;
    e[i * LOG_ENTRY + 2] = 1;
    e[i * LOG_ENTRY + 4] = ts / 60;
  });
  return e;
}

describe('enqueue', () => {
  it('holds one entry per series touched once (a write across 200,000 series must not keep 200,000 arrays of 16)', () => {
    const queues = new Map<number, SeriesRecords>();
    const n = enqueue(queues, logged(Array.from({ length: 1000 }, (_, i) => [i + 1, 60] as [number, number])), null);
    expect(n).toBe(1000);
    for (const q of queues.values()) expect(q.entries.length).toBe(ENTRY);
  });

  it("keeps a series' first record as a view of the write, copied only when a second comes (no malloc per series)", () => {
    const queues = new Map<number, SeriesRecords>();
    const first = logged([
      [1, 60],
      [2, 60],
    ]);
    enqueue(queues, first, null);
    expect(queues.get(1)!.entries.buffer).toBe(first.buffer);
    expect(queues.get(2)!.entries.buffer).toBe(first.buffer);
    enqueue(queues, logged([[1, 120]]), null);
    const q = queues.get(1)!;
    expect(q.entries.buffer).not.toBe(first.buffer);
    expect([q.entries[0], q.entries[ENTRY]]).toEqual([60, 120]);
    // The write's own entries are left as they were.
    expect(Array.from(first)).toEqual(
      Array.from(
        logged([
          [1, 60],
          [2, 60],
        ]),
      ),
    );
  });

  it('grows a series queue by doubling and keeps every record in arrival order', () => {
    const queues = new Map<number, SeriesRecords>();
    enqueue(
      queues,
      logged([
        [7, 60],
        [8, 60],
        [7, 180],
      ]),
      null,
    );
    enqueue(queues, logged(Array.from({ length: 5 }, (_, i) => [7, 240 + i * 60] as [number, number])), null);
    const q = queues.get(7)!;
    expect(q.n).toBe(7);
    expect(q.entries.length).toBe(8 * ENTRY);
    expect(Array.from({ length: q.n }, (_, i) => q.entries[i * ENTRY])).toEqual([60, 180, 240, 300, 360, 420, 480]);
    expect(queues.get(8)!.n).toBe(1);
  });
});
