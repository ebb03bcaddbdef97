import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/server/server.js';
import { connect } from 'node:net';
import { UUID, call, memoryNode, nnt, rollup, write, type Reply } from './server-helpers.js';

let node: RunningNode;
let url: string;

beforeAll(async () => {
  node = await memoryNode({ rollups: [60, 300, 1800] });
  url = node.url;
});
afterAll(() => node.close());

const T = 1_700_000_100; // a multiple of 300 (and of 60)

describe('rollup math over HTTP (hand-computed)', () => {
  beforeAll(async () => {
    const r = await write(url, [
      nnt(T, { count: 1, value: 1, stddev: 0, derivative: 2, derivative_stddev: 0, counter: 10, counter_stddev: 1 }, 'm'),
      nnt(T + 60, { count: 3, value: 5, stddev: 2, derivative: 6, derivative_stddev: 2, counter: 30, counter_stddev: 1 }, 'm'),
      // next 300 s bucket
      nnt(T + 300, { count: 2, value: 10, stddev: 1, derivative: 11, derivative_stddev: 0.5, counter: 40, counter_stddev: 2 }, 'm'),
      nnt(T + 360, { count: 2, value: 14, stddev: 3, derivative: 11, derivative_stddev: 0.5, counter: 40, counter_stddev: 2 }, 'm'),
    ]);
    expect(r.status).toBe(200);
  });

  it('stores each record at the smallest span as written', async () => {
    const rows = await rollup(url, { start: `${T}.000`, end: `${T + 120}.000`, span: '60s', type: 'all' }, 'm');
    expect(rows[0]).toEqual([
      T,
      {
        count: 1,
        value: 1,
        stddev: 0,
        derivative: 2,
        derivative_stddev: 0,
        counter: 10,
        counter_stddev: 1,
        derivative2: 0,
        derivative2_stddev: 0,
        counter2: 0,
        counter2_stddev: 0,
      },
    ]);
    // derivative2 = (6 - 2) / 60; counter2 = (30 - 10) / 60; stddevs likewise.
    expect(rows[1][1]).toMatchObject({ count: 3, value: 5, stddev: 2, derivative2: 4 / 60, derivative2_stddev: 2 / 60, counter2: 20 / 60, counter2_stddev: 0 });
  });

  it('merges larger spans: count sums, count-weighted means, pooled stddev', async () => {
    for (const engine of ['nnt', 'dispatch', 'recalc']) {
      const rows = await rollup(url, { start: `${T}.000`, end: `${T + 600}.000`, span: '300s', type: 'all', engine }, 'm');
      expect(rows.map((r) => r[0])).toEqual([T, T + 300]);
      const a = rows[0][1];
      expect(a.count).toBe(4);
      expect(a.value).toBeCloseTo(4, 12);
      expect(a.stddev).toBeCloseTo(Math.sqrt(6), 12); // (1*(0+1) + 3*(4+25))/4 - 16 = 6
      expect(a.derivative).toBeCloseTo(5, 12);
      expect(a.derivative_stddev).toBeCloseTo(Math.sqrt(6), 12);
      expect(a.counter).toBeCloseTo(25, 12);
      expect(a.counter_stddev).toBeCloseTo(Math.sqrt(76), 12);
      const b = rows[1][1];
      expect(b.count).toBe(4);
      expect(b.value).toBeCloseTo(12, 12);
      expect(b.stddev).toBeCloseTo(3, 12); // (2*(1+100) + 2*(9+196))/4 - 144 = 9
      // second order over the 300 s span: (11 - 5) / 300
      expect(b.derivative2).toBeCloseTo(6 / 300, 12);
      expect(b.derivative2_stddev).toBeCloseTo((0.5 - Math.sqrt(6)) / 300, 12);
      expect(b.counter2).toBeCloseTo(15 / 300, 12);
      expect(b.counter2_stddev).toBeCloseTo((2 - Math.sqrt(76)) / 300, 12);
      // the first bucket's predecessor is empty: nothing to change from, so 0 (never null in a non-empty bucket)
      expect(a).toMatchObject({ derivative2: 0, derivative2_stddev: 0, counter2: 0, counter2_stddev: 0 });
    }
  });

  it('single-valued types return the matching member', async () => {
    const q = { start: `${T}.000`, end: `${T + 600}.000`, span: '300s' };
    const one = async (type: string): Promise<unknown> => (await rollup(url, { ...q, type }, 'm'))[1][1];
    expect(await one('count')).toBe(4);
    expect(await one('average')).toBeCloseTo(12, 12);
    expect(await one('average_stddev')).toBeCloseTo(3, 12);
    expect(await one('derive')).toBeCloseTo(11, 12);
    expect(await one('derivative')).toBeCloseTo(11, 12);
    expect(await one('counter')).toBeCloseTo(40, 12);
    expect(await one('derive2')).toBeCloseTo(6 / 300, 12);
    expect(await one('derivative2')).toBeCloseTo(6 / 300, 12);
    expect(await one('counter2')).toBeCloseTo(15 / 300, 12);
    expect(await one('counter2_stddev')).toBeCloseTo((2 - Math.sqrt(76)) / 300, 12);
    expect(await one('derivative2_stddev')).toBeCloseTo((0.5 - Math.sqrt(6)) / 300, 12);
    // default type is average
    expect((await rollup(url, q, 'm'))[1][1]).toBeCloseTo(12, 12);
  });

  it('second order after an empty bucket is 0, for type=all and every single type; an empty bucket stays null', async () => {
    // [T-300, T) is empty, [T, T+300) and [T+300, T+600) hold data, [T+600, T+900) is empty.
    const q = { start: `${T - 300}.000`, end: `${T + 900}.000`, span: '300s' };
    for (const engine of ['nnt', 'dispatch', 'recalc']) {
      const all = await rollup(url, { ...q, type: 'all', engine }, 'm');
      expect(all.map((r) => r[0])).toEqual([T - 300, T, T + 300, T + 600]);
      expect(all[0][1]).toBeNull();
      expect(all[3][1]).toBeNull();
      for (const [, b] of all.slice(1, 3)) for (const v of Object.values(b as object)) expect(typeof v).toBe('number');
      expect(all[1][1]).toMatchObject({ derivative2: 0, derivative2_stddev: 0, counter2: 0, counter2_stddev: 0 });
      for (const type of ['derive2', 'counter2', 'derive2_stddev', 'counter2_stddev', 'derivative2', 'derivative2_stddev']) {
        const rows = await rollup(url, { ...q, type, engine }, 'm');
        expect(rows[0], type).toEqual([T - 300, null]);
        expect(rows[1], type).toEqual([T, 0]);
        expect(typeof rows[2][1], type).toBe('number');
        expect(rows[3], type).toEqual([T + 600, null]);
      }
    }
  });

  it('serves an unconfigured multiple of the smallest span by merging stored rollups', async () => {
    expect(T % 120).toBe(60);
    const rows = await rollup(url, { start: `${T}.000`, end: `${T + 120}.000`, span: '120s', type: 'count', engine: 'nnt' }, 'm');
    expect(rows).toEqual([
      [T - 60, 1],
      [T + 60, 3],
    ]);
    // 600 s merges the stored 300 s buckets: [T-300, T+300) holds the first pair, [T+300, T+900) the second.
    const big = await rollup(url, { start: `${T}.000`, end: `${T + 600}.000`, span: '600s', type: 'all', engine: 'nnt' }, 'm');
    expect(big.map((r) => [r[0], r[1].count])).toEqual([
      [T - 300, 4],
      [T + 300, 4],
    ]);
    expect(big[0][1].stddev).toBeCloseTo(Math.sqrt(6), 12);
    expect(big[1][1].value).toBeCloseTo(12, 12);
    // second order over the 600 s span: (11 - 5) / 600
    expect(big[1][1].derivative2).toBeCloseTo(6 / 600, 12);
  });
});

