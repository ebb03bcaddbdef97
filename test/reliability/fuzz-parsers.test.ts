import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { exitCodeOf, UsageError } from '../../src/cli/errors.js';
import { parseNodeEntry, parseNodeList } from '../../src/cli/nodes.js';
import { parseTime } from '../../src/cli/time.js';
import { parseDuration } from '../../src/cli/values.js';
import { headersFor, parseNetworkArgs } from '../helpers/network.js';
import { parseChoiceList, parseOutput } from '../../src/cli/values.js';
import { HeaderError, parseHeaderLine } from '../../src/client/headers.js';
import { CodecError, formatTimestamp, parseSecondsList, parseSpan, parseSweepHeaders, parseTimestamp, validateNntRecord } from '../../src/protocol/index.js';
import { parsePeriods, parsePort, parseSize } from '../../src/server/config.js';
import { ConfigError } from '../../src/server/errors.js';

// Generated bad input at every parser a user's text reaches. Each must either succeed or throw its
// documented error type with a message that names the field; never a TypeError, RangeError or a
// crash. Fixed seed by default (reproducible in CI); TSNODE_FUZZ_RUNS / TSNODE_FUZZ_SEED for more.
const RUNS = Number(process.env.TSNODE_FUZZ_RUNS ?? 400);
const SEED = Number(process.env.TSNODE_FUZZ_SEED ?? 20_261_122);
const params = { numRuns: RUNS, seed: SEED };
export const PARSERS_FUZZED = 15;

const NASTY = [
  '',
  ' ',
  '\t',
  '\n',
  '\r\n',
  '\u0000',
  'NaN',
  'Infinity',
  '-Infinity',
  '-1',
  '-0',
  '0',
  '1e9',
  '1e400',
  '0x10',
  '0b1',
  '１２３',
  '٣',
  '9'.repeat(400),
  '1'.repeat(20),
  '1700000000.',
  '.5',
  '1700000000.1234',
  '2026-02-30T00:00:00Z',
  '2026-13-01',
  '2026-08-01T25:00:00Z',
  '90',
  '90 d',
  '90dd',
  'd90',
  '1.5.5s',
  '5m5s',
  'now ',
  'NOW',
  '__proto__',
  'constructor',
  'toString',
  '%00',
  '%ZZ',
  '../../etc/passwd',
  'http://',
  'https://:8112',
  'http://[::1',
  'ftp://a:1',
  'http://user:pw@h:1',
  'h:99999',
  'h:-1',
  'h:0',
  'http://h:1?x#y',
  'a b',
  '#',
  '# only',
  '\u202e',
  '\ud800',
  'x'.repeat(10_000),
  ',',
  ',,',
  'nnt,',
  'NNT',
  'nnt,text,histogram,nnt',
  '60,',
  ',60',
  '60,,300',
  '0',
  '60s',
  '60ms',
  '0ms',
];

const text = fc.oneof(
  { weight: 3, arbitrary: fc.constantFrom(...NASTY) },
  { weight: 3, arbitrary: fc.string({ maxLength: 40 }) },
  { weight: 2, arbitrary: fc.string({ unit: 'binary', maxLength: 40 }) },
  { weight: 3, arbitrary: fc.stringMatching(/^[0-9.:TZ+\- smhdwn,]{0,24}$/) },
  { weight: 2, arbitrary: fc.tuple(fc.constantFrom(...NASTY), fc.string({ maxLength: 8 }), fc.constantFrom(...NASTY)).map(([a, b, c]) => a + b + c) },
);

type ErrorClass = abstract new (...args: never[]) => Error;

/**
 * Runs `fn`; a throw must be one of `types` with a message matching `names` (the field), and no
 * longer than a quote of the input plus an explanation (several parsers quote the whole bad value).
 */
function only(fn: () => unknown, types: readonly ErrorClass[], names: RegExp, input = ''): void {
  try {
    fn();
  } catch (err) {
    if (!types.some((t) => err instanceof t)) throw new Error(`threw an undocumented ${(err as Error)?.constructor?.name}: ${(err as Error)?.message}`, { cause: err });
    const msg = (err as Error).message;
    if (!names.test(msg)) throw new Error(`message does not name the field (${names}): ${msg}`, { cause: err });
    if (msg.length > 2 * input.length + 600) throw new Error(`message is ${msg.length} characters for a ${input.length}-character input`, { cause: err });
  }
}

