import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { thousands } from '../../src/cli/render/number-format.js';

// thousands() stands in for toLocaleString('en-US') (which loads ICU at the first call): the same
// text for every count, and for anything else it hands over to toLocaleString itself.
describe('thousands', () => {
  it('groups like toLocaleString("en-US")', () => {
    for (const x of [0, -0, 1, -1, 12, 123, 999, 1000, -1000, 1234, 99_999, 100_000, 999_999, 1_000_000, -1_234_567, 2 ** 31, Number.MAX_SAFE_INTEGER, Number.MIN_SAFE_INTEGER]) {
      expect(thousands(x), String(x)).toBe(x.toLocaleString('en-US'));
    }
    expect(thousands(1_234_567)).toBe('1,234,567');
    expect(thousands(-1000)).toBe('-1,000');
  });

  it('any safe integer', () => {
    fc.assert(
      fc.property(fc.maxSafeInteger(), (x) => thousands(x) === x.toLocaleString('en-US')),
      { numRuns: 2000 },
    );
  });

  it('what is not a safe integer is left to toLocaleString', () => {
    for (const x of [1.5, -0.25, 1234.5678, 2 ** 53, 1e21, -1e21, NaN, Infinity, -Infinity]) {
      expect(thousands(x), String(x)).toBe(x.toLocaleString('en-US'));
    }
  });
});