describe('buckets', () => {
  it('floors the start, excludes the end, and lists empty buckets as null (also for type=all)', async () => {
    await write(url, [nnt(T + 120, { value: 7 }, 'b')]);
    const rows = await rollup(url, { start: `${T + 30}.000`, end: `${T + 300}.000`, span: '60s' }, 'b');
    expect(rows).toEqual([
      [T, null],
      [T + 60, null],
      [T + 120, 7],
      [T + 180, null],
      [T + 240, null],
    ]);
    expect(await rollup(url, { start: `${T}.000`, end: `${T + 240}.001`, span: '60s' }, 'b')).toHaveLength(5);
    const all = await rollup(url, { start: `${T}.000`, end: `${T + 180}.000`, span: '60s', type: 'all' }, 'b');
    expect(all[0]).toEqual([T, null]);
    expect(all[2][1]).toMatchObject({ count: 1, value: 7 });
  });

  it('a series never written reads as all nulls', async () => {
    expect(await rollup(url, { start: '0.000', end: '180.000', span: '60s' }, 'never')).toEqual([
      [0, null],
      [60, null],
      [120, null],
    ]);
  });
});

describe('idempotent replace', () => {
  it('a rewrite of the same id, metric and offset replaces it, in every span', async () => {
    const base = T + 3000; // multiple of 300
    await write(url, [nnt(base, { count: 1, value: 10 }, 'r'), nnt(base + 60, { count: 1, value: 20 }, 'r')]);
    expect((await rollup(url, { start: `${base}.000`, end: `${base + 300}.000`, span: '300s' }, 'r'))[0][1]).toBe(15);
    await write(url, [nnt(base + 60, { count: 3, value: 30 }, 'r')]);
    await write(url, [nnt(base + 60, { count: 3, value: 30 }, 'r')]); // a retry: same again
    expect((await rollup(url, { start: `${base}.000`, end: `${base + 120}.000`, span: '60s', type: 'count' }, 'r')).map((r) => r[1])).toEqual([1, 3]);
    for (const span of ['300s', '1800s']) {
      const [row] = await rollup(url, { start: `${base}.000`, end: `${base + 300}.000`, span, type: 'all', engine: 'nnt' }, 'r');
      expect(row[1].count).toBe(4);
      expect(row[1].value).toBeCloseTo(25, 12); // (10 + 90) / 4
    }
    // within one request, the last of two equal keys wins
    await write(url, [nnt(base + 120, { value: 1 }, 'r'), nnt(base + 120, { value: 2 }, 'r')]);
    const [row] = await rollup(url, { start: `${base}.000`, end: `${base + 300}.000`, span: '300s', type: 'all', engine: 'nnt' }, 'r');
    expect(row[1].count).toBe(5);
  });

  it('merges later appends into larger buckets written by earlier requests', async () => {
    const base = T + 6000;
    await write(url, [nnt(base, { count: 2, value: 4 }, 'inc')]);
    await write(url, [nnt(base + 60, { count: 2, value: 8 }, 'inc')]);
    await write(url, [nnt(base + 120, { count: 4, value: 1 }, 'inc')]);
    const [row] = await rollup(url, { start: `${base}.000`, end: `${base + 300}.000`, span: '300s', type: 'all', engine: 'nnt' }, 'inc');
    expect(row[1].count).toBe(8);
    expect(row[1].value).toBeCloseTo((8 + 16 + 4) / 8, 12);
  });
});

