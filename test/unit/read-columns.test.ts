import { MockAgent } from 'undici';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { ColumnsCsv, columnsCsv, columnsJson, gridCsv, gridJson, gridOf, gridOfColumns } from '../../src/cli/render/rollup.js';
import { NumericRowStream } from '../../src/client/rollup-rows.js';

// readRollupColumns scans the answer by hand; it must agree with readRollup (JSON.parse + schema)
// on every answer, valid or not. MockAgent: odd JSON spellings a real node would not send.
const NODE = 'http://n1:8112';
const Q = { uuid: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', metric: 'cpu', startMs: 0, endMs: 3_000_000, spanMs: 300_000, type: 'average' as const };
let agents: MockAgent[] = [];
afterEach(async () => {
  await Promise.all(agents.map((a) => a.close()));
  agents = [];
});

function client(body: string, times: number, headers: Record<string, string> = {}): NodeClient {
  const agent = new MockAgent();
  agent.disableNetConnect();
  agents.push(agent);
  agent
    .get(NODE)
    .intercept({ path: () => true, method: 'GET' })
    .reply(200, body, { headers })
    .times(times);
  return new NodeClient(NODE, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } });
}

async function both(body: string): Promise<{ rows?: unknown; cols?: unknown; rowsErr?: string; colsErr?: string }> {
  const c = client(body, 2);
  const out: { rows?: unknown; cols?: unknown; rowsErr?: string; colsErr?: string } = {};
  try {
    const r = await c.readRollup(Q);
    out.rows = r.points.map((p) => [p.timestampMs, p.value]);
  } catch (err) {
    out.rowsErr = (err as Error).message;
  }
  try {
    const r = await c.readRollupColumns(Q);
    out.cols = Array.from(r.timestampsMs, (t, i) => [t, Number.isNaN(r.values[i]!) ? null : r.values[i]]);
  } catch (err) {
    out.colsErr = (err as Error).message;
  }
  return out;
}

