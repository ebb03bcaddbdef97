import { describe, expect, it } from 'vitest';
import fc from 'fast-check';
import { CodecError, formatSpan, formatTimestamp, parseSpan, parseTimestamp } from '../../src/protocol/index.js';

describe('timestamp codec', () => {
  it('formats like %lu.%03lu', () => {
    expect(formatTimestamp(1529509020000)).toBe('1529509020.000');
    expect(formatTimestamp(1408724400500)).toBe('1408724400.500');
    expect(formatTimestamp(7)).toBe('0.007');
  });

  it.each(['123', '123.4', '123.45', '123.4567', '-1.000', ' 1.000', '1.000 ', '1e3.000', '.000', '1,000.000'])('rejects %j', (text) => {
    expect(() => parseTimestamp(text)).toThrow(CodecError);
  });

  it('with bareSeconds (a node started with --lenient-timestamps) reads a bare integer as .000, and nothing else more', () => {
    expect(parseTimestamp('1529509020', { bareSeconds: true })).toBe(1_529_509_020_000);
    expect(parseTimestamp('0', { bareSeconds: true })).toBe(0);
    expect(parseTimestamp('1529509020.120', { bareSeconds: true })).toBe(1_529_509_020_120);
    for (const text of ['123.4', '123.45', '123.4567', '123.', '-1', ' 1', '1 ', '1e3', '0x10', '', '1234567890123456']) {
      expect(() => parseTimestamp(text, { bareSeconds: true }), text).toThrow(CodecError);
    }
  });

  it('round-trips every millisecond instant', () => {
    fc.assert(
      fc.property(fc.integer({ min: 0, max: 4_102_444_800_000 }), (ms) => {
        const text = formatTimestamp(ms);
        expect(text).toMatch(/^\d+\.\d{3}$/);
        expect(parseTimestamp(text)).toBe(ms);
      }),
    );
  });
});

describe('span codec', () => {
  it('parses seconds and milliseconds', () => {
    expect(parseSpan('60s')).toBe(60_000);
    expect(parseSpan('500ms')).toBe(500);
  });
  it.each(['60', '0s', '0ms', '1.5s', '60 s', 's', '-60s', '60m'])('rejects %j', (text) => {
    expect(() => parseSpan(text)).toThrow(CodecError);
  });
  it('formats whole seconds with s and the rest with ms', () => {
    expect(formatSpan(300_000)).toBe('300s');
    expect(formatSpan(1500)).toBe('1500ms');
  });
});