describe('engines and raw parts', () => {
  it('recalc rolls up from the parts; nnt uses stored rollups only', async () => {
    const base = T + 9000;
    const parts = [
      30,
      [
        { count: 1, value: 2 },
        { count: 1, value: 4, stddev: 1 },
      ],
    ];
    await write(url, [nnt(base, { count: 2, value: 3, stddev: 1, parts }, 'p')]);
    expect(await rollup(url, { start: `${base}.000`, end: `${base + 60}.000`, span: '30s', engine: 'recalc' }, 'p')).toEqual([
      [base, 2],
      [base + 30, 4],
    ]);
    // dispatch serves a span that is not a multiple of the smallest from raw, too
    expect(await rollup(url, { start: `${base}.000`, end: `${base + 60}.000`, span: '30s' }, 'p')).toEqual([
      [base, 2],
      [base + 30, 4],
    ]);
    const nntEngine = await call(url, 'GET', `/rollup/${UUID}/p?start_ts=${base}.000&end_ts=${base + 60}.000&rollup_span=30s&get_engine=nnt`);
    expect(nntEngine.status).toBe(400);
    expect(nntEngine.json.error).toContain('multiple of the smallest');
    const [all] = await rollup(url, { start: `${base}.000`, end: `${base + 60}.000`, span: '60s', engine: 'recalc', type: 'all' }, 'p');
    expect(all[1].count).toBe(2);
    expect(all[1].value).toBe(3);
    expect(all[1].stddev).toBeCloseTo(Math.sqrt(1.5), 12); // (1*(0+4) + 1*(1+16))/2 - 9 = 1.5
  });
});

