import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { parseNntBody } from '../../src/server/nnt-body.js';
import { LOG_ENTRY, packRecords } from '../../src/server/packed-write.js';
import { PlainRecordCheck, validateNntRecord, type NntRecord } from '../../src/protocol/index.js';

const SPAN = 60;

/** The general path: JSON.parse and the shared validator; null when the body is refused. */
function oracle(body: string): NntRecord[] | null {
  let items: unknown;
  try {
    items = JSON.parse(body);
  } catch {
    return null;
  }
  if (!Array.isArray(items)) return null;
  const out: NntRecord[] = [];
  for (const item of items) {
    const v = validateNntRecord(item, { smallestSpan: SPAN });
    if (!v.ok) return null;
    out.push(v.record);
  }
  return out;
}

/** The fast path's result as (id, metric, the nine numbers) per record. */
function expand(entries: Float64Array, series: { id: string[]; metric: string[] }): unknown[] {
  const out: unknown[] = [];
  for (let o = 0; o < entries.length; o += LOG_ENTRY) {
    const k = entries[o]!;
    out.push([series.id[k], series.metric[k], ...entries.subarray(o + 1, o + LOG_ENTRY)]);
  }
  return out;
}

function checkAgainstOracle(body: string): 'fast' | 'general' {
  const fast = parseNntBody(Buffer.from(body), SPAN);
  const want = oracle(body);
  if (fast === null) return 'general';
  // The fast path may decline a valid body, but never accept an invalid one or read it differently.
  expect(want).not.toBeNull();
  const general = packRecords(want!);
  const a = expand(fast.entries, fast.series);
  const b = expand(general.entries, general.series);
  // Each series is listed once, as the general path lists them.
  expect(fast.series).toEqual(general.series);
  expect(a.length).toBe(b.length);
  for (let i = 0; i < a.length; i++) {
    const x = a[i] as unknown[];
    const y = b[i] as unknown[];
    for (let k = 0; k < x.length; k++) {
      if (!Object.is(x[k], y[k])) throw new Error(`record ${i} item ${k}: fast ${String(x[k])} vs general ${String(y[k])} in ${body}`);
    }
  }
  return 'fast';
}

const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';

