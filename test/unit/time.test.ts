import { describe, expect, it } from 'vitest';
import { planSweep, type SweepFlags } from '../../src/cli/commands/sweep/plan.js';
import { UsageError } from '../../src/cli/errors.js';
import { describeTime, isoTime, parseTime } from '../../src/cli/time.js';
import { parseDuration } from '../../src/cli/values.js';
import { sweepFlagsWith } from '../helpers/sweep-flags.js';

const NOW = Date.UTC(2026, 7, 24, 12, 0, 0); // 2026-08-24T12:00:00Z

describe('parseTime', () => {
  it.each([
    ['1787529600', 1_787_529_600_000],
    ['1787529600.250', 1_787_529_600_250],
    ['1787529600.5', 1_787_529_600_500],
    ['2026-08-24T00:00:00Z', 1_787_529_600_000],
    ['2026-08-24T02:00:00+02:00', 1_787_529_600_000],
    ['2026-08-24T00:00:00.125Z', 1_787_529_600_125],
    ['2026-08-24', 1_787_529_600_000],
    ['2024-02-29', Date.UTC(2024, 1, 29)],
    ['2000-02-29T23:59:59Z', Date.UTC(2000, 1, 29, 23, 59, 59)],
    ['1970-01-01T00:00:00Z', 0],
    ['2026-08-24T00:00:00.123456Z', 1_787_529_600_123],
    ['2026-08-24T02:00:00+0200', 1_787_529_600_000],
    ['2026-08-23T22:00:00-02:00', 1_787_529_600_000],
    ['90d', NOW - 90 * 86_400_000],
    ['12h', NOW - 12 * 3_600_000],
    ['30m', NOW - 30 * 60_000],
    ['1w', NOW - 7 * 86_400_000],
    ['now', NOW],
  ])('%s', (text, ms) => {
    expect(parseTime(text, '--before', NOW)).toBe(ms);
  });

  it.each([
    ['1787529600000', /looks like milliseconds/],
    ['2026-08-24T00:00:00', /has no time zone/],
    ['2026-13-45T00:00:00Z', /not a valid date: month 13 does not exist/],
    // Real calendar dates only: no rolling over into the next month or day (Date.parse would).
    ['2026-02-31', /"2026-02-31" is not a valid date: 2026-02 has no day 31/],
    ['2026-02-29T00:00:00Z', /2026-02 has no day 29/],
    ['2026-04-31T00:00:00Z', /2026-04 has no day 31/],
    ['2026-08-24T24:00:00Z', /hour 24 does not exist/],
    ['2026-08-24T12:60:00Z', /minute 60 does not exist/],
    ['2026-08-24T12:00:60Z', /second 60 does not exist/],
    ['2026-08-24T12:00:00+24:00', /offset \+24:00 does not exist/],
    // Never before 1970: nodes keep epoch seconds.
    ['1969-12-31', /is 1969-12-31T00:00:00.000Z, before 1970-01-01T00:00:00Z/],
    ['1970-01-01T00:30:00+01:00', /before 1970/],
    ['0099-01-01', /0099-01-01T00:00:00.000Z, before 1970/],
    ['3000w', /before 1970/],
    ['yesterday', /is not a time/],
    ['-5d', /is not a time/],
    ['1787529600.1234', /is not a time/],
  ])('rejects %s naming the field', (text, why) => {
    expect(() => parseTime(text, '--before', NOW)).toThrow(why);
    expect(() => parseTime(text, '--before', NOW)).toThrow(/^--before: /);
  });

  it('parses durations and rejects zero', () => {
    expect(parseDuration('2s', '--poll-interval')).toBe(2000);
    expect(parseDuration('500ms', '--poll-interval')).toBe(500);
    expect(parseDuration('1.5m', '--poll-interval')).toBe(90_000);
    expect(() => parseDuration('0s', '--poll-interval')).toThrow(/longer than zero/);
    expect(() => parseDuration('2', '--poll-interval')).toThrow(/--poll-interval: "2" is not a duration/);
  });

  it('prints ISO and epoch together', () => {
    expect(describeTime(1_787_529_600_000)).toBe('2026-08-24T00:00:00Z (1787529600)');
    expect(isoTime(1_787_529_600_250)).toBe('2026-08-24T00:00:00.250Z');
  });
});

describe('--before in a sweep plan', () => {
  const flags = (before: string): SweepFlags => sweepFlagsWith({ before });

  it('rejects a time in the future, showing it in ISO and epoch', () => {
    expect(() => planSweep(flags('2026-08-25T00:00:00Z'), NOW)).toThrow(UsageError);
    expect(() => planSweep(flags('2026-08-25T00:00:00Z'), NOW)).toThrow(/2026-08-25T00:00:00Z \(1787616000\), which is in the future/);
    expect(() => planSweep(flags(String(NOW / 1000 + 1)), NOW)).toThrow(/in the future/);
  });

  it('accepts now and the past, in whole seconds', () => {
    expect(planSweep(flags('now'), NOW).request.before).toBe(NOW / 1000);
    expect(planSweep(flags('90d'), NOW).request.before).toBe(NOW / 1000 - 90 * 86_400);
  });

  it('rounds an explicit fractional time down (never deleting more), with a warning', () => {
    const plan = planSweep(flags('1787529600.750'), NOW);
    expect(plan.request.before).toBe(1_787_529_600);
    expect(plan.warnings[0]).toMatch(/rounded down/);
    expect(planSweep(flags('90d'), NOW + 250).warnings).toEqual([]);
  });

  it('requires --before', () => {
    expect(() => planSweep({ ...flags(''), before: undefined }, NOW)).toThrow(/--before is required/);
  });
});
