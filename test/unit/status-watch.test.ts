import { describe, expect, it } from 'vitest';
import { parseWatch, watchClock } from '../../src/cli/commands/status/action.js';
import type { Clock } from '../../src/client/clock.js';

describe('status --watch', () => {
  it('takes an interval from 100ms to 1h; 30d is a usage error, not a busy loop', () => {
    expect(parseWatch(undefined)).toBeUndefined();
    expect(parseWatch(true)).toBe(2000);
    expect(parseWatch('5s')).toBe(5000);
    expect(parseWatch('1h')).toBe(3_600_000);
    expect(() => parseWatch('30d')).toThrow(/--watch: "30d" is outside 100ms\.\.1h/);
    expect(() => parseWatch('10ms')).toThrow(/outside 100ms\.\.1h/);
  });

  it('every wait of the watch lasts the whole time asked, even when the timers fire early', async () => {
    // A base clock whose timers fire after 1 ms whatever they were asked (what Node does past 24.8 days).
    let now = 0;
    const sleeps: number[] = [];
    const early: Clock = {
      now: () => now,
      sleep: async (ms) => {
        sleeps.push(ms);
        now += 1;
      },
    };
    const clock = watchClock(100, early);
    await clock.sleep(250);
    expect(now).toBe(250);
    now = 0;
    await clock.sleep(0);
    expect(now).toBe(100); // the floor
    // A long wait is asked of the timers in pieces they can hold.
    sleeps.length = 0;
    now = 0;
    const long = watchClock(100, { now: () => now, sleep: async (ms) => void (sleeps.push(ms), (now += ms)) });
    await long.sleep(30 * 86_400_000);
    expect(Math.max(...sleeps)).toBeLessThanOrEqual(2 ** 31 - 1);
    expect(now).toBe(30 * 86_400_000);
  });

  it('the run signal ends a wait at once', async () => {
    const ac = new AbortController();
    ac.abort();
    let calls = 0;
    await watchClock(100, {
      now: () => 0,
      sleep: async () => {
        calls++;
      },
    }).sleep(1000, ac.signal);
    expect(calls).toBe(0);
  });
});