describe('fuzz: command-line parsers', () => {
  it('parseTime: UsageError naming the flag; results are whole milliseconds', () => {
    fc.assert(
      fc.property(text, (s) => {
        only(
          () => {
            const ms = parseTime(s, '--before', 1_780_000_000_000);
            expect(Number.isFinite(ms)).toBe(true);
          },
          [UsageError],
          /^--before: /,
          s,
        );
      }),
      params,
    );
  });

  it('parseDuration: UsageError naming the flag; results are positive', () => {
    fc.assert(
      fc.property(text, (s) => {
        only(
          () => {
            const ms = parseDuration(s, '--request-timeout');
            expect(ms).toBeGreaterThan(0);
            expect(Number.isFinite(ms)).toBe(true);
          },
          [UsageError],
          /^--request-timeout: /,
          s,
        );
      }),
      params,
    );
  });

  it('parseNodeEntry: a plain Error quoting the entry; a parsed entry parses to itself again', () => {
    fc.assert(
      fc.property(text, (s) => {
        let url: string | undefined;
        only(() => (url = parseNodeEntry(s)), [Error], /.+/);
        try {
          parseNodeEntry(s);
        } catch (err) {
          expect((err as Error).message.length).toBeLessThan(300); // long entries are shortened in messages
        }
        if (url !== undefined) expect(parseNodeEntry(url)).toBe(url);
      }),
      params,
    );
  });

  it('parseNodeList (lines and commas): UsageError naming the source and the line or item', () => {
    fc.assert(
      fc.property(fc.array(text, { maxLength: 6 }), fc.boolean(), (items, lines) => {
        const sep = lines ? 'lines' : 'commas';
        only(() => parseNodeList(items.join(lines ? '\n' : ','), '--nodes', { separator: sep }), [UsageError], /^--nodes( |:)/, items.join(','));
      }),
      params,
    );
  });

  it('--header / TSNODE_HEADERS: HeaderError or UsageError naming the source, never echoing a value', () => {
    const secretish = fc.stringMatching(/^[A-Za-z0-9]{12,20}$/).map((s) => `Zq${s}`);
    fc.assert(
      fc.property(text, text, secretish, (name, junk, secret) => {
        const line = `${name}: ${secret}${junk}`;
        only(() => parseHeaderLine(line, '--header'), [HeaderError], /^--header: /, line);
        try {
          headersFor([line], { TSNODE_HEADERS: junk });
        } catch (err) {
          // The header's own error (the reporter gives it exit 2 and how to write one) or the CLI's.
          expect(err instanceof HeaderError || err instanceof UsageError).toBe(true);
          expect(exitCodeOf(err as UsageError)).toBe(2);
          expect((err as Error).message).toMatch(/^(--header|TSNODE_HEADERS)( item \d+)?: /);
          expect((err as Error).message).not.toContain(secret);
        }
      }),
      params,
    );
  });

  it('sweep --types and --output: UsageError naming the flag', () => {
    fc.assert(
      fc.property(text, (s) => {
        only(() => parseChoiceList(s, '--types', ['nnt', 'text', 'histogram'], { ignoreCase: true }), [UsageError], /^--types: /, s);
        only(() => parseOutput(s), [UsageError], /^--output: /, s);
      }),
      params,
    );
  });

  it('serve --port, --rollups, --max-body: ConfigError naming the flag', () => {
    fc.assert(
      fc.property(text, (s) => {
        only(() => parsePort(s), [ConfigError], /^--port: /, s);
        only(() => parsePeriods(s, '--rollups', { multiplesOfSmallest: true }), [ConfigError], /^--rollups: /, s);
        only(() => parseSize(s), [ConfigError], /^--max-body: /, s);
      }),
      params,
    );
  });
});

