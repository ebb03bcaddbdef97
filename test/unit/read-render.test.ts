import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { columnFormatter, formatCompact, formatNumber } from '../../src/cli/render/number-format.js';
import { csvField, csvRow, parseCsv } from '../../src/cli/render/csv.js';
import { axisTime, plotColumns, renderChart } from '../../src/cli/render/chart.js';
import { bucketTime, compareSeries, gridCsv, gridJson, gridOf, gridTable, withRows } from '../../src/cli/render/rollup.js';
import { fitHeaders, wrapHeader } from '../../src/cli/render/rollup-table.js';
import { bucketCount, checkBuckets, chooseSpan, parseSpanFlag } from '../../src/cli/commands/read/span.js';
import { UsageError } from '../../src/cli/errors.js';
import { headerLines } from '../../src/cli/commands/read/render.js';

describe('number formatting', () => {
  it('hides float noise and keeps about six significant digits', () => {
    expect(formatNumber(0.1 + 0.2)).toBe('0.3');
    expect(formatNumber(1 / 3)).toBe('0.333333');
    expect(formatNumber(123456.789)).toBe('123457');
    expect(formatNumber(42)).toBe('42');
    expect(formatNumber(-0.5)).toBe('-0.5');
    expect(formatNumber(1.5e-7)).toBe('1.5e-7');
    expect(formatNumber(2.5e20)).toBe('2.5e+20');
  });
  it('gives a column one number of decimals, set by its largest value', () => {
    const f = columnFormatter([0.1 + 0.2, 12.25, null, 3]);
    expect([0.1 + 0.2, 12.25, 3].map(f)).toEqual(['0.30', '12.25', '3.00']);
    const g = columnFormatter([50.0808559, 100.2, 0.0723915]);
    expect([50.0808559, 100.2, 0.0723915].map(g)).toEqual(['50.081', '100.200', '0.072']);
    const ints = columnFormatter([1, 2, 300000]);
    expect(ints(300000)).toBe('300000');
  });
  it('never prints a non-zero value as 0', () => {
    const f = columnFormatter([1_000_000, 0.0001]);
    expect(f(0.0001)).toBe('0.0001');
    expect(f(0.3)).toBe('0.3');
    expect(f(0)).toBe('0');
    expect(f(-1e-9)).toBe('-1e-9');
  });
  it('property: a column formatter output parses back close to the value', () => {
    fc.assert(
      fc.property(fc.array(fc.double({ min: -1e12, max: 1e12, noNaN: true }), { minLength: 1, maxLength: 20 }), (vs) => {
        const f = columnFormatter(vs);
        const maxAbs = Math.max(...vs.map(Math.abs));
        for (const v of vs) {
          const back = Number(f(v));
          expect(Number.isFinite(back)).toBe(true);
          // Six significant digits of the largest value, or the value's own exponent form.
          // Rounded at the decimals six significant digits of the column's largest value need (at most 6).
          expect(Math.abs(back - v)).toBeLessThanOrEqual(Math.max(maxAbs * 0.5e-5, 0.5e-6, Math.abs(v) * 0.5e-5) * 1.0001);
        }
      }),
    );
  });
  it('compact axis labels', () => {
    expect(formatCompact(1500)).toBe('1.5k');
    expect(formatCompact(2_345_678)).toBe('2.346M');
    expect(formatCompact(0.25)).toBe('0.25');
    expect(formatCompact(-12)).toBe('-12');
    expect(formatCompact(0.3 + 0.0000000000000004)).toBe('0.3');
  });
});

describe('csv', () => {
  it('quotes only what RFC 4180 requires, doubling quotes', () => {
    expect(csvField('plain')).toBe('plain');
    expect(csvField('a,b')).toBe('"a,b"');
    expect(csvField('say "hi"')).toBe('"say ""hi"""');
    expect(csvField('two\nlines')).toBe('"two\nlines"');
    expect(csvField(' padded')).toBe('" padded"');
    expect(csvField(null)).toBe('');
    expect(csvField(0.1 + 0.2)).toBe('0.30000000000000004');
    expect(csvRow(['a', 1, null])).toBe('a,1,\r\n');
  });
  it('property: any table of strings survives a round trip', () => {
    fc.assert(
      fc.property(fc.array(fc.array(fc.string(), { minLength: 2, maxLength: 4 }), { minLength: 1, maxLength: 5 }), (rows) => {
        const text = rows.map((r) => csvRow(r)).join('');
        expect(parseCsv(text)).toEqual(rows);
      }),
    );
  });
});

