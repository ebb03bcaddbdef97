import { Command } from 'commander';
import { describe, expect, it } from 'vitest';
import { InvalidValueError, TsnodeError, UsageError } from '../../src/cli/errors.js';
import { addFlags, flag, type FlagValues } from '../../src/cli/flags.js';
import { didYouMean, editDistance, suggest } from '../../src/cli/suggest.js';
import {
  formatDuration,
  formatSize,
  parseChoice,
  parseChoiceList,
  parseCount,
  parseDuration,
  parseNumber,
  parseOutput,
  parseSize,
  parseSpan,
  parseSpanList,
} from '../../src/cli/values.js';

/** The error a parser throws, for asserting its message and hint. */
function failure(fn: () => unknown): InvalidValueError {
  try {
    fn();
  } catch (err) {
    expect(err).toBeInstanceOf(InvalidValueError);
    return err as InvalidValueError;
  }
  throw new Error('expected a failure');
}

describe('errors', () => {
  it('UsageError keeps its constructor and is a TsnodeError with a stable code and exit 2', () => {
    const e = new UsageError('--x: bad', 'use y');
    expect(e).toBeInstanceOf(TsnodeError);
    expect(e).toBeInstanceOf(Error);
    expect([e.code, e.exitCode, e.hint, e.message, e.name]).toEqual(['usage', 2, 'use y', '--x: bad', 'UsageError']);
    expect(new UsageError('m', undefined, 3).exitCode).toBe(3);
    const v = new InvalidValueError('--timeout', '6x', '"6x" is not a duration');
    expect(v).toBeInstanceOf(UsageError);
    expect([v.code, v.field, v.value, v.message]).toEqual(['invalid_value', '--timeout', '6x', '--timeout: "6x" is not a duration']);
  });
});

describe('durations', () => {
  it.each([
    ['500ms', 500],
    ['2s', 2000],
    ['1.5m', 90_000],
    ['6h', 21_600_000],
    ['1d', 86_400_000],
    ['1w', 604_800_000],
    [' 30s ', 30_000],
  ])('%s = %d ms', (text, ms) => expect(parseDuration(text, '--t')).toBe(ms));

  it('refuses a bare number unless the flag names its unit', () => {
    const e = failure(() => parseDuration('30', '--timeout'));
    expect(e.message).toBe('--timeout: "30" is not a duration (a bare number has no unit: 30s or 30ms?)');
    expect(e.hint).toMatch(/500ms, 2s/);
    expect(parseDuration('250', '--pace', { bareUnit: 'ms', min: 0 })).toBe(250);
    expect(parseDuration('0', '--pace', { bareUnit: 'ms', min: 0 })).toBe(0);
  });

  it('checks bounds and overflow', () => {
    expect(failure(() => parseDuration('0s', '--t')).message).toBe('--t: "0s" must be longer than zero');
    expect(failure(() => parseDuration('30d', '--t', { max: 2 ** 31 - 1 })).message).toMatch(/is longer than/);
    expect(failure(() => parseDuration(`${'9'.repeat(400)}s`, '--t')).message).toMatch(/too long/);
    expect(failure(() => parseDuration('5x', '--t')).message).toBe('--t: "5x" has an unknown unit "x"');
    expect(failure(() => parseDuration('5 days', '--t')).message).toBe('--t: "5 days" is not a duration');
  });

  it('formats back to the largest whole unit', () => {
    expect([formatDuration(90_000), formatDuration(3_600_000), formatDuration(1500), formatDuration(86_400_000 * 14)]).toEqual(['90s', '1h', '1500ms', '2w']);
  });
});

