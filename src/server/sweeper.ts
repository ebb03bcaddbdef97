/**
 * The sweep delete job: asynchronous, cancellable, one at a time. It walks the series in id
 * order in batches, deleting per series in small transactions and yielding to the event loop
 * (setImmediate) between units, so the node keeps answering while a sweep runs. A new sweep
 * cancels the running one at its next check; a cancelled job never touches the status again.
 */
import { DATA_TYPES, type DataType, type SweepStatus, type TypeStatus } from '../protocol/index.js';
import type { Store } from './store.js';

export interface SweepPlan {
  /** Epoch seconds: rows with ts < before go. */
  before: number;
  types: DataType[];
  /** Numeric spans to delete (s), and whether that is every configured span (raw data goes too). */
  nntSpans: number[];
  nntAll: boolean;
  histogramPeriods: number[];
  histogramAll: boolean;
}

export interface SweeperOptions {
  /** Pause after each series a sweep handles (ms). */
  paceMs: number;
  /** Series fetched per batch. */
  batchSize?: number;
  /** Longest stretch of work between two yields to the event loop (ms). */
  sliceMs?: number;
  /** Told when a job fails (the store threw); the job stops and the status returns to idle. */
  onError?: (err: unknown) => void;
}

interface Job {
  plan: SweepPlan;
  status: SweepStatus;
  cancelled: boolean;
  /** Wakes a paced sleep early on cancel. */
  wake: (() => void) | null;
  done: Promise<void>;
}

function idleStatus(): SweepStatus {
  return { nnt: { running: false }, text: { running: false }, histogram: { running: false } };
}

export class Sweeper {
  private job: Job | null = null;
  private readonly store: Store;
  private readonly opts: Required<Omit<SweeperOptions, 'onError'>> & Pick<SweeperOptions, 'onError'>;
  private closed = false;

  constructor(store: Store, opts: SweeperOptions) {
    this.store = store;
    this.opts = { batchSize: 256, sliceMs: 8, ...opts };
  }

  /** The status as the wire shows it (copy). */
  status(): SweepStatus {
    const s = this.job?.status ?? idleStatus();
    return { nnt: { ...s.nnt }, text: { ...s.text }, histogram: { ...s.histogram } };
  }

  get running(): boolean {
    return this.job !== null;
  }

  /** Starts a sweep, cancelling any running one first. Returns at once. */
  start(plan: SweepPlan): void {
    if (this.closed) throw new Error('the sweeper is stopped');
    this.cancelCurrent();
    const status = idleStatus();
    for (const type of plan.types) {
      const s: TypeStatus = { running: true, timestamp: plan.before };
      if (type === 'nnt') {
        s.current_uuid = '';
        s.rollups = plan.nntAll ? 'all' : plan.nntSpans.join(',');
      } else if (type === 'text') {
        s.current_metric = '';
      } else {
        s.current_metric = '';
        s.rollups = plan.histogramAll ? 'all' : plan.histogramPeriods.join(',');
      }
      status[type] = s;
    }
    const job: Job = { plan, status, cancelled: false, wake: null, done: Promise.resolve() };
    this.job = job;
    job.done = this.run(job).catch((err: unknown) => {
      if (this.job === job) this.job = null;
      this.opts.onError?.(err);
    });
  }

  /** Cancels the running sweep (if any); returns the status as it was, marked `cancelling`. */
  cancel(): SweepStatus {
    const before = this.status();
    const wasRunning = this.job !== null;
    this.cancelCurrent();
    for (const type of DATA_TYPES) before[type].cancelling = wasRunning && before[type].running;
    return before;
  }

  /** Cancels and waits until the job has stopped touching the store (for shutdown). */
  async stop(): Promise<void> {
    this.closed = true;
    const job = this.job;
    this.cancelCurrent();
    if (job) await job.done;
  }

  /** Resolves when the current job (if any) has finished or been cancelled. */
  async settled(): Promise<void> {
    while (this.job) await this.job.done;
  }

  private cancelCurrent(): void {
    const job = this.job;
    if (!job) return;
    job.cancelled = true;
    job.wake?.();
    this.job = null;
  }

  private async run(job: Job): Promise<void> {
    await yieldNow();
    let sliceStart = performance.now();
    for (const type of DATA_TYPES) {
      if (!job.plan.types.includes(type)) continue;
      const st = job.status[type];
      let after = 0;
      for (;;) {
        if (job.cancelled) return;
        const batch = this.store.listSeries(after, this.opts.batchSize, type);
        if (batch.length === 0) break;
        for (const series of batch) {
          if (job.cancelled) return;
          if (type === 'nnt') {
            st.current_uuid = series.uuid;
            this.store.sweepNnt(series.id, job.plan.before, job.plan.nntSpans, job.plan.nntAll);
          } else if (type === 'text') {
            st.current_metric = `${series.uuid}-${series.metric}`;
            this.store.sweepText(series.id, job.plan.before);
          } else {
            st.current_metric = `${series.uuid}-${series.metric}`;
            this.store.sweepHistogram(series.id, job.plan.before, job.plan.histogramPeriods);
          }
          if (this.opts.paceMs > 0) {
            await this.pause(job, this.opts.paceMs);
            sliceStart = performance.now();
          } else if (performance.now() - sliceStart > this.opts.sliceMs) {
            await yieldNow();
            sliceStart = performance.now();
          }
        }
        after = batch[batch.length - 1]!.id;
      }
      if (job.cancelled) return;
      job.status[type] = { running: false };
    }
    if (this.job === job) this.job = null;
  }

  private pause(job: Job, ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(() => {
        job.wake = null;
        resolve();
      }, ms);
      job.wake = () => {
        clearTimeout(timer);
        job.wake = null;
        resolve();
      };
    });
  }
}

function yieldNow(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