describe('span choice and parsing', () => {
  const H = 3_600_000;
  it('picks the smallest usual span with at most ~300 rows', () => {
    expect(chooseSpan(0, 1 * H)).toBe(60_000);
    expect(chooseSpan(0, 5 * H)).toBe(60_000); // exactly 300 rows
    expect(chooseSpan(0, 5 * H + 1)).toBe(300_000);
    expect(chooseSpan(0, 24 * H)).toBe(300_000);
    expect(chooseSpan(0, 7 * 24 * H)).toBe(3_600_000);
    expect(chooseSpan(0, 30 * 24 * H)).toBe(10_800_000);
    expect(chooseSpan(0, 365 * 24 * H)).toBe(86_400_000 * 2);
  });
  it('counts the row of a start that is not aligned', () => {
    expect(bucketCount(30_000, 90_000, 60_000)).toBe(2);
    expect(bucketCount(0, 60_000, 60_000)).toBe(1);
    // Auto span must respect the floored start: 300 rows over an unaligned 5 h would be 301.
    const start = 30_000;
    expect(bucketCount(start, start + 5 * H, chooseSpan(start, start + 5 * H))).toBeLessThanOrEqual(300);
  });
  it('accepts s, ms, m, h and d forms and needs a unit', () => {
    expect(parseSpanFlag('300s')).toBe(300_000);
    expect(parseSpanFlag('60000ms')).toBe(60_000);
    expect(parseSpanFlag('5m')).toBe(300_000);
    expect(parseSpanFlag('1h')).toBe(3_600_000);
    expect(parseSpanFlag('1.5s')).toBe(1500);
    expect(() => parseSpanFlag('300')).toThrow(UsageError);
    try {
      parseSpanFlag('300');
    } catch (err) {
      expect((err as UsageError).hint).toMatch(/add a unit: 300s for seconds or 300ms/);
    }
    expect(() => parseSpanFlag('0s')).toThrow(UsageError);
    expect(() => parseSpanFlag('0.5ms')).toThrow(/whole number of milliseconds/);
    expect(() => parseSpanFlag('5 minutes')).toThrow(UsageError);
  });
  it('refuses more buckets than a node answers', () => {
    expect(() => checkBuckets(1_000_001, 1)).toThrow(/1,000,001 buckets/);
    expect(() => checkBuckets(1_000_000, 1)).not.toThrow();
  });
});

describe('chart', () => {
  const pts = (vals: Array<number | null>, spanMs = 60_000) => vals.map((value, i) => ({ timestampMs: 1_700_000_040_000 + i * spanMs, value }));

  it('renders deterministically for a given size, within the width', () => {
    const vals = Array.from({ length: 40 }, (_, i) => Math.round(Math.sin(i / 4) * 100) / 10);
    const a = renderChart(pts(vals), { width: 50, height: 10, spanMs: 60_000 });
    const b = renderChart(pts(vals), { width: 50, height: 10, spanMs: 60_000 });
    expect(a).toEqual(b);
    expect(a).toHaveLength(10);
    for (const line of a) expect([...line].length).toBeLessThanOrEqual(50);
    expect(a.join('\n')).toMatchInlineSnapshot(`
      "    10 ┤    ⡠⠒⠉⠉⠒⢄                     ⠤⠊⠉⠑⠢⡀
             │  ⡠⠉      ⠑⡀                ⢀⠤⠊     ⠈⠢⡀
       2.963 ┤ ⠔         ⠈⢂              ⢀⠂         ⠈⢄
             │⠊            ⠑⡀           ⠠⠁            ⢂
      -2.963 ┤              ⠐⠄         ⡐⠁              ⠡
             │               ⠈⠢      ⢀⠌
         -10 ┤                 ⠑⠤⣀⣀⡠⠔⠁
             └──────────────────────────────────────────
              22:14              22:34             22:53
              UTC · 40 buckets · min -10 · max 10"
    `);
  });

  it('leaves a gap for null buckets', () => {
    const vals: Array<number | null> = [1, 2, 3, 4, null, null, null, null, 5, 6, 7, 8];
    const lines = renderChart(pts(vals), { width: 20, height: 7, spanMs: 60_000, ascii: true });
    const axisLine = lines[4]!;
    const plotStart = axisLine.indexOf('+') + 1;
    const plotCols = axisLine.length - plotStart;
    const cols = plotColumns(vals, plotCols);
    const gaps = cols.map((c, i) => (c === null ? i : -1)).filter((i) => i >= 0);
    expect(gaps.length).toBeGreaterThanOrEqual(4);
    expect(gaps[0]).toBeGreaterThan(0);
    for (const row of lines.slice(0, 4)) {
      const plot = row.slice(plotStart).padEnd(plotCols);
      for (const g of gaps) expect(plot[g]).toBe(' ');
      // ...and the points on either side of the gap are drawn somewhere in the plot.
    }
    const drawn = (x: number) => lines.slice(0, 4).some((row) => row.slice(plotStart)[x] === '*');
    expect(drawn(gaps[0]! - 1)).toBe(true);
    expect(drawn(gaps[gaps.length - 1]! + 1)).toBe(true);
  });

  it('keeps a one-bucket spike when downsampling', () => {
    const vals = Array.from({ length: 1000 }, (_, i) => (i === 517 ? 100 : 1));
    const cols = plotColumns(vals, 20);
    expect(cols.filter((c) => c && c.hi === 100)).toHaveLength(1);
    const lines = renderChart(pts(vals), { width: 40, height: 8, spanMs: 60_000 });
    expect(lines[0]).toMatch(/^\s*100 ┤.*[⠁-⣿]/); // the top row has a dot
  });

  it('says so when every bucket is empty', () => {
    expect(renderChart(pts([null, null]), { width: 40, height: 8, spanMs: 60_000 })).toEqual(['(no data in range: every bucket is empty)']);
  });

  it('prints x-axis times with milliseconds for sub-second spans', () => {
    expect(axisTime(1_700_000_000_500, 500, 10_000)).toBe('22:13:20.500');
    expect(axisTime(1_700_000_000_000, 60_000, 3_600_000)).toBe('22:13');
    expect(axisTime(1_700_000_000_000, 300_000, 7 * 86_400_000)).toBe('11-14 22:13');
  });
});

