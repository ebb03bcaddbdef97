import { afterAll, afterEach, beforeAll, describe, expect, it, vi } from 'vitest';
import fc from 'fast-check';
import type { RunningNode } from '../../src/server/server.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { UUID, call, memoryNode, nnt, rollup, write } from './server-helpers.js';

const nodes: RunningNode[] = [];
async function node(opts: Parameters<typeof memoryNode>[0] = {}): Promise<RunningNode> {
  const n = await memoryNode({ rollups: [60, 300], histogramRollups: [60, 300], ...opts });
  nodes.push(n);
  return n;
}
afterAll(() => Promise.all(nodes.map((n) => n.close())));

const del = (url: string, headers: Record<string, string>) => call(url, 'DELETE', '/sweep_delete', { headers });
const status = async (url: string): Promise<any> => (await call(url, 'GET', '/sweep_delete')).json;
const T = 1_700_000_100; // multiple of 300

async function values(url: string, metric: string, span: string, engine = 'nnt'): Promise<Array<number | null>> {
  const rows = await rollup(url, { start: `${T - 600}.000`, end: `${T + 600}.000`, span, engine, type: 'count' }, metric);
  return rows.map((r) => r[1]);
}

describe('sweep semantics', () => {
  let n: RunningNode;
  beforeAll(async () => {
    n = await node();
  });
  const seed = async (metric: string): Promise<void> => {
    const recs = [];
    for (let t = T - 600; t < T + 600; t += 60) recs.push(nnt(t, { count: 1 }, metric));
    expect((await write(n.url, recs)).status).toBe(200);
  };
  const sweep = async (headers: Record<string, string>): Promise<void> => {
    const r = await del(n.url, { 'X-Service-Delete-Time': String(T), ...headers });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual([]);
    await n.node.sweeper.settled();
    const st = await status(n.url);
    for (const t of ['nnt', 'text', 'histogram']) expect(st[t].running).toBe('false');
    // Each swept type records that this sweep completed (reference-node extension attributes).
    const types = (headers['X-Service-Delete-Data-Types'] ?? 'nnt').split(',');
    for (const t of types) expect(st[t]).toMatchObject({ last_timestamp: String(T), last_result: 'completed', instance: n.node.sweeper.instance });
  };
  const before60 = Array(10).fill(null);
  const kept60 = Array(10).fill(1);

  it('deletes strictly before the delete time: a point exactly at it stays', async () => {
    await seed('strict');
    await sweep({});
    expect(await values(n.url, 'strict', '60s')).toEqual([...before60, ...kept60]);
    expect(await values(n.url, 'strict', '300s')).toEqual([null, null, 5, 5]);
    // all spans were swept, so the raw data went too
    expect(await values(n.url, 'strict', '60s', 'recalc')).toEqual([...before60, ...kept60]);
  });

  it('a sweep of one larger span removes only that span; raw data stays', async () => {
    await seed('span300');
    await sweep({ 'X-Service-NNT-Delete-Rollups': '300' });
    expect(await values(n.url, 'span300', '300s')).toEqual([null, null, 5, 5]);
    expect(await values(n.url, 'span300', '60s')).toEqual([...Array(10).fill(1), ...kept60]);
    expect(await values(n.url, 'span300', '300s', 'recalc')).toEqual([5, 5, 5, 5]);
    // dispatch fills the swept buckets from raw
    expect(await values(n.url, 'span300', '300s', 'dispatch')).toEqual([5, 5, 5, 5]);
  });

  it('a sweep of the smallest span alone keeps the raw records and the larger spans', async () => {
    await seed('span60');
    await sweep({ 'X-Service-NNT-Delete-Rollups': '60' });
    expect(await values(n.url, 'span60', '60s')).toEqual([...before60, ...kept60]);
    expect(await values(n.url, 'span60', '300s')).toEqual([5, 5, 5, 5]);
    expect(await values(n.url, 'span60', '60s', 'recalc')).toEqual([...Array(10).fill(1), ...kept60]);
    // a rewrite brings the smallest span back
    await write(n.url, [nnt(T - 600, { count: 2 }, 'span60')]);
    expect((await values(n.url, 'span60', '60s'))[0]).toBe(2);
  });

  it('listing every span is the same as all spans (raw goes too)', async () => {
    await seed('listed');
    await sweep({ 'X-Service-NNT-Delete-Rollups': '300,60' });
    expect(await values(n.url, 'listed', '60s', 'recalc')).toEqual([...before60, ...kept60]);
  });

  it('acts per type: nnt by default, text and histogram only when asked', async () => {
    const m = 'typed';
    await seed(m);
    await write(
      n.url,
      [
        { metric: m, id: UUID, offset: T - 60, value: 'old' },
        { metric: m, id: UUID, offset: T, value: 'new' },
      ],
      '/write/text',
    );
    await write(
      n.url,
      [
        { metric: m, id: UUID, offset: T - 300, period: 60, histogram: 'AAA=' },
        { metric: m, id: UUID, offset: T - 300, period: 300, histogram: 'AAEX/QAB' },
        { metric: m, id: UUID, offset: T, period: 300, histogram: 'AAEX/QAC' },
      ],
      '/histogram/write',
    );
    const text = async (): Promise<unknown> => (await call(n.url, 'GET', `/read/0/${T + 1000}/${UUID}/${m}`)).json;
    const hist = async (p: number): Promise<unknown> => (await call(n.url, 'GET', `/histogram/0/${T + 1000}/${p}/${UUID}/${m}`)).json;
    await sweep({ 'X-Service-Delete-Data-Types': 'nnt' });
    expect(await text()).toHaveLength(2);
    expect(await hist(300)).toHaveLength(2);
    await sweep({ 'X-Service-Delete-Data-Types': 'text' });
    expect(await text()).toEqual([[T * 1000, 'new']]);
    await sweep({ 'X-Service-Delete-Data-Types': 'histogram', 'X-Service-Histogram-Delete-Rollups': '300' });
    expect(await hist(300)).toEqual([[T, 300, { '+23e-004': 2 }]]);
    expect(await hist(60)).toEqual([[T - 300, 60, {}]]);
    await sweep({ 'X-Service-Delete-Data-Types': 'histogram' });
    expect(await hist(60)).toEqual([]);
  });
});