describe('NodeClient.readRollupColumns', () => {
  it.each([
    '[[0,1.5],[300,null],[600,-2.25e-7]]',
    ' [ [ 0 , 1.50 ] ,\n\t[300,null] , [600, 1E+3], [900, -0], [1200, 0.1] ] \r\n',
    '[]',
    ' [ ] ',
    '[[0.5,1],[1.25e3,2],[-300,3],[12345678901234567890,4]]',
    '[[0,1e400]]',
  ])('reads %j exactly as readRollup does', async (body) => {
    const r = await both(body);
    expect(r.rowsErr).toBeUndefined();
    expect(r.colsErr).toBeUndefined();
    expect(r.cols).toEqual(r.rows);
    expect(Object.is((r.cols as number[][])[3]?.[1], (r.rows as number[][])[3]?.[1])).toBe(true);
  });

  it.each(['[[0,01]]', '[[0,1.]]', '[[0,1]', '[[0,1]]x', '[[0,"1"]]', '[[0]]', '[[0,1,2]]', '[[0,nul]]', '{"error":"boom"}', 'not json', '[[0,+1]]', ''])(
    "refuses %j with readRollup's own error",
    async (body) => {
      const r = await both(body);
      expect(r.rowsErr).toBeDefined();
      expect(r.colsErr).toBe(r.rowsErr);
    },
  );

  it('reads the same whatever the chunks the answer arrives in (every split point, and byte by byte)', () => {
    const bodies = [
      '[[0,1.5],[300,null],[600,-2.25e-7]]',
      ' [ [ 0 , 1.50 ] ,\n\t[300,null] , [600, 1E+3], [900, -0], [1200, 0.1] ] \r\n',
      '[[1700000100,50.23888860980741],[1700000400,null],[1700000700,1e-7]]',
      '[]',
    ];
    const feed = (parts: string[]): unknown => {
      const s = new NumericRowStream();
      s.start();
      for (const p of parts) s.chunk(Buffer.from(p));
      const r = s.end();
      return r && Array.from(r.timestampsMs, (t, i) => [t, r.values[i]]);
    };
    for (const body of bodies) {
      const whole = feed([body]);
      expect(whole).toEqual((JSON.parse(body) as Array<[number, number | null]>).map(([t, v]) => [Math.round(t * 1000), v ?? NaN]));
      for (let k = 0; k <= body.length; k++) expect(feed([body.slice(0, k), body.slice(k)]), `${body} split at ${k}`).toEqual(whole);
      expect(feed([...body])).toEqual(whole);
    }
    for (const bad of ['[[0,1.]]', '[[0,01]]', '[[0,1]', '[[0,1]]x', '[[0,nul]]', '[[0,+1]]']) {
      for (let k = 0; k <= bad.length; k++) expect(feed([bad.slice(0, k), bad.slice(k)]), `${bad} split at ${k}`).toBeUndefined();
    }
  });

  it('a retry starts over: start() drops what an earlier attempt delivered', () => {
    const s = new NumericRowStream();
    s.start();
    s.chunk(Buffer.from('[[0,1],[300,'));
    s.start();
    s.chunk(Buffer.from('[[0,7]]'));
    expect(Array.from(s.end()!.values)).toEqual([7]);
    expect(s.text()).toBe('[[0,7]]');
  });

  it('columns sized for fewer rows grow; what end() handed over stays as it was after a new start()', () => {
    const s = new NumericRowStream(1);
    s.start();
    s.chunk(Buffer.from(`[${Array.from({ length: 100 }, (_, i) => `[${i},${i / 4}]`).join(',')}]`));
    const first = s.end()!;
    s.start();
    s.chunk(Buffer.from('[[7,7]]'));
    expect(Array.from(s.end()!.values)).toEqual([7]);
    expect(Array.from(first.values)).toEqual(Array.from({ length: 100 }, (_, i) => i / 4));
    expect(Array.from(first.timestampsMs)).toEqual(Array.from({ length: 100 }, (_, i) => i * 1000));
  });

  it('an answer larger than the read can need is cut off (too_large), streamed or not', async () => {
    const huge = `[${'[0,1],'.repeat(400_000)}[0,1]]`;
    await expect(client(huge, 1).readRollupColumns(Q)).rejects.toMatchObject({ code: 'too_large' });
  });

  it('reports a limited result', async () => {
    const r = await client('[[0,1]]', 1, { 'x-snowth-results-limited': '1' }).readRollupColumns(Q);
    expect(r.limited).toBe(true);
    expect(Array.from(r.values)).toEqual([1]);
  });

  it('refuses type all', async () => {
    await expect(client('[]', 1).readRollupColumns({ ...Q, type: 'all' })).rejects.toThrow(/type all/);
  });
});

