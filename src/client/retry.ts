import { abortableSleep } from './clock.js';
import { NodeHttpError, NodeRequestError } from './errors.js';

export interface RetryPolicy {
  /** Further attempts after the first; 0 disables retrying. */
  retries: number;
  baseDelayMs: number;
  maxDelayMs: number;
  /**
   * Whether a timeout is tried again (default true). A probe of a phase says false: a node that
   * gave no answer within the headers timeout is asked once, its silence is the answer, and a
   * frozen node costs one timeout per phase instead of four.
   */
  retryTimeouts?: boolean;
}

export const DEFAULT_RETRY: RetryPolicy = { retries: 3, baseDelayMs: 250, maxDelayMs: 8000 };
export const NO_RETRY: RetryPolicy = { retries: 0, baseDelayMs: 0, maxDelayMs: 0 };

/** Exponential backoff with full jitter; a node's Retry-After wins when it is longer. */
export function backoffDelay(policy: RetryPolicy, attempt: number, err: unknown, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  const jittered = Math.round(ceiling / 2 + (random() * ceiling) / 2);
  const asked = err instanceof NodeHttpError ? err.retryAfterMs : undefined;
  return asked !== undefined ? Math.min(Math.max(asked, jittered), 60_000) : jittered;
}

/**
 * Calls `fn` until it succeeds, fails with a non-retryable error, or runs out of attempts.
 * Only NodeRequestErrors marked retryable (connection errors, timeouts, 429, 5xx) are retried.
 */
export async function withRetry<T>(
  fn: (attempt: number) => Promise<T>,
  policy: RetryPolicy,
  opts: { signal?: AbortSignal; onRetry?: (err: NodeRequestError, attempt: number, delayMs: number) => void } = {},
): Promise<T> {
  for (let attempt = 0; ; attempt++) {
    try {
      return await fn(attempt);
    } catch (err) {
      if (!(err instanceof NodeRequestError) || !err.retryable || attempt >= policy.retries || opts.signal?.aborted) throw err;
      if (err.code === 'timeout' && policy.retryTimeouts === false) throw err;
      const delay = backoffDelay(policy, attempt, err);
      opts.onRetry?.(err, attempt + 1, delay);
      try {
        await abortableSleep(delay, opts.signal);
      } catch {
        throw err;
      }
    }
  }
}
