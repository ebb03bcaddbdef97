/**
 * Watching a node's sweep with GETs only: the poll loop that waits for a sweep to end and judges
 * how it ended, and the single re-check of a sweep an earlier run may have sent.
 */
import { DATA_TYPES, isIdle, type DataType, type SweepRequest, type SweepStatus } from '../protocol/index.js';
import { systemClock, type Clock } from './clock.js';
import type { Gate } from './concurrency.js';
import { AbortedError, NodeRequestError, timeLimitSignal } from './errors.js';
import type { NodeClient } from './node-client.js';
import { NO_RETRY } from './retry.js';
import {
  classify,
  describeRunning as describeRunningSweep,
  newEvidence,
  observeFailure,
  observeStatus,
  recordShowsCompleted,
  runningIsOurs,
  settled,
  type PollFailureKind,
  type SweepEvidence,
} from './sweep-evidence.js';
import { runningTypes } from './sweep-preflight.js';
import { stateEmitter, type SweepListener } from './sweep-states.js';

export interface PollOptions {
  /** Data types that must all be idle (default: the three types; with `request`, its types). */
  types?: readonly DataType[];
  /**
   * The sweep this node was sent. With it the loop also stops at the first sign of another sweep
   * or a cancellation, and the result is classified from the evidence (done, replaced, cancelled,
   * failed, unconfirmed, ...). Without it the loop only waits for idle and reports `idle`.
   */
  request?: SweepRequest;
  /** The node's status before the DELETE (preflight): its `instance` shows a restart later. */
  baseline?: SweepStatus;
  /** Between polls (default 2 s). */
  intervalMs?: number;
  /**
   * Grace period: a node that has not given a usable status for this long is `lost` (no answers)
   * or `unconfirmed` (answers that are not a status) (default 30 s). Shorter silences are
   * tolerated (`no_answer`) and polling continues.
   */
  lostAfterMs?: number;
  /** Absolute clock time after which polling stops with `timed_out`. */
  deadline?: number;
  signal?: AbortSignal;
  clock?: Clock;
  onEvent?: SweepListener;
  /** Longest wait for one poll's answer (default: min(lostAfter, 10 s)). */
  pollTimeoutMs?: number;
  /** Wait this long before the first poll (default 0: poll at once). */
  initialDelayMs?: number;
  /**
   * Start polling this often and double the gap after each poll up to `intervalMs`, so a small
   * sweep is seen done in a fraction of a second while a long one is polled at the interval.
   */
  rampFromMs?: number;
  /** Wraps each poll request, e.g. a cluster-wide concurrency limit. */
  gate?: Gate;
}

export interface PollResult {
  node: string;
  /** `idle` without a request; with one, the classified end of the sweep. */
  state: 'idle' | 'done' | 'replaced' | 'cancelled' | 'failed' | 'unconfirmed' | 'lost' | 'timed_out' | 'interrupted';
  /** One line: what the state rests on. */
  reason: string;
  /** The last status the node sent. */
  status?: SweepStatus;
  /** The last poll error (lost), or the node's own error (failed). */
  error?: string;
  /** Another sweep seen on the node (replaced), in words. */
  other?: string;
  /** Polls sent. */
  polls: number;
  /** What the polls saw (with `request`). */
  evidence?: SweepEvidence;
}

export const DEFAULT_POLL_INTERVAL_MS = 2_000;
export const DEFAULT_LOST_AFTER_MS = 30_000;
/** The first poll after a DELETE answered "started" waits this long (see sweepOneNode). */
export const FIRST_POLL_MS = 250;

/** Splits a failed poll into "no answer" (unreachable, timeout) and "answered, but unusably". */
function pollFailure(err: unknown, pollTimeoutMs: number, timedOut: boolean): { kind: PollFailureKind; detail: string } {
  // The poll's own limit fired (whatever the error then says): the node gave no answer in time.
  if (timedOut) return { kind: 'no_answer', detail: `no answer within ${pollTimeoutMs / 1000}s (the limit of one status poll)` };
  if (err instanceof NodeRequestError) return { kind: err.code === 'unreachable' || err.code === 'timeout' ? 'no_answer' : 'bad_answer', detail: err.detail };
  return { kind: 'bad_answer', detail: err instanceof Error ? err.message : String(err) };
}