describe('a running sweep', () => {
  const SERIES = 12;
  let n: RunningNode;
  beforeAll(async () => {
    n = await node({ sweepPaceMs: 40 });
    const recs = [];
    for (let i = 0; i < SERIES; i++) {
      recs.push(nnt(T - 60, {}, `m${i}`), nnt(T, {}, `m${i}`));
    }
    await write(n.url, recs);
    await write(
      n.url,
      Array.from({ length: SERIES }, (_, i) => ({ metric: `m${i}`, id: UUID, offset: T - 60, value: 'x' })),
      '/write/text',
    );
  });
  afterEach(() => n.node.sweeper.settled());

  it('shows its progress with string values while running, then returns to idle', async () => {
    await del(n.url, { 'X-Service-Delete-Time': String(T), 'X-Service-Delete-Data-Types': 'nnt,text', 'X-Service-NNT-Delete-Rollups': '60' });
    const s = await vi.waitFor(
      async () => {
        const st = await status(n.url);
        expect(st.nnt.current_uuid, 'a current uuid').toBe(UUID);
        return st;
      },
      { timeout: 10_000, interval: 10 },
    );
    expect(s.nnt).toMatchObject({ running: 'true', timestamp: String(T), rollups: '60', current_uuid: UUID });
    expect(s.text).toMatchObject({ running: 'true', timestamp: String(T) });
    expect(s.histogram).toEqual({ running: 'false', instance: n.node.sweeper.instance });
    const t = await vi.waitFor(
      async () => {
        const st = await status(n.url);
        expect(st.nnt.running, 'nnt done').toBe('false');
        expect(st.text.current_metric, 'text progress').toMatch(/^.+-m\d+$/);
        return st;
      },
      { timeout: 10_000, interval: 10 },
    );
    expect(t.text.current_metric).toMatch(new RegExp(`^${UUID}-m\\d+$`));
    // nnt is done while text still runs: its record says so already.
    expect(t.nnt).toMatchObject({ running: 'false', last_timestamp: String(T), last_rollups: '60', last_result: 'completed' });
    expect(t.nnt.current_uuid).toBeUndefined();
    await expect.poll(async () => (await status(n.url)).text.running, { timeout: 10_000, interval: 10 }).toBe('false');
    const end = await status(n.url);
    expect(end.text).toMatchObject({ running: 'false', last_timestamp: String(T), last_result: 'completed' });
    expect(end.text.last_rollups).toBeUndefined();
    expect(Number(end.text.last_finished)).toBeGreaterThan(Date.now() / 1000 - 60);
  });

  it('is cancelled promptly by a second DELETE, which starts the new sweep', async () => {
    await write(
      n.url,
      Array.from({ length: SERIES }, (_, i) => nnt(T - 120, {}, `m${i}`)),
    );
    await del(n.url, { 'X-Service-Delete-Time': String(T), 'X-Service-NNT-Delete-Rollups': '300' });
    await expect.poll(async () => (await status(n.url)).nnt.current_uuid, { timeout: 10_000, interval: 10 }).toBe(UUID);
    const second = await del(n.url, { 'X-Service-Delete-Time': String(T - 60), 'X-Service-Delete-Data-Types': 'text' });
    expect(second.status).toBe(200);
    const s = await status(n.url);
    // The first sweep's nnt record says it was replaced, and by what.
    expect(s.nnt).toMatchObject({ running: 'false', last_timestamp: String(T), last_rollups: '300', last_result: 'replaced', last_replaced_by: `text before ${T - 60}` });
    expect(s.text).toMatchObject({ running: 'true', timestamp: String(T - 60) });
    expect(s.text.last_result).toBeUndefined(); // no record while running
    await n.node.sweeper.settled();
    expect((await status(n.url)).text).toMatchObject({ last_timestamp: String(T - 60), last_result: 'completed' });
    // The first sweep stopped early: the last series still has its 300 s bucket before T.
    const last = await rollup(n.url, { start: `${T - 300}.000`, end: `${T}.000`, span: '300s', engine: 'nnt', type: 'count' }, `m${SERIES - 1}`);
    expect(last[0][1]).not.toBeNull();
  });

  it('GET /sweep_delete/cancel stops it and reports cancelling', async () => {
    await del(n.url, { 'X-Service-Delete-Time': String(T), 'X-Service-NNT-Delete-Rollups': '300' });
    await expect.poll(async () => (await status(n.url)).nnt.current_uuid, { timeout: 10_000, interval: 10 }).toBe(UUID);
    const c = await call(n.url, 'GET', '/sweep_delete/cancel');
    expect(c.json.nnt).toMatchObject({ running: 'true', cancelling: 'true' });
    const s = await status(n.url);
    for (const t of ['nnt', 'text', 'histogram']) expect(s[t].running).toBe('false');
    expect(s.nnt).toMatchObject({ last_timestamp: String(T), last_rollups: '300', last_result: 'cancelled' });
    expect(s.nnt.last_error).toBeUndefined();
  });

  it('keeps answering reads and writes while it runs', async () => {
    await del(n.url, { 'X-Service-Delete-Time': String(T), 'X-Service-NNT-Delete-Rollups': '300' });
    const w = await write(n.url, [nnt(T + 600, {}, 'during')]);
    expect(w.status).toBe(200);
    expect((await status(n.url)).nnt.running).toBe('true');
    await call(n.url, 'GET', '/sweep_delete/cancel');
  });
});

