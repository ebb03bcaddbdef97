// The shard inventories of a real in-process node: the store's shapes, only shards holding data,
// sizes as the store rounds them, and whole-shard removal that keeps the neighbours.
import { afterEach, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/server/server.js';
import { call, memoryNode, nnt, UUID, write } from './server-helpers.js';

const T1 = 1_699_999_980;
const T2 = T1 + 3 * 86_400;

let node: RunningNode | undefined;
afterEach(async () => {
  await node?.close();
  node = undefined;
});

async function writeBoth(base: string): Promise<void> {
  const w = await write(base, [nnt(T1), nnt(T1 + 60), nnt(T2)]);
  expect(w.status, w.text).toBe(200);
  const hist = [T1, T2].map((offset) => ({ metric: 'lat', id: UUID, offset, period: 60, histogram: 'AAEX/QAB' }));
  const h = await write(base, hist, '/histogram/write');
  expect(h.status, h.text).toBe(200);
}

describe('shard inventories', () => {
  it('lists only the shards that hold data, sized as the store sizes them (default layout)', async () => {
    node = await memoryNode();
    const empty = await call(node.url, 'GET', '/list_nntbs_shards');
    expect(empty.json).toEqual([60, 300, 1800, 10800, 86400].map((period) => ({ period, shard: [] })));
    await writeBoth(node.url);

    const nntbs = (await call(node.url, 'GET', '/list_nntbs_shards')).json as Array<{ period: number; shard: unknown[] }>;
    const byPeriod = new Map(nntbs.map((p) => [p.period, p.shard]));
    // 60 s: 1d rounded up to 12 x 127 x 60 = 91,440 s; the shard between the two writes holds nothing.
    expect(byPeriod.get(60)).toEqual([
      { block_floor: 1_699_961_040, 'block:ceiling': 1_700_052_480, mode: 'online' },
      { block_floor: 1_700_235_360, 'block:ceiling': 1_700_326_800, mode: 'online' },
    ]);
    // 300 s: 5d rounded up to 12 x 127 x 300 = 457,200 s: both writes in one shard.
    expect(byPeriod.get(300)).toEqual([{ block_floor: 1_699_869_600, 'block:ceiling': 1_700_326_800, mode: 'online' }]);
    // 86400 s has no size in the store's sample config: its minimum, 127 days.
    expect(byPeriod.get(86400)).toEqual([{ block_floor: 1_689_811_200, 'block:ceiling': 1_700_784_000, mode: 'online' }]);

    // Raw shards: a week each.
    expect((await call(node.url, 'GET', '/raw/list_shards')).json).toEqual([
      { start: 1_699_488_000, end: 1_700_092_800 },
      { start: 1_700_092_800, end: 1_700_697_600 },
    ]);
    // Histograms: 7d shards for 60 s; nothing in 300 s; the raw histograms (the 60 s ones, kept as received) in week shards.
    expect((await call(node.url, 'GET', '/histogram/60/list_shards')).json).toEqual([
      { start: 1_699_488_000, end: 1_700_092_800 },
      { start: 1_700_092_800, end: 1_700_697_600 },
    ]);
    expect((await call(node.url, 'GET', '/histogram/300/list_shards')).json).toEqual([]);
    expect((await call(node.url, 'GET', '/histogram_raw/list_shards')).json).toEqual([
      { start: 1_699_488_000, end: 1_700_092_800 },
      { start: 1_700_092_800, end: 1_700_697_600 },
    ]);
    const bad = await call(node.url, 'GET', '/histogram/61/list_shards');
    expect(bad.status).toBe(404);
    expect(bad.json.error).toMatch(/61.*not a histogram period.*60, 300/);
  });

  it('lists raw histogram shards (--raw-shard sized) over the smallest period only; removing one removes those rows', async () => {
    const WEEK = 604_800;
    node = await memoryNode({ histogramRollups: [60, 300], shards: { histogram: new Map([[60, 86_400]]), raw: WEEK } });
    const weekOf = (t: number): number => t - (t % WEEK);
    const at60 = [T1, T1 + 3600, T1 + 8 * 86_400];
    const h = (offset: number, period: number) => ({ metric: 'lat', id: UUID, offset, period, histogram: 'AAEX/QAB' });
    // 300 s histograms three weeks earlier: a rollup period, not raw.
    expect((await write(node.url, [...at60.map((t) => h(t, 60)), h(T1 - 21 * 86_400, 300)], '/histogram/write')).status).toBe(200);
    const raw = (await call(node.url, 'GET', '/histogram_raw/list_shards')).json as Array<{ start: number; end: number }>;
    expect(raw).toEqual([...new Set(at60.map(weekOf))].map((start) => ({ start, end: start + WEEK })));
    // Not the 60 s period's own (daily) shards: a grid of its own over the same rows.
    const dayOf = (t: number): number => t - (t % 86_400);
    expect((await call(node.url, 'GET', '/histogram/60/list_shards')).json).toEqual([...new Set(at60.map(dayOf))].map((start) => ({ start, end: start + 86_400 })));

    const store = node.node.store;
    expect(store.removeShard('histogram_raw', 0, raw[0]!)).toBe(2);
    expect((await call(node.url, 'GET', '/histogram_raw/list_shards')).json).toEqual(raw.slice(1));
    const sid = store.findSeries(UUID, 'lat')!;
    expect(store.histogramRows(sid, 60, 0, 2e9).map((r) => r[0])).toEqual([T1 + 8 * 86_400]);
    expect(store.histogramRows(sid, 300, 0, 2e9).map((r) => r[0])).toEqual([T1 - 21 * 86_400]);
  });

  it('takes --shards sizes, rounded up to whole multiples of 127 periods', async () => {
    node = await memoryNode({ rollups: [60, 300], histogramRollups: [60], shards: { nnt: new Map([[60, 7620 + 1]]), raw: 86_400, histogram: new Map([[60, 86_400]]) } });
    await writeBoth(node.url);
    const nntbs = (await call(node.url, 'GET', '/list_nntbs_shards')).json as Array<{ period: number; shard: Array<{ block_floor: number }> }>;
    // 7621 s rounds up to 2 x 7620.
    expect(nntbs[0]!.shard.map((s) => s.block_floor)).toEqual([T1 - (T1 % 15_240), T2 - (T2 % 15_240)]);
    expect((await call(node.url, 'GET', '/raw/list_shards')).json).toEqual([
      { start: T1 - (T1 % 86_400), end: T1 - (T1 % 86_400) + 86_400 },
      { start: T2 - (T2 % 86_400), end: T2 - (T2 % 86_400) + 86_400 },
    ]);
  });

  it('removes one whole shard and keeps every neighbour, records at its edges included', async () => {
    node = await memoryNode({ rollups: [60, 300] });
    const size = 91_440;
    const floor = T1 - (T1 % size);
    // A record in the last minute of the shard and one in the first minute of the next: no chunk straddles the boundary.
    expect((await write(node.url, [nnt(floor + size - 60), nnt(floor + size), nnt(floor + size + 60)])).status).toBe(200);
    const store = node.node.store;
    expect(store.listShards('nnt', 60)).toEqual([
      { start: floor, end: floor + size },
      { start: floor + size, end: floor + 2 * size },
    ]);
    (store as unknown as { flush(): void }).flush();
    expect(store.removeShard('nnt', 60, { start: floor, end: floor + size })).toBe(1);
    expect(store.listShards('nnt', 60)).toEqual([{ start: floor + size, end: floor + 2 * size }]);
    const sid = store.findSeries(UUID, 'cpu')!;
    expect(store.rawRows(sid, 0, 2e9).map((r) => r[0])).toEqual([floor + size, floor + size + 60]);
  });

  it('after a sweep (sweep-era node): the shards it emptied go, the straddling one keeps its newer data', async () => {
    node = await memoryNode({ rollups: [60, 300], shards: { nnt: new Map([[60, 7620]]), raw: 15_240 } });
    const recs = [];
    for (let t = T1 - 2 * 86_400; t <= T1; t += 600) recs.push(nnt(t));
    expect((await write(node.url, recs)).status).toBe(200);
    const store = node.node.store;
    const sid = store.findSeries(UUID, 'cpu')!;
    const before = { nnt60: store.listShards('nnt', 60), nnt300: store.listShards('nnt', 300), raw: store.listShards('raw', 0) };
    const cut = T1 - 86_400 + 1800; // inside a 60 s shard, not on a boundary
    const past = (l: Array<{ end: number }>) => l.filter((x) => x.end > cut);

    // A sweep of the 60 s rollup alone hides its entries; the raw records stay.
    store.sweepNnt(sid, cut, [60], false);
    expect(store.listShards('nnt', 60)).toEqual(past(before.nnt60));
    expect(store.listShards('nnt', 60)[0]!.start).toBeLessThan(cut);
    expect(store.listShards('raw', 0)).toEqual(before.raw);
    // A sweep of 300 s deletes; the shard holding the cut keeps its newer buckets.
    store.sweepNnt(sid, cut, [300], false);
    expect(store.listShards('nnt', 300)).toEqual(past(before.nnt300));
    // Every span and the raw data: the raw shards before the cut go too.
    store.sweepNnt(sid, cut, [60, 300], true);
    expect(store.listShards('raw', 0)).toEqual(past(before.raw));
    expect(store.rawRows(sid, 0, 2e9)[0]![0]).toBe(cut);
  });
});
