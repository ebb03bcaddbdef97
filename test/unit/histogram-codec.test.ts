import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { decodeHistogram, encodeHistogram, histogramBinName } from '../../src/protocol/index.js';

describe('the store histogram encoding', () => {
  it('names bins as the store prints them (libcircllhist hist_bucket_to_string)', () => {
    expect(histogramBinName(0, 0)).toBe('0');
    expect(histogramBinName(10, 0)).toBe('+10e-001'); // 1
    expect(histogramBinName(12, 1)).toBe('+12e+000'); // 12
    expect(histogramBinName(-23, -2)).toBe('-23e-003'); // -0.23
    expect(histogramBinName(23, 3)).toBe('+23e+002'); // 2300
    expect(histogramBinName(23, -3)).toBe('+23e-004'); // 0.0023, as in gosnowth's histogram_test.go
  });

  it('decodes the documented empty histogram and a hand-built one (count bytes least significant first)', () => {
    expect(decodeHistogram('AAA=')).toEqual({ ok: true, bins: {} });
    // 2 bins: (23, -3) count 1 in one byte; (85, -3) count 258 in two bytes 0x02 0x01.
    const bytes = Buffer.from([0x00, 0x02, 23, 0xfd, 0x00, 0x01, 85, 0xfd, 0x01, 0x02, 0x01]);
    expect(decodeHistogram(bytes.toString('base64'))).toEqual({ ok: true, bins: { '+23e-004': 1, '+85e-004': 258 } });
  });

  it('adds up a bin listed twice and drops bins of count 0', () => {
    const bytes = Buffer.from([0x00, 0x03, 23, 0xfd, 0x00, 0x01, 23, 0xfd, 0x00, 0x02, 50, 0x00, 0x00, 0x00]);
    expect(decodeHistogram(bytes.toString('base64'))).toEqual({ ok: true, bins: { '+23e-004': 3 } });
  });

  it.each([
    ['AAEC', 'ends inside bin 1 of 1'],
    ['AAAA', 'has 1 byte(s) after its 0 bin(s)'],
    ['AA==', 'holds 1 byte(s)'],
    ['not base64!', 'is not base64'],
    [Buffer.from([0x00, 0x01, 5, 0x00, 0x00, 0x01]).toString('base64'), 'bin 1 has value 5'],
    [Buffer.from([0x00, 0x01, 10, 0x00, 0x08, 1, 1, 1, 1, 1, 1, 1, 1, 1]).toString('base64'), '9-byte count'],
  ])('refuses %s: %s', (b64, reason) => {
    const d = decodeHistogram(b64);
    expect(d.ok).toBe(false);
    expect(d.ok ? '' : d.reason).toContain(reason);
  });

  it('encode then decode gives the bins back', () => {
    const bin = fc.tuple(fc.integer({ min: 10, max: 99 }), fc.boolean(), fc.integer({ min: -126, max: 127 })).map(([v, neg, exp]) => histogramBinName(neg ? -v : v, exp));
    fc.assert(
      fc.property(fc.dictionary(fc.oneof(bin, fc.constant('0')), fc.integer({ min: 1, max: Number.MAX_SAFE_INTEGER })), (bins) => {
        expect(decodeHistogram(encodeHistogram(bins))).toEqual({ ok: true, bins });
      }),
    );
  });

  it('refuses to encode a bin name it cannot place', () => {
    expect(() => encodeHistogram({ '1': 1 })).toThrow(/expected "0" or a name like/);
    expect(() => encodeHistogram({ '+05e+000': 1 })).toThrow(/outside the encoding's range/);
  });
});