describe('byte sizes: one rule everywhere', () => {
  it.each([
    ['65536', 65_536],
    ['1B', 1],
    ['4m', 4 * 1024 ** 2],
    ['4M', 4 * 1024 ** 2],
    ['4MiB', 4 * 1024 ** 2],
    ['4mib', 4 * 1024 ** 2],
    ['4MB', 4_000_000],
    ['512KiB', 512 * 1024],
    ['512k', 512 * 1024],
    ['10KB', 10_000],
    ['1.5GiB', 1.5 * 1024 ** 3],
    ['1G', 1024 ** 3],
    ['2GB', 2e9],
    ['1TiB', 1024 ** 4],
    ['64 MiB', 64 * 1024 ** 2],
  ])('%s = %d bytes', (text, bytes) => expect(parseSize(text, '--s')).toBe(bytes));

  it('refuses what is not a size, zero, and out-of-bounds sizes', () => {
    expect(failure(() => parseSize('4 megs', '--batch-bytes')).message).toBe('--batch-bytes: "4 megs" is not a size');
    expect(failure(() => parseSize('4 megs', '--batch-bytes')).hint).toMatch(/binary.*decimal/);
    expect(failure(() => parseSize('0', '--s')).message).toMatch(/smaller than 1B/);
    expect(failure(() => parseSize('-1', '--s')).message).toMatch(/not a size/);
    expect(failure(() => parseSize('2GiB', '--s', { max: 1024 ** 3 })).message).toBe('--s: "2GiB" is larger than 1GiB');
  });

  it('formats sizes the way they are typed', () => {
    expect([formatSize(4 * 1024 ** 2), formatSize(1500), formatSize(1024), formatSize(1.5 * 1024 ** 3)]).toEqual(['4MiB', '1.5KiB', '1KiB', '1.5GiB']);
  });
});

describe('counts and numbers', () => {
  it('takes whole numbers within bounds only', () => {
    expect(parseCount('32', '--concurrency', { min: 1 })).toBe(32);
    expect(parseCount(' 0 ', '--retries')).toBe(0);
    for (const bad of ['1.5', '-1', '1e3', '+3', '', 'three', '0x10']) expect(failure(() => parseCount(bad, '--n')).message).toMatch(/is not a whole number/);
    const e = failure(() => parseCount('101', '--retries', { min: 0, max: 100 }));
    expect([e.message, e.hint]).toEqual(['--retries: 101 is out of range', 'use a whole number from 0 to 100']);
    expect(failure(() => parseCount('0', '--batch-size', { min: 1 })).hint).toBe('use a whole number >= 1');
  });

  it('takes finite decimals within bounds', () => {
    expect(parseNumber('1e-9', '--tolerance', { min: 0 })).toBe(1e-9);
    expect(parseNumber('.5', '--x')).toBe(0.5);
    expect(failure(() => parseNumber('0', '--rate', { min: 0, exclusive: true })).message).toBe('--rate: 0 is out of range');
    for (const bad of ['NaN', 'Infinity', '1/2', '', '1e999']) expect(failure(() => parseNumber(bad, '--x')).message).toMatch(/is not a number/);
  });
});

describe('spans', () => {
  it('are whole seconds, with optional units', () => {
    expect([parseSpan('60', '--s'), parseSpan('60s', '--s'), parseSpan('5m', '--s'), parseSpan('1h', '--s'), parseSpan('1d', '--s')]).toEqual([60, 60, 300, 3600, 86_400]);
    expect(failure(() => parseSpan('0', '--smallest-span')).message).toBe('--smallest-span: "0" is not a span');
    expect(failure(() => parseSpan('1.5', '--s')).message).toMatch(/not a span/);
  });

  it('lists are sorted and deduplicated; an empty item is an error naming it', () => {
    expect(parseSpanList('300,60,300, 1800', '--nnt-rollups')).toEqual([60, 300, 1800]);
    expect(failure(() => parseSpanList('60,,300', '--nnt-rollups')).message).toBe('--nnt-rollups: item 2 of "60,,300" is empty');
  });
});

describe('choices', () => {
  it('suggest the closest value and list the allowed ones', () => {
    const e = failure(() => parseChoice('jsno', '--output', ['table', 'json', 'csv']));
    expect([e.message, e.hint]).toEqual(['--output: "jsno" is not one of table, json, csv', 'did you mean json?']);
    expect(failure(() => parseChoice('yaml', '--output', ['table', 'json', 'csv'])).hint).toBe('use one of: table, json, csv');
    expect(parseChoice('x-snowth', '--header-prefix', ['X-Service', 'X-Snowth'], { ignoreCase: true })).toBe('X-Snowth');
    expect(() => parseChoice('x-snowth', '--header-prefix', ['X-Service', 'X-Snowth'])).toThrow(InvalidValueError);
  });

  it('comma lists keep order, drop duplicates and name the bad item', () => {
    expect(parseChoiceList('histogram,nnt,histogram', '--types', ['nnt', 'text', 'histogram'])).toEqual(['histogram', 'nnt']);
    const e = failure(() => parseChoiceList('nnt,txt', '--types', ['nnt', 'text', 'histogram']));
    expect([e.message, e.hint]).toEqual(['--types: "txt" is not one of nnt, text, histogram', 'did you mean text?']);
    expect(failure(() => parseChoiceList('nnt,', '--types', ['nnt'])).message).toBe('--types: item 2 of "nnt," is empty');
  });

  it('output formats are table, json, csv unless a command says otherwise', () => {
    expect(parseOutput('csv')).toBe('csv');
    expect(parseOutput('chart', '-o', ['table', 'json', 'csv', 'chart'])).toBe('chart');
    expect(failure(() => parseOutput('text')).message).toBe('--output: "text" is not one of table, json, csv');
  });
});

