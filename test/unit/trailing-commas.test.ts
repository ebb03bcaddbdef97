import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { parseJsonAllowingTrailingCommas, withoutTrailingCommas } from '../../src/protocol/index.js';

/** JSON text of `v` with a comma after the last member of every non-empty object and array. */
function withTrailingCommas(v: unknown, ws: string): string {
  if (Array.isArray(v)) return v.length === 0 ? '[]' : `[${v.map((x) => withTrailingCommas(x, ws)).join(',')},${ws}]`;
  if (v !== null && typeof v === 'object') {
    const entries = Object.entries(v);
    return entries.length === 0 ? '{}' : `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${withTrailingCommas(x, ws)}`).join(',')},${ws}}`;
  }
  return JSON.stringify(v);
}

describe('parseJsonAllowingTrailingCommas', () => {
  it('reads the store\'s documented status (a comma after the last member of "text")', () => {
    expect(parseJsonAllowingTrailingCommas('{"text":{"running":"true","timestamp":"1443110236",},"nnt":[1,2,]}')).toEqual({
      text: { running: 'true', timestamp: '1443110236' },
      nnt: [1, 2],
    });
  });

  it('is JSON.parse on JSON, and reads any JSON value written with trailing commas as that value', () => {
    fc.assert(
      fc.property(fc.jsonValue({ maxDepth: 4 }), fc.constantFrom('', ' ', '\n  '), (v, ws) => {
        const plain = JSON.stringify(v);
        expect(parseJsonAllowingTrailingCommas(plain)).toEqual(JSON.parse(plain));
        expect(parseJsonAllowingTrailingCommas(withTrailingCommas(v, ws))).toEqual(JSON.parse(plain));
      }),
      { numRuns: 1000 },
    );
  });

  it.each([
    ['a comma with no value before it', '{,}'],
    ['an empty array with a comma', '[,]'],
    ['two commas', '[1,,]'],
    ['a leading comma', '[,1]'],
    ['a missing value', '{"a":,}'],
    ['a comma after the key', '{"a",}'],
    ['text after the value', '{"a":1,} x'],
  ])('loosens nothing else: %s still fails', (_what, text) => {
    expect(() => parseJsonAllowingTrailingCommas(text)).toThrow(SyntaxError);
  });

  it('leaves commas inside strings alone', () => {
    expect(withoutTrailingCommas('{"a":"x,}"}')).toBeUndefined();
    expect(parseJsonAllowingTrailingCommas('{"a":"x,}\\",]",}')).toEqual({ a: 'x,}",]' });
  });
});
