/**
 * Bounded concurrency, one helper for every layer that sends: a pool of workers over a list
 * (forEachBounded: a fan-out to nodes), a counting semaphore shared by several pipelines
 * (limiter: a sweep's DELETEs and polls under one budget), and a window of tasks in flight that
 * a producer waits on (InFlight: the write pipeline's batches and requests).
 */

/** Calls `fn(i)` for every `i < count`, at most `width` calls at once, started in index order. */
export async function forEachBounded(count: number, width: number, fn: (index: number) => Promise<void>): Promise<void> {
  let next = 0;
  const worker = async (): Promise<void> => {
    while (next < count) await fn(next++);
  };
  await Promise.all(Array.from({ length: Math.max(1, Math.min(width, count)) }, worker));
}

/** Runs `fn` when its turn comes (e.g. under a cluster-wide limit on requests in flight). */
export type Gate = <T>(fn: () => Promise<T>) => Promise<T>;

/** A counting semaphore: at most `n` callers inside at once, let in first come, first served. */
export function limiter(n: number): Gate {
  let active = 0;
  const queue: (() => void)[] = [];
  return async (fn) => {
    if (active >= n) await new Promise<void>((resolve) => queue.push(resolve));
    active++;
    try {
      return await fn();
    } finally {
      active--;
      queue.shift()?.();
    }
  };
}

/**
 * Tasks in flight, at most `width` of them when the producer waits for `room()` before it adds
 * one. A task must not reject (it settles its own failures): the window only counts it.
 */
export class InFlight {
  private readonly tasks = new Set<Promise<unknown>>();

  constructor(private readonly width = Infinity) {}

  get size(): number {
    return this.tasks.size;
  }

  /** Resolves once fewer than `width` tasks are in flight. */
  async room(): Promise<void> {
    while (this.tasks.size >= this.width) await Promise.race(this.tasks);
  }

  track(task: Promise<unknown>): void {
    this.tasks.add(task);
    const done = (): void => {
      this.tasks.delete(task);
    };
    void task.then(done, done);
  }

  /** Resolves once every task tracked so far has settled. */
  async settled(): Promise<void> {
    await Promise.all(this.tasks);
  }
}
