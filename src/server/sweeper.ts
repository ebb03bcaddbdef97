/**
 * The sweep delete job: asynchronous, cancellable, one at a time. It walks the series in id
 * order in batches, deleting per series in small transactions and yielding to the event loop
 * (setImmediate) between units, so the node keeps answering while a sweep runs. A new sweep
 * cancels the running one at its next check; a cancelled job never touches the status again.
 *
 * Every way a sweep ends is recorded per type (completed, cancelled, replaced, failed) and shown
 * while that type is idle, so a client can tell "finished" from "cut short" even when it polls
 * too late to see the sweep running. The records live in memory: a restarted node has none, and
 * its new `instance` id says so.
 */
import { randomBytes } from 'node:crypto';
import { DATA_TYPES, type DataType, type LastSweep, type SweepResult, type SweepStatus, type TypeStatus } from '../protocol/index.js';
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
  /** The client's id for the DELETE (`<prefix>-Sweep-Request-Id`), kept in the status and the record. */
  requestId?: string;
}

export interface SweeperOptions {
  /** Pause after each series a sweep handles (ms). */
  paceMs: number;
  /** Series fetched per batch. */
  batchSize?: number;
  /** Longest stretch of work between two yields to the event loop (ms). */
  sliceMs?: number;
  /**
   * Told when a job fails (the store threw); the job stops, its unfinished types are recorded as
   * `failed` with the error, and the status returns to idle.
   */
  onError?: (err: unknown) => void;
  /** Clock for `last_finished` (epoch ms; default Date.now). */
  now?: () => number;
  /** The id this node process shows as `instance` (default: 12 random hex digits). */
  instance?: string;
}

interface Job {
  plan: SweepPlan;
  status: SweepStatus;
  cancelled: boolean;
  /** Types this job has finished (their `completed` record is written). */
  finished: Set<DataType>;
  /** The type being swept now (the one a store error belongs to). */
  current?: DataType;
  /** Wakes a paced sleep early on cancel. */
  wake: (() => void) | null;
  done: Promise<void>;
}

function idleStatus(): SweepStatus {
  return { nnt: { running: false }, text: { running: false }, histogram: { running: false } };
}

/** The spans of one type a plan deletes, as the status shows them. */
function rollupsOf(plan: SweepPlan, type: DataType): string | undefined {
  if (type === 'nnt') return plan.nntAll ? 'all' : plan.nntSpans.join(',');
  if (type === 'histogram') return plan.histogramAll ? 'all' : plan.histogramPeriods.join(',');
  return undefined;
}

/** `nnt,histogram before 1690000000 (nnt spans all, histogram spans 60)`: a plan in words. */
export function describePlan(plan: SweepPlan): string {
  const spans = plan.types.filter((t) => t !== 'text').map((t) => `${t} spans ${rollupsOf(plan, t)!}`);
  return `${plan.types.join(',')} before ${plan.before}${spans.length ? ` (${spans.join(', ')})` : ''}`;
}

/** An error as one short line for `last_error` (no stack, no newlines). */
function errorLine(err: unknown): string {
  const text = err instanceof Error ? err.message : String(err);
  const line = text.replace(/\s+/g, ' ').trim() || 'unknown error';
  return line.length > 300 ? `${line.slice(0, 297)}...` : line;
}

export class Sweeper {
  private job: Job | null = null;
  private readonly store: Store;
  private readonly opts: Required<Omit<SweeperOptions, 'onError' | 'instance'>> & Pick<SweeperOptions, 'onError'>;
  private closed = false;
  private readonly last: Partial<Record<DataType, LastSweep>> = {};
  /** Shown on every type: a restart gives the node a new one (the records above are gone then). */
  readonly instance: string;

  constructor(store: Store, opts: SweeperOptions) {
    this.store = store;
    const { instance, ...rest } = opts;
    this.opts = { batchSize: 256, sliceMs: 8, now: () => Date.now(), ...rest };
    this.instance = instance ?? randomBytes(6).toString('hex');
  }

