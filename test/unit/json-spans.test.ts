import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { arrayElementSpans, arrayInner } from '../../src/server/json-spans.js';

const slices = (body: Buffer, spans: Uint32Array): string[] => Array.from({ length: spans.length / 2 }, (_, i) => body.subarray(spans[2 * i], spans[2 * i + 1]).toString());

describe('arrayElementSpans: where the elements of a JSON array lie in its bytes', () => {
  it('skips strings whole: brackets, braces, commas and escaped quotes inside them do not count', () => {
    const elements = ['{"a":"],[}{,\\"","b":[1,{"c":"\\\\"}]}', '"x\\\\\\"]"', '[[],{}]', '-1.5e3', 'null', '{"é":"ü,"}'];
    const body = Buffer.from(` \n[ ${elements.join(' ,\n\t')} ]\n`);
    expect(slices(body, arrayElementSpans(body, elements.length)!)).toEqual(elements);
    expect(arrayInner(body).toString()).toBe(elements.join(' ,\n\t'));
  });

  it('an empty array has no elements; a count that does not match finds none', () => {
    expect(arrayElementSpans(Buffer.from(' [ ] '), 0)).toEqual(new Uint32Array(0));
    expect(arrayElementSpans(Buffer.from('[1,2]'), 3)).toBeNull();
    expect(arrayElementSpans(Buffer.from('[1,2,3]'), 2)).toBeNull();
    expect(arrayElementSpans(Buffer.from('{"a":1}'), 1)).toBeNull();
  });

  it('finds the end of long strings too, escapes anywhere in them (past the bytes looked at one by one)', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.array(fc.constantFrom('a', '\\', '"', ',', ']', 'é'), { minLength: 30, maxLength: 200, size: 'max' }).map((cs) => cs.join('')),
          { minLength: 1, maxLength: 8 },
        ),
        (strings) => {
          const body = Buffer.from(JSON.stringify(strings.map((histogram) => ({ histogram, period: 60 }))));
          expect(slices(body, arrayElementSpans(body, strings.length)!).map((x) => (JSON.parse(x) as { histogram: string }).histogram)).toEqual(strings);
        },
      ),
      { numRuns: 300 },
    );
  });

  it('each slice parses to its element, whatever the values and the whitespace', () => {
    fc.assert(
      fc.property(fc.array(fc.jsonValue(), { maxLength: 20 }), fc.constantFrom('', ' ', '\n  ', '\t'), (values, ws) => {
        const body = Buffer.from(`${ws}[${ws}${values.map((v) => JSON.stringify(v, null, ws === '' ? undefined : 1)).join(`${ws},${ws}`)}${ws}]${ws}`);
        const parsed = JSON.parse(body.toString()) as unknown[];
        const spans = arrayElementSpans(body, parsed.length)!;
        expect(slices(body, spans).map((s) => JSON.parse(s) as unknown)).toEqual(parsed);
        expect(JSON.parse(`[${arrayInner(body).toString()}]`)).toEqual(parsed);
      }),
      { numRuns: 300 },
    );
  });
});