describe('rollup grids', () => {
  const points = [
    { timestampMs: 1_700_000_000_000, value: 0.1 + 0.2 },
    { timestampMs: 1_700_000_000_500, value: null },
    { timestampMs: 1_700_000_001_000, value: 7 },
  ];
  it('table: ISO times with milliseconds for sub-second spans, a dash for null, right-aligned', () => {
    const lines = gridTable(gridOf(points, false, 'average'), 500);
    expect(lines.join('\n')).toBe(
      [
        '┌──────────────────────────┬─────────┐',
        '│ time                     │ average │',
        '├──────────────────────────┼─────────┤',
        '│ 2023-11-14T22:13:20.000Z │     0.3 │',
        '│ 2023-11-14T22:13:20.500Z │       - │',
        '│ 2023-11-14T22:13:21.000Z │     7.0 │',
        '└──────────────────────────┴─────────┘',
      ].join('\n'),
    );
    expect(bucketTime(1_700_000_000_000, 60_000)).toBe('2023-11-14T22:13:20Z');
  });
  it('json and csv carry exact numbers', () => {
    const grid = gridOf(points, false);
    expect(JSON.parse(gridJson(grid, 500, { kind: 'nnt', span: 0.5 }))).toEqual({
      kind: 'nnt',
      span: 0.5,
      rows: [
        { time: 1700000000, time_iso: '2023-11-14T22:13:20.000Z', value: 0.30000000000000004 },
        { time: 1700000000.5, time_iso: '2023-11-14T22:13:20.500Z', value: null },
        { time: 1700000001, time_iso: '2023-11-14T22:13:21.000Z', value: 7 },
      ],
    });
    expect(gridCsv(grid, 500)).toBe(
      'time,time_iso,value\r\n1700000000,2023-11-14T22:13:20.000Z,0.30000000000000004\r\n1700000000.5,2023-11-14T22:13:20.500Z,\r\n1700000001,2023-11-14T22:13:21.000Z,7\r\n',
    );
    expect(JSON.parse(gridJson(gridOf([], false), 500, { kind: 'nnt' }))).toEqual({ kind: 'nnt', rows: [] });
    // One document, however many rows: what a script pipes into jq.
    expect(() => JSON.parse(withRows({ a: 1 }, ['{"x":1}', '{"x":2}']))).not.toThrow();
  });
  it('compare marks differing, null-vs-number and missing buckets', () => {
    const a = {
      node: 'http://a:1',
      points: [
        { timestampMs: 0, value: 1 },
        { timestampMs: 60_000, value: 2 },
        { timestampMs: 120_000, value: null },
      ],
    };
    const b = {
      node: 'http://b:1',
      points: [
        { timestampMs: 0, value: 1 },
        { timestampMs: 60_000, value: 2.5 },
        { timestampMs: 120_000, value: 0 },
        { timestampMs: 180_000, value: 4 },
      ],
    };
    const cmp = compareSeries([a, b], false);
    expect(cmp.grid.timestampsMs).toEqual([0, 60_000, 120_000, 180_000]);
    expect(cmp.differs).toEqual([false, true, true, true]);
    expect(cmp.differing).toBe(3);
    const table = gridTable(cmp.grid, 60_000, { marks: cmp.differs }).join('\n');
    expect(table).toContain('(none)');
    expect(table.split('\n')[3]).not.toContain('*');
    expect(table.split('\n')[4]).toContain('*');
    expect(compareSeries([a, a], false).differing).toBe(0);
    // A last-digit difference from another summation order: different unless a tolerance is given.
    const c = { node: 'http://c:1', points: [{ timestampMs: 0, value: 0.1 + 0.2 }] };
    const d = { node: 'http://d:1', points: [{ timestampMs: 0, value: 0.3 }] };
    expect(compareSeries([c, d], false).differing).toBe(1);
    expect(compareSeries([c, d], false, 1e-12).differing).toBe(0);
    expect(compareSeries([{ ...c, points: [{ timestampMs: 0, value: null }] }, d], false, 0.5).differing).toBe(1);
  });
});