/** What the last status says our sweep was doing, for the reasons of lost/timed_out/interrupted. */
function lastSeen(ev: SweepEvidence | undefined, status: SweepStatus | undefined): string {
  if (!status) return 'no status seen since the DELETE';
  const running = DATA_TYPES.filter((t) => status[t].running);
  if (!running.length) return 'last seen idle';
  if (ev && running.every((t) => runningIsOurs(ev.request, t, status[t]))) return `last seen running ${running.join(',')}`;
  return `last seen running ${describeRunningSweep(status)}`;
}

/**
 * Polls one node's `GET /sweep_delete` until its sweep has ended (see PollOptions.request).
 * Never sends anything but GETs. Polls without a usable status are tolerated for `lostAfterMs`.
 */
export async function pollUntilIdle(client: NodeClient, opts: PollOptions = {}): Promise<PollResult> {
  const clock = opts.clock ?? systemClock;
  const types = opts.types ?? opts.request?.types ?? DATA_TYPES;
  const interval = opts.intervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const lostAfter = opts.lostAfterMs ?? DEFAULT_LOST_AFTER_MS;
  const pollTimeout = opts.pollTimeoutMs ?? Math.min(lostAfter, 10_000);
  const emit = stateEmitter(opts.onEvent, clock);
  const node = client.url;
  let lastUsable = clock.now();
  let status: SweepStatus | undefined;
  let lastError: string | undefined;
  let polls = 0;
  let state: 'running' | 'no_answer' | undefined;
  let evidence = opts.request ? newEvidence(opts.request, opts.baseline) : undefined;
  const finish = (s: PollResult['state'], reason: string, extra: { error?: string; other?: string } = {}): PollResult => {
    const error = extra.error ?? (s === 'lost' ? lastError : undefined);
    emit(node, s, { ...(s !== 'done' && s !== 'idle' ? { error: reason } : {}), ...(status ? { status } : {}) });
    return {
      node,
      state: s,
      reason,
      ...(status ? { status } : {}),
      ...(error ? { error } : {}),
      ...(extra.other ? { other: extra.other } : {}),
      polls,
      ...(evidence ? { evidence } : {}),
    };
  };
  if (opts.initialDelayMs) {
    let wait = opts.initialDelayMs;
    if (opts.deadline !== undefined) wait = Math.min(wait, Math.max(0, opts.deadline - clock.now()));
    await clock.sleep(wait, opts.signal);
  }
  for (;;) {
    if (opts.signal?.aborted) return finish('interrupted', `stopped watching (interrupted): the sweep keeps running on the node; ${lastSeen(evidence, status)}`);
    if (opts.deadline !== undefined && clock.now() >= opts.deadline) {
      return finish('timed_out', `stopped waiting at the timeout; the sweep keeps running on the node; ${lastSeen(evidence, status)}`, lastError ? { error: lastError } : {});
    }
    polls++;
    const timeout = timeLimitSignal(pollTimeout, 'the limit of one status poll');
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    try {
      const ask = (): Promise<SweepStatus> => client.sweepStatus({ signal, retry: NO_RETRY });
      status = await (opts.gate ? opts.gate(ask) : ask());
      const at = clock.now();
      lastUsable = at;
      lastError = undefined;
      opts.onEvent?.({ kind: 'status', node, at, status });
      if (evidence) {
        evidence = observeStatus(evidence, status, at);
        if (settled(evidence)) {
          const v = classify(evidence);
          return finish(v.state, v.reason, { ...(v.error ? { error: v.error } : {}), ...(v.other ? { other: v.other } : {}) });
        }
      } else if (isIdle(status, types)) return finish('idle', 'every type idle');
      if (state !== 'running') emit(node, 'running', { status });
      state = 'running';
    } catch (err) {
      if (opts.signal?.aborted) return finish('interrupted', `stopped watching (interrupted): the sweep keeps running on the node; ${lastSeen(evidence, status)}`);
      const failure = pollFailure(err, pollTimeout, timeout.aborted);
      lastError = failure.detail;
      if (evidence) evidence = observeFailure(evidence, failure, clock.now());
      const silentFor = clock.now() - lastUsable;
      if (silentFor >= lostAfter) {
        const secs = Math.round(silentFor / 1000);
        // Answers that are not a status are not silence: the node is there, tsnode cannot read it.
        if (failure.kind === 'bad_answer') return finish('unconfirmed', `no usable status for ${secs}s: the node answered ${lastError}`, { error: lastError });
        return finish('lost', `no answer for ${secs}s: ${lastError}; ${lastSeen(evidence, status)}`);
      }
      if (state !== 'no_answer') emit(node, 'no_answer', { error: lastError });
      state = 'no_answer';
    }
    let wait = opts.rampFromMs === undefined ? interval : Math.min(interval, opts.rampFromMs * 2 ** polls);
    if (opts.deadline !== undefined) wait = Math.min(wait, Math.max(0, opts.deadline - clock.now()));
    await clock.sleep(wait, opts.signal);
  }
}