describe('how a sweep ended is kept (reference-node extension)', () => {
  it('a job whose store call throws ends failed with the error, and the types after it are not swept', async () => {
    const errors: unknown[] = [];
    const { startServer } = await import('../../src/server/server.js');
    const n = await startServer({ port: 0, dataDir: null, rollups: [60, 300], histogramRollups: [60] }, { onInternalError: (e) => errors.push(e) });
    nodes.push(n);
    await write(n.url, [nnt(T - 60, {}, 'f1')]);
    await write(n.url, [{ metric: 'f1', id: UUID, offset: T - 60, value: 'x' }], '/write/text');
    // The store fails as a full disk would: the sweep must not vanish as if it had completed.
    n.node.store.sweepNnt = () => {
      throw new Error('SQLITE_FULL: database or disk is full');
    };
    expect((await del(n.url, { 'X-Service-Delete-Time': String(T), 'X-Service-Delete-Data-Types': 'nnt,text' })).status).toBe(200);
    await n.node.sweeper.settled();
    const s = await status(n.url);
    expect(s.nnt).toMatchObject({ running: 'false', last_timestamp: String(T), last_rollups: 'all', last_result: 'failed', last_error: 'SQLITE_FULL: database or disk is full' });
    expect(s.text).toMatchObject({ running: 'false', last_timestamp: String(T), last_result: 'failed', last_error: 'not swept: the sweep stopped at an error in nnt' });
    expect(errors).toHaveLength(1);
    // the text record before T is still there: the sweep never reached it
    expect((await call(n.url, 'GET', `/read/0/${T + 1}/${UUID}/f1`)).json).toEqual([[(T - 60) * 1000, 'x']]);
  });

  it('each process has its own instance id, shown on every type, running or not', async () => {
    const a = await node();
    const b = await node();
    const sa = await status(a.url);
    expect(sa.nnt.instance).toMatch(/^[0-9a-f]{12}$/);
    expect(sa.text.instance).toBe(sa.nnt.instance);
    expect((await status(b.url)).nnt.instance).not.toBe(sa.nnt.instance);
  });
});

