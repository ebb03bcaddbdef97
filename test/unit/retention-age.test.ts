import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { AGE_UNITS, checkAge, formatAge, parseAge, RetentionError } from '../../src/retention/index.js';

describe('retention ages', () => {
  it.each([
    ['30s', 30],
    ['1m', 60],
    ['12h', 43_200],
    ['90d', 7_776_000],
    ['1w', 604_800],
    ['1y', 31_536_000],
    ['2y', 63_072_000],
    ['1.5d', 129_600],
    // exact decimal arithmetic: 0.1 * 3600 is 360.00000000000006 in floating point
    ['0.1h', 360],
    ['0.5m', 30],
    [' 30d ', 2_592_000],
  ])('%s is %i seconds', (text, seconds) => {
    expect(parseAge(text, 'nnt.60')).toBe(seconds);
  });

  it.each([
    ['', 'no age given'],
    ['90', '"90" has no unit'],
    ['0d', '"0d" is zero'],
    ['0.0s', '"0.0s" is zero'],
    ['-5d', '"-5d" is negative'],
    ['500ms', '"500ms" is in milliseconds'],
    ['0.5s', '"0.5s" is not a whole number of seconds'],
    ['1mo', '"1mo" has an unknown unit "mo"'],
    ['30D', '"30D" has an unknown unit "D"'],
    ['30 d', '"30 d" is not an age'],
    ['d30', '"d30" is not an age'],
    ['1e3d', '"1e3d" is not an age'],
    ['10001y', '"10001y" is longer than 10000y'],
    ['99999999999999999999999999999999y', 'is too long'],
  ])('%j is refused: %s', (text, problem) => {
    const r = checkAge(text);
    expect(r.ok).toBe(false);
    if (!r.ok) expect(r.problem).toContain(problem);
  });

  it('hints at the fix where there is an obvious one', () => {
    expect(checkAge('1mo')).toMatchObject({ hint: 'months differ in length: use days, e.g. 30d' });
    expect(checkAge('30D')).toMatchObject({ hint: 'units are lower case: 30d' });
    expect(checkAge('90')).toMatchObject({ hint: 'add one, e.g. 90d for days' });
  });

  it('parseAge throws a RetentionError naming the field, the value and what is expected', () => {
    const err = (() => {
      try {
        parseAge('3x', '--rule nnt:60=3x');
      } catch (e) {
        return e;
      }
      return undefined;
    })();
    expect(err).toBeInstanceOf(RetentionError);
    expect(err).toMatchObject({ code: 'invalid_age' });
    expect((err as Error).message).toBe('--rule nnt:60=3x: "3x" has an unknown unit "x" (expected a number and a unit: s, m, h, d, w or y (365 days), e.g. 30d, 12h, 1y)');
  });

  it('formatAge gives the shortest exact spelling and parses back to the same seconds', () => {
    expect(formatAge(2_592_000)).toBe('30d');
    expect(formatAge(31_536_000)).toBe('1y');
    expect(formatAge(604_800)).toBe('1w');
    expect(formatAge(90)).toBe('90s');
    fc.assert(
      fc.property(fc.integer({ min: 1, max: 10_000 * 31_536_000 }), (s) => {
        expect(parseAge(formatAge(s), 'x')).toBe(s);
      }),
    );
  });

  it('every unit times a whole count is that many seconds', () => {
    fc.assert(
      fc.property(fc.constantFrom(...Object.keys(AGE_UNITS)), fc.integer({ min: 1, max: 5000 }), (unit, n) => {
        expect(parseAge(`${n}${unit}`, 'x')).toBe(n * AGE_UNITS[unit]!);
      }),
    );
  });
});
