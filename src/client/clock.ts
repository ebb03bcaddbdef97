import { getMaxListeners, setMaxListeners } from 'node:events';
import { setTimeout as delay } from 'node:timers/promises';

/** Time source and sleeper, injectable so tests drive the poll loop without waiting on the wall clock. */
export interface Clock {
  now(): number;
  /** Resolves after `ms`, or early (without throwing) when `signal` aborts. */
  sleep(ms: number, signal?: AbortSignal): Promise<void>;
}

/**
 * Sleeps until `ms` passed or `signal` aborts (then throws its reason, as timers/promises does).
 * A fan-out shares one run signal among every node's poll and retry pause, so 100 nodes mean 100
 * abort listeners on it at once: expected, not a leak. Node would print a MaxListenersExceeded
 * warning at 11 on the operator's stderr, so the limit on a shared signal is lifted here, where
 * the listeners are added.
 */
export function abortableSleep(ms: number, signal?: AbortSignal): Promise<void> {
  if (!signal) return delay(ms);
  if (getMaxListeners(signal) !== 0) setMaxListeners(0, signal);
  return delay(ms, undefined, { signal });
}

export const systemClock: Clock = {
  now: () => Date.now(),
  sleep: async (ms, signal) => {
    try {
      await abortableSleep(ms, signal);
    } catch {
      // aborted: the caller checks its signal
    }
  },
};