describe('header lines', () => {
  const parts = ['node http://127.0.0.1:8112', 'check 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', 'metric "cpu"', 'type average', '12 rows'];
  it('one line off a terminal, wrapped at separators on one', () => {
    expect(headerLines(parts, undefined)).toEqual([parts.join(' · ')]);
    const lines = headerLines(parts, 60);
    expect(lines).toEqual(['node http://127.0.0.1:8112 ·', '  check 3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f ·', '  metric "cpu" · type average · 12 rows']);
    for (const l of lines) expect(l.length).toBeLessThanOrEqual(60);
  });
});

describe('rollup tables on a narrow terminal', () => {
  it('wrap node headers over their numbers until the table fits; numbers are never cut', () => {
    const a = { node: 'http://node-number-one.example:8112', points: [{ timestampMs: 0, value: 1.5 }] };
    const b = { node: 'http://node-number-two.example:8112', points: [{ timestampMs: 0, value: 2.5 }] };
    const cmp = compareSeries([a, b], false);
    const headers = ['node-number-one.example:8112', 'node-number-two.example:8112'];
    const wide = gridTable(cmp.grid, 60_000, { headers, marks: cmp.differs });
    expect(wide[0]!.length).toBeGreaterThan(60);
    const narrow = gridTable(cmp.grid, 60_000, { headers, marks: cmp.differs, width: 60 });
    for (const line of narrow) expect([...line].length).toBeLessThanOrEqual(60);
    // The header takes more lines; the value row is whole.
    expect(narrow.length).toBeGreaterThan(wide.length);
    expect(narrow.join('\n')).toMatch(/1\.5 │ +2\.5 │ \* │/);
    // Off a terminal (no width) nothing changes.
    expect(gridTable(cmp.grid, 60_000, { headers, marks: cmp.differs, width: undefined })).toEqual(wide);
  });
  it('fitHeaders never narrows a column below its cells, nor a header below 8', () => {
    expect(fitHeaders([30, 30], [4, 4], 200)).toEqual([30, 30]);
    expect(fitHeaders([30, 30], [4, 4], 30)).toEqual([11, 11]); // 30 minus the borders (7), shared
    expect(fitHeaders([30, 30], [4, 4], 10)).toEqual([8, 8]);
    expect(fitHeaders([30, 5], [20, 5], 10)).toEqual([20, 5]);
    expect(wrapHeader('127.0.0.1:18210 count', 10)).toEqual(['127.0.0.1:', '18210', 'count']);
  });
});

describe("read's flag lists", () => {
  it('are the protocol lists themselves (protocol/constants.ts), not copies', async () => {
    const declared = await import('../../src/cli/commands/read/options.js');
    const protocol = await import('../../src/protocol/types.js');
    const write = await import('../../src/cli/commands/write/options.js');
    expect(declared.READ_KINDS).toBe(protocol.DATA_TYPES);
    expect(write.WRITE_KINDS).toBe(protocol.DATA_TYPES);
    expect(declared.READ_ENGINES).toBe(protocol.ENGINES);
    expect(declared.READ_TYPES).toBe(protocol.ROLLUP_TYPES);
    expect(declared.READ_TYPE_ALIASES).toBe(protocol.ROLLUP_TYPE_ALIASES);
  });
});
