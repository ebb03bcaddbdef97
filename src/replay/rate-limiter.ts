import { abortableSleep } from '../client/clock.js';

/** Token bucket on records per second, burst of one batch. */
export class RateLimiter {
  private nextFree = 0;
  constructor(
    private readonly rate: number,
    private readonly now: () => number,
  ) {}
  async take(n: number, signal?: AbortSignal): Promise<void> {
    const t = Math.max(this.now(), this.nextFree);
    this.nextFree = t + (n / this.rate) * 1000;
    const wait = t - this.now();
    if (wait > 0) await abortableSleep(wait, signal);
  }
}
