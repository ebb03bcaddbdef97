/**
 * One node, one evidence-checked sweep: the DELETE, sent at most once and never retried, then the
 * polls that decide how it ended. Used by the cluster sweep and by every step of a retention run.
 */
import { randomBytes } from 'node:crypto';
import type { SweepRequest, SweepStatus } from '../protocol/index.js';
import { systemClock, type Clock } from './clock.js';
import type { Gate } from './concurrency.js';
import { AbortedError, NodeRequestError } from './errors.js';
import type { NodeClient } from './node-client.js';
import { classifyDeleteFailure } from './sweep-evidence.js';
import { DEFAULT_POLL_INTERVAL_MS, FIRST_POLL_MS, pollUntilIdle } from './sweep-poll.js';
import type { NodeLag } from './replication-lag.js';
import { stateEmitter, type FinalSweepState, type SweepListener } from './sweep-states.js';

export interface NodeSweepResult {
  node: string;
  state: FinalSweepState;
  /** One line: what the state rests on (always set). */
  reason: string;
  /** The node's or the transport's own message: a refused DELETE, a failed sweep's error, the last poll error, ... */
  error?: string;
  /** Another sweep seen on the node (replaced), in words. */
  other?: string;
  /** From the DELETE being sent to the final state; absent for nodes never sent one. */
  seconds?: number;
  /** Last status seen. */
  status?: SweepStatus;
  /** A replicating ring: the node's replication lag as read after the run (see sweep-lag.ts). */
  lag?: NodeLag;
  /** Records below the cut-off that reached it after its sweep began, as its status counts them. */
  lateRecords?: number;
}

export interface NodeSweepOptions {
  /** The node's status before the DELETE: its `instance` shows a restart later. */
  baseline?: SweepStatus;
  /** Wraps the DELETE and each poll, e.g. a cluster-wide concurrency limit. */
  gate?: Gate;
  /** Poll until the sweep ends (default true); false returns `started` once the DELETE is answered. */
  wait?: boolean;
  /** Absolute clock time after which polling stops with `timed_out`. */
  deadline?: number;
  intervalMs?: number;
  lostAfterMs?: number;
  pollTimeoutMs?: number;
  signal?: AbortSignal;
  onEvent?: SweepListener;
  clock?: Clock;
  /**
   * Awaited just before the DELETE goes out (a retention run writes its run file here, so a crash
   * leaves evidence that the DELETE may have been sent). If it throws, nothing is sent and the
   * error propagates.
   */
  beforeSend?: (at: number) => Promise<void>;
  /** Told (and awaited) once the DELETE was answered `[]`: the node's sweep started. */
  onStarted?: (at: number) => void | Promise<void>;
}

/**
 * One node, one evidence-checked sweep: its DELETE (sent once, never retried), then, unless
 * `wait` is false, polls until the node's sweep has ended, classifying the end from the evidence
 * (see sweep-evidence.ts). `sentAt` is the clock time the DELETE went out (absent: never sent).
 * The building block of a cluster sweep (startAndWait) and of each step of a retention run.
 */
export async function sweepOneNode(client: NodeClient, asked: SweepRequest, opts: NodeSweepOptions = {}): Promise<NodeSweepResult & { sentAt?: number }> {
  // Each DELETE carries its own id, so a node that records it shows whether a sweep is this one.
  const req: SweepRequest = asked.requestId !== undefined ? asked : { ...asked, requestId: randomBytes(8).toString('hex') };
  const clock = opts.clock ?? systemClock;
  const emit = stateEmitter(opts.onEvent, clock);
  const gate = opts.gate ?? (<T>(fn: () => Promise<T>): Promise<T> => fn());
  const node = client.url;
  let sentAt: number | undefined;
  const seconds = (): number | undefined => (sentAt === undefined ? undefined : Math.round(clock.now() - sentAt) / 1000);
  const notSent = 'not sent: interrupted before this node was reached';
  if (opts.signal?.aborted) {
    emit(node, 'interrupted', { error: notSent });
    return { node, state: 'interrupted', reason: notSent, error: notSent };
  }
  if (opts.beforeSend) await opts.beforeSend(clock.now());
  try {
    await gate(async () => {
      if (opts.signal?.aborted) throw new AbortedError(node, notSent);
      emit(node, 'sending');
      sentAt = clock.now();
      await client.sweepDelete(req, opts.signal ? { signal: opts.signal } : {});
    });
  } catch (err) {
    const s = seconds();
    if (err instanceof AbortedError || opts.signal?.aborted) {
      const reason = sentAt !== undefined ? 'interrupted while sending: the node may have started the sweep (check tsnode status)' : notSent;
      emit(node, 'interrupted', { error: reason });
      return { node, state: 'interrupted', reason, error: reason, ...(sentAt !== undefined ? { sentAt } : {}) };
    }
    const e = err instanceof NodeRequestError ? err : new NodeRequestError(node, 'bad_answer', err instanceof Error ? err.message : String(err), { retryable: false, cause: err });
    const v = classifyDeleteFailure({ code: e.code, detail: e.detail, cause: e.cause });
    const state = v.state === 'unconfirmed' ? 'unconfirmed' : 'failed';
    emit(node, state, { error: v.reason });
    return { node, state, reason: v.reason, ...(v.error ? { error: v.error } : {}), ...(s !== undefined ? { seconds: s } : {}), ...(sentAt !== undefined ? { sentAt } : {}) };
  }
  emit(node, 'started');
  await opts.onStarted?.(clock.now());
  if (opts.wait === false) {
    return { node, state: 'started', reason: 'the DELETE was answered [] (started); not watched (no wait)', seconds: seconds()!, sentAt: sentAt! };
  }
  const interval = opts.intervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const r = await pollUntilIdle(client, {
    gate,
    request: req,
    ...(opts.baseline ? { baseline: opts.baseline } : {}),
    // The DELETE just answered "started": the node is running by definition, so the first poll
    // waits a moment; then the gaps ramp up to the interval (small sweeps finish fast).
    initialDelayMs: Math.min(FIRST_POLL_MS, interval),
    rampFromMs: Math.min(FIRST_POLL_MS, interval),
    ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
    ...(opts.lostAfterMs !== undefined ? { lostAfterMs: opts.lostAfterMs } : {}),
    ...(opts.pollTimeoutMs !== undefined ? { pollTimeoutMs: opts.pollTimeoutMs } : {}),
    ...(opts.deadline !== undefined ? { deadline: opts.deadline } : {}),
    ...(opts.signal ? { signal: opts.signal } : {}),
    ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    clock,
  });
  // With a request the loop never ends `idle`.
  const state: FinalSweepState = r.state === 'idle' ? 'unconfirmed' : r.state;
  return {
    node,
    state,
    reason: r.reason,
    ...(r.error ? { error: r.error } : {}),
    ...(r.other ? { other: r.other } : {}),
    seconds: seconds()!,
    ...(r.status ? { status: r.status } : {}),
    sentAt: sentAt!,
  };
}