describe('did you mean', () => {
  it('measures transpositions as one edit', () => {
    expect(editDistance('sewep', 'sweep')).toBe(1);
    expect(editDistance('', 'abc')).toBe(3);
  });

  it('suggests close words and prefixes, nothing for far ones', () => {
    expect(suggest('--befor', ['--before', '--types', '--yes'])).toEqual(['--before']);
    expect(suggest('--dry', ['--dry-run', '--yes'])).toEqual(['--dry-run']);
    expect(suggest('stauts', ['status', 'sweep', 'serve'])).toEqual(['status']);
    expect(didYouMean('zzzzzz', ['status', 'sweep'])).toBeUndefined();
    expect(didYouMean('tabel', ['table', 'json'])).toBe('did you mean table?');
  });
});

describe('typed flag tables', () => {
  const table = {
    timeout: flag.duration('--timeout <duration>', 'wait', { default: '6h' }),
    batchBytes: flag.size('--batch-bytes <size>', 'batch', { default: '4MiB' }),
    retries: flag.count('--retries <n>', 'retries', { default: '3', max: 100 }),
    types: flag.choiceList('--types <list>', 'types', ['nnt', 'text', 'histogram'] as const, { default: 'nnt' }),
    engine: flag.choice('--engine <engine>', 'engine', ['dispatch', 'nnt', 'recalc'] as const),
    output: flag.output(),
    header: flag.repeatable('--header <h>', 'headers'),
    dryRun: flag.boolean('--dry-run', 'dry'),
    wait: flag.boolean('--no-wait', 'no wait'),
  };
  type Parsed = FlagValues<typeof table>;

  function parse(argv: string[]): Parsed {
    const cmd = new Command('t').exitOverride().configureOutput({ outputError: () => {} });
    addFlags(cmd, table);
    cmd.parse(argv, { from: 'user' });
    return cmd.opts<Parsed>();
  }

  it('parses values while reading the command line, defaults by the same rule', () => {
    const defaults = parse([]);
    expect(defaults).toEqual({ timeout: 21_600_000, batchBytes: 4 * 1024 ** 2, retries: 3, types: ['nnt'], output: 'table', header: [], dryRun: false, wait: true });
    const given = parse([
      '--timeout',
      '90s',
      '--batch-bytes',
      '4m',
      '--types',
      'nnt,histogram',
      '--engine',
      'recalc',
      '-o',
      'json',
      '--header',
      'A: 1',
      '--header',
      'B: 2',
      '--dry-run',
      '--no-wait',
    ]);
    expect(given).toEqual({
      timeout: 90_000,
      batchBytes: 4 * 1024 ** 2,
      retries: 3,
      types: ['nnt', 'histogram'],
      engine: 'recalc',
      output: 'json',
      header: ['A: 1', 'B: 2'],
      dryRun: true,
      wait: false,
    });
  });

  it('a bad value is an InvalidValueError naming the flag (exit 2), not a commander message', () => {
    expect(() => parse(['--retries', '500'])).toThrow(/--retries: 500 is out of range/);
    expect(() => parse(['--engine', 'recal'])).toThrow(/--engine: "recal" is not one of dispatch, nnt, recalc/);
    expect(() => parse(['-o', 'yaml'])).toThrow(InvalidValueError);
  });

  it('refuses a table whose key is not where commander stores the value', () => {
    const cmd = new Command('t');
    expect(() => addFlags(cmd, { dry: flag.boolean('--dry-run', 'x') })).toThrow(/declared under "dry" but commander stores it as "dryRun"/);
  });

  it('shows the default as typed in --help', () => {
    const cmd = new Command('t');
    addFlags(cmd, table);
    expect(cmd.helpInformation()).toMatch(/--timeout <duration>\s+wait \(default: 6h\)/);
    expect(cmd.helpInformation()).toMatch(/--batch-bytes <size>\s+batch \(default: 4MiB\)/);
  });
});