describe('dispatch over scattered data', () => {
  it('fills empty buckets far apart (separate raw scans) exactly as recalc computes them', async () => {
    const base = T + 90_000;
    // 300 s buckets with data at these indices; gaps of 1 to 400 buckets between them
    const at = [0, 1, 5, 100, 101, 102, 300, 700, 799];
    await write(
      url,
      at.map((k, j) => nnt(base + k * 300 + 60 * (j % 3), { count: 1 + j, value: k + 0.5 }, 'scatter')),
    );
    const q = { start: `${base}.000`, end: `${base + 800 * 300}.000`, span: '300s' };
    const dispatch = await rollup(url, q, 'scatter');
    const recalc = await rollup(url, { ...q, engine: 'recalc' }, 'scatter');
    expect(dispatch).toHaveLength(800);
    expect(dispatch).toEqual(recalc);
    expect(dispatch.filter((r: [number, number | null]) => r[1] !== null).map((r: [number, number | null]) => (r[0] - base) / 300)).toEqual(at);
  });
});

describe('millisecond spans', () => {
  let ms: RunningNode;
  beforeAll(async () => {
    ms = await memoryNode({ rollups: [1, 60] });
    await write(ms.url, [nnt(1408724400, { value: 1 }), nnt(1408724401, { value: 2 }), nnt(1408724403, { value: 4 })]);
  });
  afterAll(() => ms.close());

  it('labels buckets with a millisecond fraction when the span needs it', async () => {
    expect(await rollup(ms.url, { start: '1408724400.000', end: '1408724402.000', span: '500ms', engine: 'recalc' })).toEqual([
      [1408724400, 1],
      [1408724400.5, null],
      [1408724401, 2],
      [1408724401.5, null],
    ]);
    expect(await rollup(ms.url, { start: '1408724400.250', end: '1408724404.000', span: '1500ms' })).toEqual([
      [1408724400, 1.5],
      [1408724401.5, null],
      [1408724403, 4],
    ]);
  });

  it('treats 1000ms like 1s and 60000ms like 60s', async () => {
    const a = await rollup(ms.url, { start: '1408724400.000', end: '1408724404.000', span: '1000ms', engine: 'nnt' });
    const b = await rollup(ms.url, { start: '1408724400.000', end: '1408724404.000', span: '1s', engine: 'nnt' });
    expect(a).toEqual(b);
    expect(a).toEqual([
      [1408724400, 1],
      [1408724401, 2],
      [1408724402, null],
      [1408724403, 4],
    ]);
    expect(await rollup(ms.url, { start: '1408724400.000', end: '1408724460.000', span: '60000ms', type: 'count' })).toEqual([[1408724400 - (1408724400 % 60), 3]]);
  });
});

