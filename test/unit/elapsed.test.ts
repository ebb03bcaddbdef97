import { describe, expect, it } from 'vitest';
import { formatElapsed } from '../../src/cli/render/elapsed.js';

describe('formatElapsed: the one elapsed-time format', () => {
  it('whole seconds, minutes and hours', () => {
    expect(formatElapsed(0)).toBe('0s');
    expect(formatElapsed(42.4)).toBe('42s');
    expect(formatElapsed(185)).toBe('3m05s');
    expect(formatElapsed(7620)).toBe('2h07m');
  });

  it('tenths below the threshold asked for', () => {
    expect(formatElapsed(8.46, { tenthsBelow: 10 })).toBe('8.5s');
    expect(formatElapsed(12.3, { tenthsBelow: 10 })).toBe('12s');
    expect(formatElapsed(59.2, { tenthsBelow: 60 })).toBe('59.2s');
  });

  it('rounds before splitting: a minute never shows 60 seconds', () => {
    // The per-command copies this replaced printed 1m60s and 60s here.
    expect(formatElapsed(119.7, { tenthsBelow: 60 })).toBe('2m00s');
    expect(formatElapsed(59.6)).toBe('1m00s');
  });

  it('unknown or negative', () => {
    expect(formatElapsed(Number.POSITIVE_INFINITY)).toBe('?');
    expect(formatElapsed(Number.NaN)).toBe('?');
    expect(formatElapsed(-3)).toBe('0s');
  });
});