describe('property: sweeps never remove what should remain, and remove everything they should', () => {
  it('holds for random writes and random sweeps', async () => {
    const n = await node({ rollups: [60, 300, 900] });
    const spans = [60, 300, 900];
    let run = 0;
    await fc.assert(
      fc.asyncProperty(
        fc.uniqueArray(fc.integer({ min: 0, max: 59 }), { minLength: 1, maxLength: 25 }),
        fc.integer({ min: 0, max: 3600 }),
        fc.subarray(spans),
        async (minutes, before, asked) => {
          const metric = `prop${run++}`;
          await write(
            n.url,
            minutes.map((m) => nnt(m * 60, { count: 1, value: m }, metric)),
          );
          const read = async (span: number, engine: string): Promise<Array<[number, number | null]>> =>
            rollup(n.url, { start: '0.000', end: '3600.000', span: `${span}s`, engine, type: 'count' }, metric);
          const snapshot = new Map<string, Array<[number, number | null]>>();
          for (const s of spans) snapshot.set(`nnt${s}`, await read(s, 'nnt'));
          snapshot.set('raw', await read(60, 'recalc'));
          const headers: Record<string, string> = { 'X-Service-Delete-Time': String(before) };
          if (asked.length) headers['X-Service-NNT-Delete-Rollups'] = asked.join(',');
          expect((await del(n.url, headers)).status).toBe(200);
          await n.node.sweeper.settled();
          const swept = asked.length ? asked : spans;
          for (const s of spans) {
            const after = await read(s, 'nnt');
            after.forEach(([ts, v], i) => {
              const was = snapshot.get(`nnt${s}`)![i]![1];
              if (ts >= before || !swept.includes(s)) expect(v, `span ${s} ts ${ts} before ${before}`).toBe(was);
              else if (ts + s > before) {
                // The bucket straddling the delete time keeps the records at and after it.
                const kept = minutes.filter((m) => m * 60 >= before && m * 60 < ts + s).length;
                expect(v, `span ${s} ts ${ts} before ${before}`).toBe(kept || null);
              } else expect(v, `span ${s} ts ${ts} before ${before}`).toBeNull();
            });
          }
          const allSpans = spans.every((s) => swept.includes(s));
          (await read(60, 'recalc')).forEach(([ts, v], i) => {
            const was = snapshot.get('raw')![i]![1];
            if (ts >= before || !allSpans) expect(v).toBe(was);
            else expect(v).toBeNull();
          });
        },
      ),
      { numRuns: 40 },
    );
  });
});

describe('the sweeper yields to the event loop', () => {
  it('walks series in slices, so other work runs between them', async () => {
    const { SqliteStore } = await import('../../src/server/sqlite-store.js');
    const { Sweeper } = await import('../../src/server/sweeper.js');
    const store = new SqliteStore({ dataDir: null, rollups: [60, 300], histogramRollups: [60] });
    try {
      const recs = Array.from({ length: 500 }, (_, i) => ({ ...nnt(0, {}, `y${i}`), derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 }));
      store.writeNnt(recs as unknown as NntRecord[]);
      const sweeper = new Sweeper(store, { paceMs: 0, sliceMs: 0, batchSize: 50 });
      sweeper.start({ before: 60, types: ['nnt'], nntSpans: [60, 300], nntAll: true, histogramPeriods: [], histogramAll: false });
      expect(sweeper.running).toBe(true); // nothing ran synchronously
      let turns = 0;
      while (sweeper.running) {
        await new Promise((r) => setImmediate(r));
        turns++;
      }
      expect(turns).toBeGreaterThan(100);
      expect(store.rawRows(store.findSeries(UUID, 'y499')!, 0, 120)).toEqual([]);
    } finally {
      await store.close();
    }
  });
});