describe('metric names arrive URL-encoded and are decoded exactly once', () => {
  const names = ['with space', 'cpu|ST[env:prod,role:db]', 'a/b/c', '100%', 'what?', 'hash#tag', 'Zürich – 東京 🚀', '%41', 'plus+sign', 'trailing/'];
  it.each(names)('%j round-trips through write, rollup, text and histogram', async (metric) => {
    await write(url, [nnt(T, { value: 42 }, metric)]);
    const rows = await rollup(url, { start: `${T}.000`, end: `${T + 60}.000`, span: '60s' }, metric);
    expect(rows).toEqual([[T, 42]]);
    await write(url, [{ metric, id: UUID, offset: T, value: 'v' }], '/write/text');
    expect((await call(url, 'GET', `/read/${T}/${T + 1}/${UUID}/${encodeURIComponent(metric)}`)).json).toEqual([[T * 1000, 'v']]);
    await write(url, [{ metric, id: UUID, offset: T, period: 60, histogram: 'AAA=' }], '/histogram/write');
    expect((await call(url, 'GET', `/histogram/${T}/${T + 1}/60/${UUID}/${encodeURIComponent(metric)}`)).json).toEqual([[T, 60, {}]]);
  });

  it('does not decode twice: %2541 is the metric "%41", not "A"', async () => {
    await write(url, [nnt(T, { value: 1 }, 'A')]);
    await write(url, [nnt(T, { value: 2 }, '%41')]);
    const r = await call(url, 'GET', `/rollup/${UUID}/%2541?start_ts=${T}.000&end_ts=${T + 60}.000&rollup_span=60s`);
    expect(r.json).toEqual([[T, 2]]);
  });

  it('compares uuids lower-case', async () => {
    await write(url, [nnt(T, { value: 9 }, 'case', UUID.toUpperCase())]);
    expect(await rollup(url, { start: `${T}.000`, end: `${T + 60}.000`, span: '60s' }, 'case', UUID.toUpperCase())).toEqual([[T, 9]]);
    expect(await rollup(url, { start: `${T}.000`, end: `${T + 60}.000`, span: '60s' }, 'case', UUID)).toEqual([[T, 9]]);
  });
});

describe('long answers go out as they are rendered', () => {
  // 20,000 buckets: three pieces of ROWS_PER_PIECE (8192) rows, sent in chunked encoding.
  const N = 20_000;
  const start = T;
  const end = T + N * 60;

  it.each(['average', 'all'])('type %s: chunked, and the pieces join into the whole answer', async (type) => {
    await write(url, [nnt(start, { value: 1 }, 'long'), nnt(start + 8192 * 60, { value: 2 }, 'long'), nnt(end - 60, { value: 3 }, 'long')]);
    const r = await call(url, 'GET', `/rollup/${UUID}/long?start_ts=${start}.000&end_ts=${end}.000&rollup_span=60s&get_engine=dispatch&type=${type}`);
    expect(r.status).toBe(200);
    expect(r.headers['transfer-encoding']).toBe('chunked');
    expect(r.headers['content-length']).toBeUndefined();
    const rows = r.json as Array<[number, unknown]>;
    expect(rows).toHaveLength(N);
    rows.forEach(([ts], i) => expect(ts).toBe(start + 60 * i));
    const valueAt = (i: number): unknown => (type === 'all' ? (rows[i]![1] as { value: number } | null)?.value : rows[i]![1]);
    expect([valueAt(0), valueAt(8192), valueAt(N - 1)]).toEqual([1, 2, 3]);
    expect(rows.filter(([, v]) => v !== null)).toHaveLength(3);
  });

  it('decides up front: 8,192 buckets are one piece with a length, 8,193 go chunked', async () => {
    const at = async (n: number): Promise<Reply> =>
      call(url, 'GET', `/rollup/${UUID}/long?start_ts=${start}.000&end_ts=${start + n * 60}.000&rollup_span=60s&get_engine=dispatch&type=average`);
    const one = await at(8192);
    expect(one.headers['content-length']).toBe(String(Buffer.byteLength(one.text)));
    expect(one.json).toHaveLength(8192);
    const more = await at(8193);
    expect(more.headers['transfer-encoding']).toBe('chunked');
    expect(more.json).toHaveLength(8193);
    expect(more.text).toBe(`${one.text.slice(0, -1)},${JSON.stringify((more.json as unknown[])[8192])}]`);
  });

  it('the first piece is 1,024 buckets, then 8,192 at a time', async () => {
    const chunks = await httpChunks(url, `/rollup/${UUID}/long?start_ts=${start}.000&end_ts=${end}.000&rollup_span=60s&get_engine=dispatch&type=average`);
    const rows = chunks.map((c, i) => (JSON.parse(`${i === 0 ? '' : '['}${c.slice(i === 0 ? 0 : 1)}${i === chunks.length - 1 ? '' : ']'}`) as unknown[]).length);
    expect(rows).toEqual([1024, 8192, 8192, N - 1024 - 2 * 8192]);
    expect(JSON.parse(chunks.join(''))).toHaveLength(N);
  });

  it('a short answer keeps its length', async () => {
    const r = await call(url, 'GET', `/rollup/${UUID}/long?start_ts=${start}.000&end_ts=${start + 600}.000&rollup_span=60s&get_engine=dispatch&type=average`);
    expect(r.headers['content-length']).toBe(String(Buffer.byteLength(r.text)));
    expect(r.json).toHaveLength(10);
  });
});