  /** The status as the wire shows it (copy): running types from the job, the last record of idle ones. */
  status(): SweepStatus {
    const s = this.job?.status ?? idleStatus();
    const out = {} as SweepStatus;
    for (const type of DATA_TYPES) {
      const t: TypeStatus = { ...s[type], instance: this.instance };
      const last = this.last[type];
      if (!t.running && last) t.last = { ...last };
      out[type] = t;
    }
    return out;
  }

  get running(): boolean {
    return this.job !== null;
  }

  /** Starts a sweep, cancelling any running one first. Returns at once. */
  start(plan: SweepPlan): void {
    if (this.closed) throw new Error('the sweeper is stopped');
    this.cancelCurrent('replaced', { replacedBy: describePlan(plan) });
    const status = idleStatus();
    for (const type of plan.types) {
      const s: TypeStatus = { running: true, timestamp: plan.before };
      if (type === 'nnt') s.current_uuid = '';
      else s.current_metric = '';
      const rollups = rollupsOf(plan, type);
      if (rollups !== undefined) s.rollups = rollups;
      if (plan.requestId !== undefined) s.request_id = plan.requestId;
      status[type] = s;
    }
    const job: Job = { plan, status, cancelled: false, finished: new Set(), wake: null, done: Promise.resolve() };
    this.job = job;
    job.done = this.run(job).catch((err: unknown) => {
      if (this.job === job) {
        // The type being swept failed with the error; the ones after it were never reached.
        const failedType = job.current;
        this.endJob(job, 'failed', (t) => ({ error: t === failedType ? errorLine(err) : `not swept: the sweep stopped at an error in ${failedType ?? t}` }));
      }
      this.opts.onError?.(err);
    });
  }

  /** Cancels the running sweep (if any); returns the status as it was, marked `cancelling`. */
  cancel(): SweepStatus {
    const before = this.status();
    const wasRunning = this.job !== null;
    this.cancelCurrent('cancelled');
    for (const type of DATA_TYPES) before[type].cancelling = wasRunning && before[type].running;
    return before;
  }

  /** Cancels and waits until the job has stopped touching the store (for shutdown). */
  async stop(): Promise<void> {
    this.closed = true;
    const job = this.job;
    this.cancelCurrent('cancelled');
    if (job) await job.done;
  }

  /** Resolves when the current job (if any) has finished or been cancelled. */
  async settled(): Promise<void> {
    while (this.job) await this.job.done;
  }

  private cancelCurrent(result: 'cancelled' | 'replaced', extra: Pick<LastSweep, 'replacedBy'> = {}): void {
    const job = this.job;
    if (!job) return;
    job.cancelled = true;
    job.wake?.();
    this.endJob(job, result, () => extra);
  }

  /** Records how the job ended for each type it had not finished, and lets it go. */
  private endJob(job: Job, result: SweepResult, extra: (type: DataType) => Partial<LastSweep>): void {
    for (const type of job.plan.types) if (!job.finished.has(type)) this.record(job.plan, type, result, extra(type));
    if (this.job === job) this.job = null;
  }

  private record(plan: SweepPlan, type: DataType, result: SweepResult, extra: Partial<LastSweep> = {}): void {
    const rollups = rollupsOf(plan, type);
    const id = plan.requestId !== undefined ? { requestId: plan.requestId } : {};
    this.last[type] = { timestamp: plan.before, ...(rollups !== undefined ? { rollups } : {}), result, finished: this.opts.now(), ...id, ...extra };
  }

  private async run(job: Job): Promise<void> {
    await yieldNow();
    let sliceStart = performance.now();
    for (const type of DATA_TYPES) {
      if (!job.plan.types.includes(type)) continue;
      const st = job.status[type];
      job.current = type;
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
      job.finished.add(type);
      this.record(job.plan, type, 'completed');
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