describe('fuzz: wire codecs and record validation', () => {
  it('parseTimestamp / parseSpan / parseSecondsList: CodecError; valid timestamps round-trip exactly', () => {
    fc.assert(
      fc.property(text, (s) => {
        let ms: number | undefined;
        only(() => (ms = parseTimestamp(s)), [CodecError], /timestamp/, s);
        if (ms !== undefined) expect(formatTimestamp(ms)).toBe(s);
        only(() => parseSpan(s), [CodecError], /span/, s);
        only(() => parseSecondsList(s, 'X-Service-NNT-Delete-Rollups'), [CodecError], /^X-Service-NNT-Delete-Rollups: /, s);
      }),
      params,
    );
  });

  it('parseSweepHeaders: CodecError naming the header', () => {
    const names = fc.constantFrom(
      'x-service-delete-time',
      'x-snowth-delete-time',
      'x-service-delete-data-types',
      'x-snowth-delete-data-types',
      'x-service-nnt-delete-rollups',
      'x-service-histogram-delete-rollups',
      'x-other',
    );
    const value = fc.oneof(text, fc.array(text, { maxLength: 3 }), fc.constant(undefined));
    fc.assert(
      fc.property(fc.dictionary(names, value, { maxKeys: 5 }), (headers) => {
        only(() => parseSweepHeaders(headers), [CodecError], /X-(Service|Snowth)-/i, JSON.stringify(headers));
      }),
      params,
    );
  });

  it('validateNntRecord never throws; a rejection names a field and a reason', () => {
    const good = {
      metric: 'cpu',
      id: '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f',
      offset: 1_700_000_040,
      count: 1,
      value: 1.5,
      parts: [60, [{ count: 1, value: 1.5 }]],
    };
    const anyValue = fc.oneof(fc.anything(), fc.constantFrom(NaN, Infinity, -1, 1.5, 2 ** 53, -0, '', null, [], {}), text);
    const mutated = fc
      .record({
        key: fc.constantFrom(...Object.keys(good), 'derivative', 'stddev', '__proto__', 'extra'),
        v: anyValue,
        drop: fc.boolean(),
      })
      .map(({ key, v, drop }) => {
        const o: Record<string, unknown> = JSON.parse(JSON.stringify(good));
        if (drop) delete o[key];
        else Object.defineProperty(o, key, { value: v, enumerable: true, configurable: true, writable: true });
        return o;
      });
    fc.assert(
      fc.property(fc.oneof(mutated, fc.anything()), fc.constantFrom(undefined, 60, 1), (input, smallestSpan) => {
        const r = validateNntRecord(input, smallestSpan === undefined ? {} : { smallestSpan });
        if (!r.ok) {
          expect(r.issue.field).toMatch(/^(\(record\)|metric|id|offset|count|value|derivative|counter|stddev|derivative_stddev|counter_stddev|parts.*)$/);
          expect(r.issue.reason.length).toBeGreaterThan(0);
        } else {
          expect(Number.isSafeInteger(r.record.offset)).toBe(true);
          expect(Number.isFinite(r.record.value)).toBe(true);
        }
      }),
      params,
    );
  });
});

describe('regressions the fuzzer found', () => {
  it('a duration too large for a number is a usage error, not Infinity', () => {
    expect(() => parseDuration(`${'9'.repeat(400)}s`, '--request-timeout')).toThrow(/^--request-timeout: .* is too long/);
    expect(() => parseTime(`${'9'.repeat(400)}d`, '--before', 0)).toThrow(UsageError);
  });

  it('a network timeout longer than the timers can hold is refused (it would fire at once)', () => {
    expect(parseNetworkArgs(['--deadline', '24d']).deadline).toBe(24 * 86_400_000);
    expect(() => parseNetworkArgs(['--deadline', '25d'])).toThrow(/^--deadline: "25d" is longer than 24d/);
  });

  it('a node entry with a backslash is refused (the URL parser would read a port out of the path)', () => {
    expect(() => parseNodeEntry('0b1\\h:99999')).toThrow(/contains a backslash/);
    expect(parseNodeEntry('node1:8112')).toBe('http://node1:8112');
  });

  it('a huge node entry is shortened in its message', () => {
    expect(() => parseNodeEntry(`${'x'.repeat(10_000)} y`)).toThrow(/^"x{77}\.\.\."/);
  });
});