describe('pieces read one at a time answer what one read of the whole range answers', () => {
  // 20,000 buckets of 60 s (pieces at 1,024, 9,216, 17,408) against reads of at most 5,000
  // buckets, each one piece: the same text, across empty buckets filled from raw pieces, spans
  // made of several stored ones, and second-order members that need the bucket before a piece.
  const N = 20_000;
  const S = T + 3_000_060; // a multiple of 120 and 20 too
  beforeAll(async () => {
    const records: Array<Record<string, unknown>> = [];
    const near = [0, 1, 1022, 1023, 1024, 1025, 9215, 9216, 9217, 17407, 17408, N - 1];
    for (let i = 0; i < N; i++) {
      if (i % 13 !== 0 && !near.includes(i)) continue;
      const fields: Record<string, unknown> = { count: 1 + (i % 4), value: i / 7, stddev: 0.5, derivative: (i % 9) / 3, counter: i, counter_stddev: 0.25 };
      // Some records carry raw pieces (what recalc and a 20 s span read).
      if (i % 39 === 0) fields.parts = [20, [0, 1, 2].map((k) => ({ count: 1, value: i + k / 3 }))];
      records.push(nnt(S + i * 60, fields, 'pieces'));
    }
    expect((await write(url, records)).status).toBe(200);
  });

  const cases: Array<[string, string, string, number]> = [
    ['60s', 'average', 'dispatch', 60],
    ['60s', 'all', 'dispatch', 60],
    ['60s', 'derive2', 'dispatch', 60],
    ['120s', 'all', 'dispatch', 120],
    ['60s', 'counter2_stddev', 'recalc', 60],
    ['20s', 'average', 'dispatch', 20],
  ];
  it.each(cases)('span %s type %s engine %s', async (span, type, engine, spanS) => {
    const path = (from: number, to: number): string =>
      `/rollup/${UUID}/pieces?start_ts=${S + from * spanS}.000&end_ts=${S + to * spanS}.000&rollup_span=${span}&get_engine=${engine}&type=${type}`;
    const whole = await call(url, 'GET', path(0, N));
    expect(whole.headers['transfer-encoding']).toBe('chunked');
    const parts: string[] = [];
    for (let from = 0; from < N; from += 5000) {
      const r = await call(url, 'GET', path(from, Math.min(N, from + 5000)));
      expect(r.headers['content-length']).toBeDefined();
      parts.push(r.text.slice(1, -1));
    }
    const joined = `[${parts.join(',')}]`;
    // The first difference, not two 2 MB texts, when they differ.
    let at = 0;
    while (at < joined.length && whole.text[at] === joined[at]) at++;
    expect(whole.text.slice(at, at + 200)).toBe(joined.slice(at, at + 200));
    expect(whole.text.length).toBe(joined.length);
    expect((whole.json as Array<[number, unknown]>).filter(([, v]) => v !== null).length).toBeGreaterThan(N / 40);
  });
});

/** The chunks of a chunked HTTP answer, decoded, as they were framed on the wire. */
function httpChunks(base: string, path: string): Promise<string[]> {
  const u = new URL(base);
  return new Promise((resolve, reject) => {
    const sock = connect(Number(u.port), u.hostname, () => sock.write(`GET ${path} HTTP/1.1\r\nHost: ${u.host}\r\nConnection: close\r\n\r\n`));
    const got: Buffer[] = [];
    sock.on('data', (d: Buffer) => got.push(d));
    sock.on('error', reject);
    sock.on('end', () => {
      const all = Buffer.concat(got);
      let i = all.indexOf('\r\n\r\n') + 4;
      const chunks: string[] = [];
      for (;;) {
        const eol = all.indexOf('\r\n', i);
        const size = parseInt(all.toString('latin1', i, eol), 16);
        if (!(size > 0)) break;
        chunks.push(all.toString('utf8', eol + 2, eol + 2 + size));
        i = eol + 2 + size + 2;
      }
      resolve(chunks);
    });
  });
}
