import { describe, expect, it } from 'vitest';
import { DATA_TYPES as SWEEP_DATA_TYPES, HEADER_PREFIXES as SWEEP_HEADER_PREFIXES, type SweepOptions } from '../../src/cli/commands/sweep/options.js';
import { describeRequest, describeScope, planSweep, type SweepFlags } from '../../src/cli/commands/sweep/plan.js';
import { parseArgv } from '../helpers/parse.js';
import { sweepFlagsWith } from '../helpers/sweep-flags.js';
import { buildSweepHeaders, DATA_TYPES, parseSweepHeaders, sweepHeaderNamesUsed, HEADER_PREFIXES, type DataType, type SweepRequest } from '../../src/protocol/index.js';

const TYPE_SETS: DataType[][] = [['nnt'], ['text'], ['histogram'], ['nnt', 'text'], ['nnt', 'histogram'], ['text', 'histogram'], ['nnt', 'text', 'histogram']];
const NNT = [undefined, [60, 300]] as const;
const HIST = [undefined, [60]] as const;

const combos = HEADER_PREFIXES.flatMap((prefix) => TYPE_SETS.flatMap((types) => NNT.flatMap((nnt) => HIST.map((hist) => ({ prefix, types, nnt, hist })))));

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

const NOW = 1_800_000_000_000;

/** The options `tsnode sweep <argv>` hands its action: the real declarations parse them. */
async function sweepOpts(...argv: string[]): Promise<SweepOptions> {
  const r = await parseArgv(['sweep', '--before', '1787529600', ...argv]);
  if (!r.ok) throw 'error' in r ? r.error : new Error('help');
  return r.options as SweepOptions;
}

describe('planSweep flags', () => {
  it('builds the request the dry run prints, per node', async () => {
    const plan = planSweep(await sweepOpts('--types', 'nnt,histogram', '--nnt-rollups', '300,60,60'), NOW);
    expect(plan.request).toEqual({ before: 1_787_529_600, types: ['nnt', 'histogram'], nntRollups: [60, 300] });
    expect(describeRequest('http://db1:8112', plan.request, 'X-Snowth')).toEqual({
      method: 'DELETE',
      url: 'http://db1:8112/sweep_delete',
      headers: { 'X-Snowth-Delete-Time': '1787529600', 'X-Snowth-Delete-Data-Types': 'nnt,histogram', 'X-Snowth-NNT-Delete-Rollups': '60,300' },
    });
    expect(describeScope(plan.request)).toBe('nnt spans 60,300 only, histogram all spans');
  });

  it('parses types, deduplicated, case-insensitive, naming a bad one (while the command line is read)', async () => {
    expect((await sweepOpts('--types', 'NNT,text,nnt')).types).toEqual(['nnt', 'text']);
    await expect(sweepOpts('--types', 'nnt,numeric')).rejects.toThrow(/--types: "numeric" is not one of nnt, text, histogram/);
    await expect(sweepOpts('--types', 'nnt,,text')).rejects.toThrow(/--types: item 2 of "nnt,,text" is empty/);
  });

  it('rejects spans for a type not being deleted, and bad spans', async () => {
    expect(() => planSweep({ ...NO_SPANS, types: ['text'], nntRollups: [60] }, NOW)).toThrow(/--nnt-rollups 60 given, but --types text does not include nnt/);
    expect(() => planSweep({ ...NO_SPANS, histogramRollups: [60] }, NOW)).toThrow(/does not include histogram/);
    expect((await sweepOpts('--nnt-rollups', '60,5m')).nntRollups).toEqual([60, 300]);
    await expect(sweepOpts('--nnt-rollups', '60,5x')).rejects.toThrow(/--nnt-rollups: "5x" is not a span/);
    await expect(sweepOpts('--nnt-rollups', '0')).rejects.toThrow(/--nnt-rollups: "0"/);
  });

  it('knows both header prefixes, in any letter case, and nothing else; none given: the target decides', async () => {
    expect((await sweepOpts('--header-prefix', 'x-snowth')).headerPrefix).toBe('X-Snowth');
    expect((await sweepOpts()).headerPrefix).toBeUndefined();
    await expect(sweepOpts('--header-prefix', 'X-Foo')).rejects.toThrow(/--header-prefix: "X-Foo" is not one of X-Service, X-Snowth/);
  });

  it("declares the protocol's data types and header prefixes themselves (protocol/constants.ts), not copies", () => {
    expect(SWEEP_DATA_TYPES).toBe(DATA_TYPES);
    expect(SWEEP_HEADER_PREFIXES).toBe(HEADER_PREFIXES);
  });

  it('validates the waiting flags', async () => {
    const plan = planSweep(await sweepOpts('--poll-interval', '20s'), NOW);
    expect(plan.lostAfterMs).toBe(60_000);
    expect(planSweep(await sweepOpts('--lost-after', '5s'), NOW).lostAfterMs).toBe(5000);
    expect(planSweep(await sweepOpts(), NOW).timeoutMs).toBe(6 * 3_600_000);
    await expect(sweepOpts('--concurrency', '0')).rejects.toThrow(/--concurrency: 0 is out of range/);
    await expect(sweepOpts('--timeout', 'forever')).rejects.toThrow(/--timeout/);
    await expect(sweepOpts('--output', 'yaml')).rejects.toThrow(/--output: "yaml"/);
  });
});

const NO_SPANS: SweepFlags = sweepFlagsWith({ before: '1787529600' });

describe("header names as the request spelled them (for the node's errors)", () => {
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