describe('the record scanner: parseNntBody (the fast path of /write/nnt) and PlainRecordCheck (tsnode write)', () => {
  it('reads plain records exactly as JSON.parse and the validator do', () => {
    const body = JSON.stringify([
      { metric: 'cpu', id: UUID, offset: 60, count: 1, value: 1.5 },
      { metric: 'cpu', id: UUID.toUpperCase(), offset: 120, count: 2, value: -0, derivative: 0.1, counter: 1e-7, stddev: 123456789.12345679 },
      { id: UUID, metric: 'disk|ST[a:b]', offset: 0, count: 0, value: 3, derivative_stddev: 2, counter_stddev: 5e300 },
    ]);
    expect(checkAgainstOracle(body)).toBe('fast');
    const fast = parseNntBody(Buffer.from(body), SPAN)!;
    expect(fast.series).toEqual({ id: [UUID, UUID], metric: ['cpu', 'disk|ST[a:b]'] });
    expect([...fast.entries].filter((_, i) => i % LOG_ENTRY === 0)).toEqual([0, 0, 1]);
  });

  it('decodes a non-ASCII metric as UTF-8 when only the id changes', () => {
    const other = '00000000-0000-4000-8000-000000000000';
    const body = JSON.stringify([
      { metric: 'ü|ST[°C]', id: UUID, offset: 60, count: 1, value: 1 },
      { metric: 'ü|ST[°C]', id: other, offset: 60, count: 1, value: 2 },
    ]);
    expect(checkAgainstOracle(body)).toBe('fast');
    expect(parseNntBody(Buffer.from(body), SPAN)!.series.metric).toEqual(['ü|ST[°C]', 'ü|ST[°C]']);
  });

  it.each([
    ['null', 'null'],
    ['[0,null] (what the production Go client sends)', '[0,null]'],
    ['[0,[]]', '[0,[]]'],
    ['spaced out', ' [ 0 ,\n null ] '],
  ])('takes a record whose parts say "no parts" (%s) on the fast path, as the general path reads it', (_what, parts) => {
    const body = `[{"count":1,"value":10,"derivative":0,"counter":0,"stddev":0,"derivative_stddev":0,"counter_stddev":0,"metric":"m","id":"${UUID}","offset":60,"parts":${parts}}]\n`;
    expect(checkAgainstOracle(body)).toBe('fast');
  });

  it.each([
    ['parts', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"parts":[30,[]]}]`],
    ['parts of period 0 with a piece', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"parts":[0,[{"count":1,"value":1}]]}]`],
    ['parts [0.0,null]', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"parts":[0.0,null]}]`],
    ['parts [0,null,null]', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"parts":[0,null,null]}]`],
    ['parts twice', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"parts":null,"parts":null}]`],
    ['a key like parts', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"pârts":null}]`],
    ['an unknown field', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"x":1}]`],
    ['a repeated field', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,"value":2}]`],
    ['an escape', `[{"metric":"a\\u0041","id":"${UUID}","offset":60,"count":1,"value":1}]`],
    ['a misaligned offset', `[{"metric":"m","id":"${UUID}","offset":61,"count":1,"value":1}]`],
    ['a missing value', `[{"metric":"m","id":"${UUID}","offset":60,"count":1}]`],
    ['a fractional count', `[{"metric":"m","id":"${UUID}","offset":60,"count":1.5,"value":1}]`],
    ['a null', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":null}]`],
    ['an overflowing number', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1e400}]`],
    ['a bad uuid', `[{"metric":"m","id":"3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6g","offset":60,"count":1,"value":1}]`],
    ['a trailing comma', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1},]`],
    ['text after the array', `[{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1}] x`],
    ['a leading zero', `[{"metric":"m","id":"${UUID}","offset":060,"count":1,"value":1}]`],
    ['an empty metric', `[{"metric":"","id":"${UUID}","offset":60,"count":1,"value":1}]`],
    ['an object, not an array', `{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1}`],
  ])('leaves a body with %s to the general path', (_what, body) => {
    expect(parseNntBody(Buffer.from(body), SPAN)).toBeNull();
  });

  // Keys are told apart by their first byte (and where count/counter/counter_stddev and
  // derivative/derivative_stddev part), then compared whole: a near miss must not pass.
  it.each([
    ['coun', '"coun":1'],
    ['counte', '"counte":1'],
    ['counterr', '"counterr":1'],
    ['counter_stddeV', '"counter_stddeV":1'],
    ['counter_stddevs', '"counter_stddevs":1'],
    ['derivativ', '"derivativ":1'],
    ['derivative_', '"derivative_":1'],
    ['derivative_stddeX', '"derivative_stddeX":1'],
    ['stdde', '"stdde":1'],
    ['valuE', '"valuE":1'],
    ['o', '"o":1'],
    ['ids', '"ids":1'],
    ['an escaped quote in a key', '"stddev\\"":1'],
    ['a key whose closing quote is another byte', '"stddevX:1'],
  ])('refuses a key that is almost one of the record keys (%s), in a body and in one record', (_what, field) => {
    const record = `{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1,${field}}`;
    expect(parseNntBody(Buffer.from(`[${record}]`), SPAN)).toBeNull();
    expect(new PlainRecordCheck(SPAN).isPlainValid(record)).toBe(false);
  });

  it.each([
    ['a uuid without its dashes, and more', '3f2a9c1e00b7d04c5509a0e01d2b3c4d5e6f'],
    ['a uuid with a non-hex digit', '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6z'],
    ['a uuid one character longer', `${UUID}0`],
    ['a uuid one character shorter', UUID.slice(1)],
    ['a uuid with a control character', `${UUID.slice(0, 35)}\u0001`],
  ])('refuses an id that is not a uuid (%s), whether or not a record before it had one', (_what, id) => {
    const record = `{"metric":"m","id":"${id}","offset":60,"count":1,"value":1}`;
    const good = `{"metric":"m","id":"${UUID}","offset":60,"count":1,"value":1}`;
    expect(parseNntBody(Buffer.from(`[${record}]`), SPAN)).toBeNull();
    expect(parseNntBody(Buffer.from(`[${good},${record}]`), SPAN)).toBeNull();
    const check = new PlainRecordCheck(SPAN);
    expect(check.isPlainValid(good)).toBe(true);
    expect(check.isPlainValid(record)).toBe(false);
    const bytes = Buffer.from(`${good}\n${record}\n`);
    expect(check.isPlainValidBytes(bytes, 0, good.length)).toBe(true);
    expect(check.isPlainValidBytes(bytes, good.length + 1, bytes.length - 1)).toBe(false);
  });

  it('never disagrees with the general path on generated bodies and records', () => {
    const hex = fc.constantFrom(...'0123456789abcdefABCDEF'.split(''));
    const uuid = fc.tuple(...[8, 4, 4, 4, 12].map((k) => fc.array(hex, { minLength: k, maxLength: k }).map((cs) => cs.join('')))).map((parts) => parts.join('-'));
    const id = fc.oneof(fc.constantFrom(UUID, UUID.toUpperCase()), uuid, fc.constant('not-a-uuid'));
    const metric = fc.oneof(fc.constantFrom('cpu', 'cpu', 'a b', 'ü|ST[x:y]', '', 'q"uote', 'tab\there'), fc.string({ maxLength: 8 }));
    // Numbers as text, in the forms JSON allows (and a few it does not).
    const numText = fc.oneof(
      fc.double({ noNaN: true, noDefaultInfinity: true }).map((d) => JSON.stringify(d)),
      fc.integer({ min: -5, max: 1e6 }).map(String),
      fc.integer({ min: 0, max: 100 }).map((k) => String(k * 60)),
      fc.constantFrom(
        '-0',
        '0.0',
        '1e2',
        '1E+2',
        '2.50',
        '12345678901234567',
        '0.1000000000000000055511151231257827',
        '1.7976931348623157e308',
        '5e-324',
        '01',
        '1.',
        '.5',
        '-',
        '+1',
        'null',
        'true',
        '"1"',
      ),
    );
    const keys = ['metric', 'id', 'offset', 'count', 'value', 'derivative', 'counter', 'stddev', 'derivative_stddev', 'counter_stddev'];
    const ws = fc.constantFrom('', '', ' ', '\n', ' \t ');
    const wild = fc
      .record({
        present: fc.subarray(keys, { minLength: 3 }),
        id,
        metric,
        nums: fc.array(numText, { minLength: 8, maxLength: 8 }),
        extra: fc.constantFrom(
          null,
          null,
          null,
          '"x":1',
          '"parts":[60,[{"count":1,"value":1}]]',
          '"value":2',
          '"parts":[0,null]',
          '"parts":null',
          '"parts":[0,[]]',
          '"parts":[0,[ ]',
          '"parts":[0,nul]',
          '"parts":[1,null]',
          '"pbrts":null',
        ),
        w: ws,
      })
      .map(({ present, id, metric, nums, extra, w }) => {
        const fields = present.map((k) => {
          if (k === 'metric') return `"metric":${JSON.stringify(metric)}`;
          if (k === 'id') return `"id":${w}"${id}"`;
          return `"${k}"${w}:${nums[keys.indexOf(k) - 2]}`;
        });
        if (extra) fields.push(extra);
        return `{${w}${fields.join(`,${w}`)}${w}}`;
      });
    // Mostly valid records (so both paths are reached often), with a near miss now and then.
    const plausible = fc
      .record({
        optional: fc.subarray(keys.slice(5)),
        order: fc.boolean(),
        id: fc.oneof(fc.constantFrom(UUID, UUID.toUpperCase()), uuid),
        metric: fc.constantFrom('cpu', 'a b', 'ü|ST[x:y]', 'm'.repeat(4096), 'm'.repeat(4097), ''),
        offset: fc.oneof(
          fc.integer({ min: 0, max: 1e6 }).map((k) => String(k * 60)),
          fc.constantFrom('61', '-60', '6e1', '60.0'),
        ),
        count: fc.oneof(fc.integer({ min: 0, max: 100 }).map(String), fc.constantFrom('1.5', '-1', '1e0')),
        nums: fc.array(numText, { minLength: 6, maxLength: 6 }),
        w: ws,
      })
      .map(({ optional, order, id, metric, offset, count, nums, w }) => {
        const fields = [`"metric":${JSON.stringify(metric)}`, `"id":"${id}"`, `"offset":${offset}`, `"count":${count}`, `"value":${nums[0]}`];
        optional.forEach((k, i) => fields.push(`"${k}":${nums[i + 1]}`));
        if (order) fields.reverse();
        return `{${w}${fields.join(`,${w}`)}${w}}`;
      });
    const record = fc.oneof(wild, plausible, plausible);
    const body = fc.tuple(fc.array(record, { maxLength: 6 }), ws).map(([recs, w]) => `${w}[${w}${recs.join(`${w},`)}]${w}`);
    let fast = 0;
    fc.assert(
      fc.property(body, (b) => {
        if (checkAgainstOracle(b) === 'fast') fast++;
      }),
      { numRuns: 3000 },
    );
    // The generator must reach the fast path often, or this test proves nothing.
    expect(fast).toBeGreaterThan(100);

    // The client's check of one record text (tsnode write) never accepts what the validator refuses.
    const check = new PlainRecordCheck(SPAN);
    let plain = 0;
    fc.assert(
      fc.property(fc.tuple(record, ws, fc.constantFrom('', '', '', 'x', '}', '{')), ([text, w, junk]) => {
        const t = `${w}${text}${w}${junk}`;
        if (!check.isPlainValid(t)) return;
        plain++;
        const v = validateNntRecord(JSON.parse(t), { smallestSpan: SPAN });
        expect(v.ok).toBe(true);
      }),
      { numRuns: 3000 },
    );
    expect(plain).toBeGreaterThan(100);
  });
});
