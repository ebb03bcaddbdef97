/**
 * abortableSleep: the one pause every poll and retry takes on the run's shared signal. It waits
 * its time with a signal too (a pause that returns at once would turn a poll into a busy loop),
 * ends early on abort, and many pauses at once on one signal raise no listener warning.
 */
import { describe, expect, it } from 'vitest';
import { abortableSleep, systemClock } from '../../src/client/clock.js';

describe('abortableSleep', () => {
  it('waits its time, without a signal and with one, pause after pause on the same signal', async () => {
    const signal = new AbortController().signal;
    for (const s of [undefined, signal, signal, signal]) {
      const t0 = performance.now();
      await abortableSleep(40, s);
      expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
    }
  });

  it('ends early when the signal aborts', async () => {
    const c = new AbortController();
    const t0 = performance.now();
    setTimeout(() => c.abort(new Error('stop')), 20);
    await expect(abortableSleep(10_000, c.signal)).rejects.toMatchObject({ name: 'AbortError' });
    expect(performance.now() - t0).toBeLessThan(5_000);
  });

  it('50 pauses on one signal: no MaxListenersExceededWarning, each waits', async () => {
    const warnings: string[] = [];
    const onWarning = (w: Error): void => void warnings.push(w.name);
    process.on('warning', onWarning);
    try {
      const signal = new AbortController().signal;
      const t0 = performance.now();
      await Promise.all(Array.from({ length: 50 }, () => systemClock.sleep(40, signal)));
      expect(performance.now() - t0).toBeGreaterThanOrEqual(35);
      await new Promise((r) => setImmediate(r));
      expect(warnings).not.toContain('MaxListenersExceededWarning');
    } finally {
      process.off('warning', onWarning);
    }
  });
});
