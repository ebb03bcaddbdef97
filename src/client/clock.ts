import { setTimeout as delay } from 'node:timers/promises';

/** Time source and sleeper, injectable so tests drive the poll loop without waiting on the wall clock. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    try {
      await delay(ms, undefined, signal ? { signal } : {});
    } catch {
      // aborted: the caller checks its signal
    }
  },
};
