import { describe, expect, it } from 'vitest';
import { parseTime } from '../../src/cli/time.js';
import { parseDuration, parseSize } from '../../src/cli/values.js';
import { readDuration, readSize } from '../../src/protocol/units.js';
import { checkAge } from '../../src/retention/age.js';
import { parseAgeSeconds, parseSize as parseNodeSize } from '../../src/server/config.js';

// One grammar (protocol/units.ts) for flags, times, policies and the node's config: the same text
// means the same length everywhere. Before it, `--before 1y` was refused where a policy's `1y` worked.
const NOW = Date.UTC(2026, 10, 26);

describe('one duration grammar', () => {
  it.each([
    ['1y', 31_536_000],
    ['90d', 7_776_000],
    ['12h', 43_200],
    ['30m', 1_800],
    ['1w', 604_800],
    ['1.5d', 129_600],
    ['0.1h', 360],
    ['52w', 31_449_600],
  ])('%s is %d s for a flag, --before, a policy age and the node config', (text, seconds) => {
    expect(readDuration(text)).toEqual({ ok: true, value: seconds * 1000 });
    expect(parseDuration(text, '--deadline', { max: Number.MAX_SAFE_INTEGER })).toBe(seconds * 1000);
    expect(parseTime(text, '--before', NOW)).toBe(NOW - seconds * 1000);
    expect(checkAge(text)).toEqual({ ok: true, seconds });
    expect(parseAgeSeconds(text, '--retention nnt:60')).toBe(seconds);
  });

  it.each(['1Y', '3mo', '5 days', '-1d', '1d2h', ''])('%j is refused everywhere', (text) => {
    expect(readDuration(text).ok).toBe(false);
    expect(() => parseDuration(text, '--deadline')).toThrow();
    expect(() => parseTime(text, '--before', NOW)).toThrow();
    expect(checkAge(text).ok).toBe(false);
    expect(() => parseAgeSeconds(text, '--retention nnt:60')).toThrow();
  });

  it('explains upper-case units and months', () => {
    expect(readDuration('1Y')).toMatchObject({ ok: false, hint: 'units are lower case: 1y' });
    expect(readDuration('3mo')).toMatchObject({ ok: false, hint: 'months differ in length: use days, e.g. 30d' });
  });

  it('milliseconds are a duration but never an age (cut-offs are whole seconds)', () => {
    expect(parseDuration('500ms', '--pace')).toBe(500);
    expect(checkAge('500ms')).toMatchObject({ ok: false, problem: '"500ms" is in milliseconds' });
    expect(() => parseAgeSeconds('1500ms', '--raw-shard')).toThrow(/whole number of seconds/);
  });
});

describe('one size grammar', () => {
  it.each([
    ['4m', 4 * 1024 ** 2],
    ['4MiB', 4 * 1024 ** 2],
    ['4MB', 4_000_000],
    ['512k', 512 * 1024],
    ['65536', 65_536],
  ])('%s is %d bytes for a flag and for the node', (text, bytes) => {
    expect(readSize(text)).toEqual({ ok: true, value: bytes });
    expect(parseSize(text, '--batch-bytes')).toBe(bytes);
    expect(parseNodeSize(text, '--max-body')).toBe(bytes);
  });
});
