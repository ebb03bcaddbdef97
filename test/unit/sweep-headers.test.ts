import { describe, expect, it } from 'vitest';
import { describeRequest, describeScope, parseHeaderPrefix, parseTypes, planSweep, type SweepFlags } from '../../src/cli/commands/sweep/plan.js';
import { buildSweepHeaders, parseSweepHeaders, sweepHeaderNamesUsed, HEADER_PREFIXES, type DataType, type SweepRequest } from '../../src/protocol/index.js';

const TYPE_SETS: DataType[][] = [['nnt'], ['text'], ['histogram'], ['nnt', 'text'], ['nnt', 'histogram'], ['text', 'histogram'], ['nnt', 'text', 'histogram']];
const NNT = [undefined, [60, 300]] as const;
const HIST = [undefined, [60]] as const;

const combos = HEADER_PREFIXES.flatMap((prefix) =>
  TYPE_SETS.flatMap((types) => NNT.flatMap((nnt) => HIST.map((hist) => ({ prefix, types, nnt, hist })))),
);

describe('buildSweepHeaders: every option combination', () => {
  it.each(combos.map((c) => [`${c.prefix} ${c.types.join(',')} nnt=${c.nnt?.join(',') ?? 'all'} hist=${c.hist?.join(',') ?? 'all'}`, c] as const))('%s', (_name, c) => {
    const req: SweepRequest = { before: 1_787_529_600, types: c.types, ...(c.nnt ? { nntRollups: [...c.nnt] } : {}), ...(c.hist ? { histogramRollups: [...c.hist] } : {}) };
    const headers = buildSweepHeaders(req, c.prefix);
    const expected: Record<string, string> = {
      [`${c.prefix}-Delete-Time`]: '1787529600',
      // Types are always explicit: never left to the node's nnt-only default.
      [`${c.prefix}-Delete-Data-Types`]: c.types.join(','),
    };
    // Spans only for a type being deleted; absent means all spans.
    if (c.nnt && c.types.includes('nnt')) expected[`${c.prefix}-NNT-Delete-Rollups`] = '60,300';
    if (c.hist && c.types.includes('histogram')) expected[`${c.prefix}-Histogram-Delete-Rollups`] = '60';
    expect(headers).toEqual(expected);
    // What the node parses (header names arrive lower-cased) is what was meant.
    const lower = Object.fromEntries(Object.entries(headers).map(([k, v]) => [k.toLowerCase(), v]));
    const back = parseSweepHeaders(lower);
    expect(back.before).toBe(1_787_529_600);
    expect(back.types).toEqual(c.types);
    expect(back.nntRollups).toEqual(c.types.includes('nnt') ? req.nntRollups : undefined);
    expect(back.histogramRollups).toEqual(c.types.includes('histogram') ? req.histogramRollups : undefined);
  });
});

const base: SweepFlags = {
  before: '1787529600',
  types: 'nnt',
  headerPrefix: 'X-Service',
  concurrency: '32',
  pollInterval: '2s',
  timeout: '6h',
  wait: true,
  dryRun: false,
  yes: false,
  force: false,
  skipUnreachable: false,
  output: 'table',
};
const NOW = 1_800_000_000_000;

describe('planSweep flags', () => {
  it('builds the request the dry run prints, per node', () => {
    const plan = planSweep({ ...base, types: 'nnt,histogram', nntRollups: '60,300,60', headerPrefix: 'x-snowth' }, NOW);
    expect(plan.request).toEqual({ before: 1_787_529_600, types: ['nnt', 'histogram'], nntRollups: [60, 300] });
    expect(describeRequest('http://db1:8112', plan)).toEqual({
      method: 'DELETE',
      url: 'http://db1:8112/sweep_delete',
      headers: { 'X-Snowth-Delete-Time': '1787529600', 'X-Snowth-Delete-Data-Types': 'nnt,histogram', 'X-Snowth-NNT-Delete-Rollups': '60,300' },
    });
    expect(describeScope(plan.request)).toBe('nnt spans 60,300 only, histogram all spans');
  });

  it('parses types, deduplicated, case-insensitive, naming a bad one', () => {
    expect(parseTypes('NNT, text,nnt')).toEqual(['nnt', 'text']);
    expect(() => parseTypes('nnt,numeric')).toThrow(/--types: "numeric" is not a data type/);
    expect(() => parseTypes('nnt,,text')).toThrow(/--types: "nnt,,text" is not a data type/);
  });

  it('rejects spans for a type not being deleted, and bad spans', () => {
    expect(() => planSweep({ ...base, types: 'text', nntRollups: '60' }, NOW)).toThrow(/--nnt-rollups 60 given, but --types text does not include nnt/);
    expect(() => planSweep({ ...base, histogramRollups: '60' }, NOW)).toThrow(/does not include histogram/);
    expect(() => planSweep({ ...base, nntRollups: '60,5m' }, NOW)).toThrow(/--nnt-rollups: "5m" is not a span in seconds/);
    expect(() => planSweep({ ...base, nntRollups: '0' }, NOW)).toThrow(/--nnt-rollups: "0"/);
  });

  it('knows both header prefixes and nothing else', () => {
    expect(parseHeaderPrefix('X-Snowth')).toBe('X-Snowth');
    expect(parseHeaderPrefix('x-service-')).toBe('X-Service');
    expect(() => parseHeaderPrefix('X-Foo')).toThrow(/--header-prefix: "X-Foo" is not a known prefix/);
  });

  it('validates the waiting flags', () => {
    const plan = planSweep({ ...base, pollInterval: '20s' }, NOW);
    expect(plan.lostAfterMs).toBe(60_000);
    expect(planSweep({ ...base, lostAfter: '5s' }, NOW).lostAfterMs).toBe(5000);
    expect(planSweep(base, NOW).timeoutMs).toBe(6 * 3_600_000);
    expect(() => planSweep({ ...base, concurrency: '0' }, NOW)).toThrow(/--concurrency: "0" is not a whole number >= 1/);
    expect(() => planSweep({ ...base, timeout: 'forever' }, NOW)).toThrow(/--timeout/);
    expect(() => planSweep({ ...base, output: 'yaml' }, NOW)).toThrow(/--output: "yaml"/);
  });
});

describe('header names as the request spelled them (for the node\'s errors)', () => {
  it('uses X-Snowth- for every header once the request used that prefix, and ours otherwise', () => {
    expect(sweepHeaderNamesUsed({ 'x-snowth-delete-time': '1' })).toEqual({
      deleteTime: 'X-Snowth-Delete-Time',
      dataTypes: 'X-Snowth-Delete-Data-Types',
      nntRollups: 'X-Snowth-NNT-Delete-Rollups',
      histogramRollups: 'X-Snowth-Histogram-Delete-Rollups',
    });
    expect(sweepHeaderNamesUsed({ 'x-service-delete-time': '1' }).nntRollups).toBe('X-Service-NNT-Delete-Rollups');
    expect(sweepHeaderNamesUsed({}).deleteTime).toBe('X-Service-Delete-Time');
    // A missing delete time is named with the prefix of the headers that did come.
    expect(() => parseSweepHeaders({ 'x-snowth-delete-data-types': 'nnt' })).toThrow(/missing header X-Snowth-Delete-Time/);
    expect(() => parseSweepHeaders({})).toThrow(/missing header X-Service-Delete-Time/);
  });
});