describe('columnsCsv', () => {
  it('prints byte for byte what gridCsv prints', () => {
    const head = [-86_400_000, -1000, 0, 300_000, 600_500, 86_400_000, 1_700_000_100_000, 1_700_000_100_250, 253402300799000, 253402300800000];
    const more = Array.from({ length: 3000 }, (_, i) => 1_699_990_000_000 + i * 300_000);
    const ts = new Float64Array([...head, ...more]);
    const vs = new Float64Array([1.5, NaN, -0, 1e21, 0.1 + 0.2, -7, -1.2345678901234568e-300, Infinity, 5, 6, ...more.map((t, i) => (i % 97 === 13 ? NaN : Math.sin(t)))]);
    const points = Array.from(ts, (t, i) => ({ timestampMs: t, value: Number.isNaN(vs[i]!) ? null : vs[i]! }));
    for (const span of [300_000, 250]) {
      const want = gridCsv(gridOf(points, false), span);
      expect(columnsCsv({ timestampsMs: ts, values: vs }, 'value', span).toString('utf8')).toBe(want);
      expect(gridCsv(gridOfColumns(ts, vs), span)).toBe(want);
    }
  });
  it("writes the days of years 1970-9999 as Date does (the date is arithmetic, not Date's)", () => {
    // Every day up to 2517 (leap days, the centuries 2100-2500), then every 13th to 9999-12-31.
    const days: number[] = [];
    for (let d = 0; d < 2_932_897; d += d < 200_000 ? 1 : 13) days.push(d);
    days.push(2_932_896);
    const ts = new Float64Array(days.map((d) => d * 86_400_000 + 43_200_000));
    const csv = columnsCsv({ timestampsMs: ts, values: new Float64Array(ts.length).fill(NaN) }, 'value', 60_000)
      .toString('latin1')
      .split('\r\n');
    const wrong = days.filter((_, i) => csv[i + 1] !== `${ts[i]! / 1000},${new Date(ts[i]!).toISOString().slice(0, 19)}Z,`);
    expect(wrong).toEqual([]);
    expect(csv[days.length]).toBe('253402257600,9999-12-31T12:00:00Z,');
  });
  it('prints byte for byte what gridCsv prints, for any times, values, spans and buffer sizes (the buffer grows)', () => {
    // Times: whole and fractional milliseconds, negative, around day and year-9999 edges and Date's own limits.
    const time = fc.oneof(
      fc.integer({ min: -8_640_000_000_000, max: 8_640_000_000_000 }).map((s) => s * 1000),
      fc.integer({ min: -8_640_000_000_000_000, max: 8_640_000_000_000_000 }),
      fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }),
      fc.constantFrom(0, -0, 253402300799999, 253402300800000, 86_399_999, 8.64e15, -8.64e15),
    );
    const value = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(NaN, -0, 0, 1e21, 1e-7, 123456789012345680000, 0.1 + 0.2));
    fc.assert(
      fc.property(
        fc.array(fc.tuple(time, value), { maxLength: 30 }),
        fc.constantFrom(1, 250, 1000, 60_000, 300_000, 86_400_000),
        fc.integer({ min: 0, max: 100 }),
        (rows, span, rowBytes) => {
          const ts = new Float64Array(rows.map(([t]) => t));
          const vs = new Float64Array(rows.map(([, v]) => v));
          const points = rows.map(([t, v]) => ({ timestampMs: t, value: Number.isNaN(v) ? null : v }));
          const want = gridCsv(gridOf(points, false), span);
          expect(columnsCsv({ timestampsMs: ts, values: vs }, 'value', span, rowBytes).toString('utf8')).toBe(want);
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('columnsJson', () => {
  it('prints byte for byte what gridJson prints, for any times, values, spans, meta and buffer sizes', () => {
    const time = fc.oneof(
      fc.integer({ min: -8_640_000_000_000, max: 8_640_000_000_000 }).map((s) => s * 1000),
      fc.double({ min: -8.64e15, max: 8.64e15, noNaN: true }),
      fc.constantFrom(0, -0, 253402300799999, 253402300800000),
    );
    const value = fc.oneof(fc.double(), fc.integer(), fc.constantFrom(NaN, Infinity, -Infinity, -0, 1e21, 1e-7));
    const meta = fc.dictionary(fc.string(), fc.oneof(fc.string(), fc.integer(), fc.boolean(), fc.constant(null)), { maxKeys: 4 });
    fc.assert(
      fc.property(
        fc.array(fc.tuple(time, value), { maxLength: 20 }),
        fc.constantFrom(1, 250, 60_000, 300_000),
        meta,
        fc.integer({ min: 0, max: 120 }),
        (rows, span, m, rowBytes) => {
          const ts = new Float64Array(rows.map(([t]) => t));
          const vs = new Float64Array(rows.map(([, v]) => v));
          expect(columnsJson({ timestampsMs: ts, values: vs }, span, m, rowBytes).toString('utf8')).toBe(gridJson(gridOfColumns(ts, vs), span, m));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('a year of 300 s rows, with gaps, as gridJson prints it', () => {
    const ts = new Float64Array(Array.from({ length: 105_120 }, (_, i) => (1_700_000_100 + 300 * i) * 1000));
    const vs = new Float64Array(Array.from({ length: 105_120 }, (_, i) => (i % 97 === 13 ? NaN : 50 + 40 * Math.sin(i / 288))));
    const meta = { node: 'http://n1:8112', metric: 'cpu µs' };
    expect(columnsJson({ timestampsMs: ts, values: vs }, 300_000, meta).toString('utf8')).toBe(gridJson(gridOfColumns(ts, vs), 300_000, meta));
    expect(columnsCsv({ timestampsMs: ts, values: vs }, 'value', 300_000).toString('utf8')).toBe(
      gridCsv(
        gridOf(
          Array.from(ts, (t, i) => ({ timestampMs: t, value: Number.isNaN(vs[i]!) ? null : vs[i]! })),
          false,
        ),
        300_000,
      ),
    );
  });
});

describe('NumericRowStream numbers', () => {
  // The scanner reads most numbers by hand (digits within 2^53, one exact division): it must give
  // the very double JSON.parse gives, for every spelling of every double, and for long digit strings.
  const spellings = (v: number): string[] => [String(v), v.toExponential(), v.toPrecision(17), v.toFixed(Math.min(20, Math.max(0, 15 - Math.floor(Math.log10(Math.abs(v) || 1)))))];
  it('reads every number as JSON.parse does', () => {
    fc.assert(
      fc.property(
        fc.array(fc.oneof(fc.double({ noNaN: true, noDefaultInfinity: true }), fc.integer(), fc.stringMatching(/^-?(0|[1-9]\d{0,25})(\.\d{1,30})?$/)), { maxLength: 40 }),
        (items) => {
          const texts = items.flatMap((x) => (typeof x === 'string' ? [x] : spellings(x))).filter((t) => /^-?(0|[1-9]\d*)(\.\d+)?(e[+-]?\d+)?$/i.test(t));
          const body = `[${texts.map((t, i) => `[${i},${t}]`).join(',')}]`;
          const s = new NumericRowStream();
          s.start();
          s.chunk(Buffer.from(body));
          const r = s.end()!;
          const want = (JSON.parse(body) as Array<[number, number]>).map(([, v]) => v);
          expect(Array.from(r.values)).toEqual(want);
          want.forEach((v, i) => expect(Object.is(r.values[i], v), `${texts[i]}`).toBe(true));
        },
      ),
      { numRuns: 300 },
    );
  });
});

describe('CSV formatted as the rows arrive (ColumnsCsv fed by NumericRowStream onRows)', () => {
  const rowsArb = fc.array(fc.tuple(fc.integer({ min: 0, max: 4e9 }), fc.option(fc.double({ noNaN: true, noDefaultInfinity: true }), { nil: null })), {
    maxLength: 300,
  });

  it('is byte for byte the CSV of the whole answer, however the answer is cut, with a retry midway', () => {
    fc.assert(
      fc.property(rowsArb, fc.array(fc.nat(), { maxLength: 12 }), fc.option(fc.nat()), (rows, cuts, retryAt) => {
        const body = JSON.stringify(rows.map(([t, v]) => [t, v]));
        const points = [...new Set(cuts.map((c) => c % (body.length + 1)))].sort((a, b) => a - b);
        const pieces = [0, ...points, body.length].flatMap((p, i, all) => (i === 0 ? [] : [body.slice(all[i - 1], p)]));
        // The node's digits kept: JSON.stringify writes every number as String() does, so the CSV
        // is the same as from the doubles alone, whatever the cuts and the retry.
        const csv = new ColumnsCsv('value', 300_000, 4);
        const s = new NumericRowStream(4, (ts, vs, n, digits) => csv.add(ts, vs, n, digits), true);
        s.start();
        if (retryAt !== null && pieces.length > 0) {
          // An attempt that delivered part of the answer, then the retry that delivers all of it.
          for (const p of pieces.slice(0, retryAt % pieces.length)) s.chunk(Buffer.from(p));
          s.start();
        }
        for (const p of pieces) s.chunk(Buffer.from(p));
        const cols = s.end()!;
        expect(cols.digits?.ends.length).toBe(rows.length);
        const plain = columnsCsv({ timestampsMs: cols.timestampsMs, values: cols.values }, 'value', 300_000);
        expect(csv.finish(cols).equals(plain)).toBe(true);
        expect(columnsCsv(cols, 'value', 300_000).equals(plain)).toBe(true);
        expect(cols.timestampsMs.length).toBe(rows.length);
      }),
    );
  });

  it("prints a value with the node's digits only where they are the same number, and never more than a row has room for", () => {
    // Decimals as any printer might write them: leading zeros, long fractions, trailing zeros, signs.
    const decimal = fc
      .tuple(fc.boolean(), fc.stringMatching(/^(0|[1-9]\d{0,20})$/), fc.option(fc.stringMatching(/^\d{1,40}$/), { nil: null }))
      .map(([neg, int, frac]) => `${neg ? '-' : ''}${int}${frac === null ? '' : `.${frac}`}`);
    fc.assert(
      fc.property(fc.array(decimal, { minLength: 1, maxLength: 40 }), (texts) => {
        const body = `[${texts.map((t, i) => `[${i * 300},${t}]`).join(',')}]`;
        const s = new NumericRowStream(1, undefined, true);
        s.start();
        s.chunk(Buffer.from(body));
        const cols = s.end()!;
        const lines = columnsCsv(cols, 'value', 300_000, 1).toString('latin1').split('\r\n');
        expect(lines).toHaveLength(texts.length + 2);
        texts.forEach((t, i) => {
          const cell = lines[i + 1]!.split(',')[2]!;
          expect(Number(cell)).toBe(Number(t) === 0 ? 0 : Number(t));
          // Kept only as the node wrote it, or else as String() prints the double.
          expect([t, String(Number(t))]).toContain(cell);
        });
      }),
      { numRuns: 300 },
    );
  });

  it('a long answer of long plain values prints every row whole (a row never outgrows its room)', () => {
    const t = '-0.0000000000000000000000000000000000012345678901234567'; // 17 significant digits: plain
    const body = `[${Array.from({ length: 5000 }, (_, i) => `[${i * 300},${t}]`).join(',')}]`;
    const s = new NumericRowStream(5000, undefined, true);
    s.start();
    s.chunk(Buffer.from(body));
    const lines = columnsCsv(s.end()!, 'value', 300_000).toString('latin1').split('\r\n');
    expect(lines).toHaveLength(5002);
    expect(new Set(lines.slice(1, -1).map((l) => l.split(',')[2]))).toEqual(new Set([String(Number(t))]));
  });

  it('an answer left to the full parse (a byte-order mark) gives the same CSV; rows told before the read do not survive', async () => {
    const c = client('\ufeff[[0,1],[300,1000],[600,null]]', 1);
    const csv = new ColumnsCsv('value', 300_000, 4);
    csv.add(new Float64Array([900_000, 1_200_000]), new Float64Array([7, 8]), 2);
    const cols = await c.readRollupColumns(Q, { onRows: (ts, vs, n) => csv.add(ts, vs, n) });
    expect(Array.from(cols.values)).toEqual([1, 1000, NaN]);
    expect(csv.finish(cols).toString()).toBe(columnsCsv(cols, 'value', 300_000).toString());
  });

  it('sizes its buffer for a bounded number of rows, whatever the query asks for', () => {
    // A second-long span over ten years asks for 315M rows: the node refuses it, the CLI must not
    // have tried to set aside 25 GB first.
    const csv = new ColumnsCsv('value', 1000, 315_360_000);
    expect(csv.finish({ timestampsMs: new Float64Array([0]), values: new Float64Array([1]) }).toString()).toBe('time,time_iso,value\r\n0,1970-01-01T00:00:00Z,1\r\n');
  });
});