/**
 * What one look at a node says about a sweep that may have been sent to it earlier (by a tsnode
 * that was stopped or crashed): `ours_running` (watch it to its end), `completed` (the node's own
 * record says this very request completed after `sentAt`), `idle_no_evidence` (idle, nothing to
 * show it ran: send it again), `other_sweep` (another sweep runs: never cancel it) or `no_status`.
 */
export type RecheckResult =
  | { kind: 'ours_running'; status: SweepStatus }
  | { kind: 'completed'; status: SweepStatus; reason: string }
  | { kind: 'idle_no_evidence'; status: SweepStatus; reason: string }
  | { kind: 'other_sweep'; status: SweepStatus; other: string }
  | { kind: 'no_status'; failure: PollFailureKind; error: string };

/** One GET of `client`'s sweep status, judged against `req` sent at `sentAt` (epoch ms). Sends nothing else. */
export async function recheckNode(
  client: NodeClient,
  req: SweepRequest,
  sentAt: number,
  opts: { gate?: Gate; signal?: AbortSignal; pollTimeoutMs?: number } = {},
): Promise<RecheckResult> {
  const gate = opts.gate ?? (<T>(fn: () => Promise<T>): Promise<T> => fn());
  const pollTimeout = opts.pollTimeoutMs ?? 10_000;
  const timeout = timeLimitSignal(pollTimeout, 'the limit of one status poll');
  const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
  let status: SweepStatus;
  try {
    status = await gate(() => client.sweepStatus({ signal }));
  } catch (err) {
    if (opts.signal?.aborted) throw new AbortedError(client.url, 'interrupted while re-checking');
    const f = pollFailure(err, pollTimeout, timeout.aborted);
    return { kind: 'no_status', failure: f.kind, error: f.detail };
  }
  const running = runningTypes(status);
  if (running.length) {
    if (running.every((t) => runningIsOurs(req, t, status[t]))) return { kind: 'ours_running', status };
    return { kind: 'other_sweep', status, other: describeRunningSweep(status) };
  }
  if (recordShowsCompleted(req, status, sentAt)) return { kind: 'completed', status, reason: "the node's record says this sweep completed after it was sent" };
  const why = DATA_TYPES.some((t) => status[t].instance !== undefined || status[t].last !== undefined)
    ? "idle, and the node's record does not show this sweep completed"
    : 'idle, and the node keeps no record of its sweeps to ask';
  return { kind: 'idle_no_evidence', status, reason: why };
}
