/**
 * Cluster-wide sweep deletes, UI-free: preflight every node, send one DELETE per node, then poll
 * each node until its sweep has ended, and decide from the evidence how it ended (see
 * sweep-evidence.ts). Callers observe progress through per-node events and get one result per
 * node back, each with a one-line reason; nothing here prints, prompts or exits.
 *
 * Safety rules this module owns:
 * - a DELETE is sent at most once per node per run (NodeClient.sweepDelete never retries, and the
 *   poll loop only ever GETs);
 * - a node already sweeping is refused unless `force` (a new DELETE would cancel what it runs);
 * - an unreachable node is refused unless `skipUnreachable`, and then reported as `skipped`.
 */
import { setTimeout as delay } from 'node:timers/promises';
import { DATA_TYPES, isIdle, type DataType, type SweepRequest, type SweepStatus } from '../protocol/index.js';
import { fanOut } from './cluster.js';
import { AbortedError, NodeRequestError } from './errors.js';
import type { NodeClient } from './node-client.js';
import { NO_RETRY } from './retry.js';
import {
  classify,
  classifyDeleteFailure,
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

/**
 * Every state a node passes through in a sweep run.
 * Transient: `checking`, `idle`, `busy`, `unreachable`, `sending`, `running`, `no_answer`.
 * Final (one per node in the result): `done` (the evidence says our sweep ran to the end),
 * `started` (with wait=false), `replaced` (another sweep took its place), `cancelled`, `failed`
 * (the DELETE was refused or answered with anything but `[]`, or the node says the sweep failed),
 * `unconfirmed` (tsnode cannot tell whether it ran to the end), `lost`, `skipped`, `timed_out`,
 * `interrupted`.
 */
export type NodeSweepState =
  | 'checking'
  | 'idle'
  | 'busy'
  | 'unreachable'
  | 'sending'
  | 'running'
  | 'no_answer'
  | FinalSweepState;
export const FINAL_SWEEP_STATES = ['done', 'started', 'replaced', 'cancelled', 'failed', 'unconfirmed', 'lost', 'skipped', 'timed_out', 'interrupted'] as const;
export type FinalSweepState = (typeof FINAL_SWEEP_STATES)[number];

export type SweepEvent =
  /** A node moved to another state. `error` says why: the reason of a final state other than done, a poll's error for no_answer/unreachable. */
  | { kind: 'state'; node: string; state: NodeSweepState; at: number; error?: string; status?: SweepStatus }
  /** A poll answered (every poll, also without a state change): for live progress lines. */
  | { kind: 'status'; node: string; at: number; status: SweepStatus };

export type SweepListener = (event: SweepEvent) => void;

/** Types currently running on a node, from its status. */
export function runningTypes(status: SweepStatus): DataType[] {
  return DATA_TYPES.filter((t) => status[t].running);
}

// ---------------------------------------------------------------- preflight

export interface PreflightNode {
  node: string;
  /** The node's status when it answered. */
  status?: SweepStatus;
  /** Types it is already sweeping (empty when idle). */
  running: DataType[];
  /** Why it could not be asked, when it could not. */
  error?: NodeRequestError;
}

export interface Preflight {
  nodes: PreflightNode[];
  busy: PreflightNode[];
  unreachable: PreflightNode[];
}

export interface CommonOptions {
  /** Requests in flight at once across the cluster (default 32). */
  concurrency?: number;
  signal?: AbortSignal;
  onEvent?: SweepListener;
  clock?: Clock;
}

/**
 * Why a node gave no status at preflight, in words: `unreachable: ...` when it did not answer (no
 * connection, no answer in time, TLS refused), `answered ...` when it answered something that is
 * not a status (an HTTP error, no sweep API, a body that is not a status): that node is there.
 */
export function preflightProblem(error: NodeRequestError | undefined): string {
  if (!error) return 'unreachable: no answer';
  const silent = error.code === 'unreachable' || error.code === 'timeout' || error.code === 'tls' || error.code === 'aborted';
  return silent ? `unreachable: ${error.detail}` : `answered without a usable status: ${error.detail}`;
}

/** `GET /sweep_delete` on every node: who is idle, who is already sweeping, who does not answer. */
export async function preflightSweep(clients: readonly NodeClient[], opts: CommonOptions = {}): Promise<Preflight> {
  const clock = opts.clock ?? systemClock;
  const emit = emitter(opts.onEvent, clock);
  clients.forEach((c) => emit(c.url, 'checking'));
  const outcomes = await fanOut(
    clients,
    async (c) => c.sweepStatus(opts.signal ? { signal: opts.signal } : {}),
    { concurrency: opts.concurrency ?? 32, now: clock.now },
  );
  const nodes: PreflightNode[] = outcomes.map((o) => {
    if (!o.ok) {
      emit(o.node, 'unreachable', { error: o.error.detail });
      return { node: o.node, running: [], error: o.error };
    }
    const running = runningTypes(o.value);
    emit(o.node, running.length ? 'busy' : 'idle', { status: o.value });
    return { node: o.node, status: o.value, running };
  });
  if (opts.signal?.aborted) throw new AbortedError('(cluster)', 'interrupted during preflight');
  return { nodes, busy: nodes.filter((n) => n.running.length > 0), unreachable: nodes.filter((n) => n.error) };
}

/** What an extra preflight check found wrong (a node missing from the ring, one node listed twice). */
export interface PreflightProblem {
  node?: string;
  message: string;
}

/**
 * An extra rule on the preflight, run after the busy/unreachable rules and before anything is
 * sent (e.g. ring coverage, node identity): any problem it returns refuses the sweep.
 */
export type PreflightCheck = (pre: Preflight) => readonly PreflightProblem[] | Promise<readonly PreflightProblem[]>;

/** Runs every check on the preflight; throws SweepRefusedError listing what they found. */
export async function runPreflightChecks(pre: Preflight, checks: readonly PreflightCheck[]): Promise<void> {
  const problems: PreflightProblem[] = [];
  for (const check of checks) problems.push(...(await check(pre)));
  if (problems.length) throw new SweepRefusedError([], [], problems);
}

/** The preflight found nodes the sweep must not touch without an explicit override. */
export class SweepRefusedError extends Error {
  readonly code = 'sweep_refused';
  constructor(
    readonly busy: readonly PreflightNode[],
    readonly unreachable: readonly PreflightNode[],
    readonly problems: readonly PreflightProblem[] = [],
  ) {
    const parts: string[] = [];
    if (problems.length) parts.push(problems.map((p) => (p.node ? `${p.node}: ${p.message}` : p.message)).join('; '));
    if (busy.length) {
      parts.push(
        `${busy.length} node(s) already sweeping (a new DELETE would cancel it): ${busy
          .map((n) => `${n.node} (${n.running.map((t) => describeRunning(t, n.status)).join(', ')})`)
          .join('; ')}`,
      );
    }
    if (unreachable.length) {
      parts.push(`${unreachable.length} node(s) without a status: ${unreachable.map((n) => `${n.node} (${preflightProblem(n.error)})`).join('; ')}`);
    }
    super(`refusing to sweep: ${parts.join('; ')}`);
    this.name = 'SweepRefusedError';
  }
}

function describeRunning(type: DataType, status: SweepStatus | undefined): string {
  const s = status?.[type];
  const bits: string[] = [type];
  if (s?.timestamp !== undefined) bits.push(`before ${new Date(s.timestamp * 1000).toISOString().replace('.000Z', 'Z')} (${s.timestamp})`);
  if (s?.rollups) bits.push(`rollups ${s.rollups}`);
  return bits.join(' ');
}

/** Applies the run's overrides to a preflight: throws SweepRefusedError, or returns the nodes to sweep. */
export function assessPreflight(pre: Preflight, opts: { force?: boolean; skipUnreachable?: boolean }): { send: string[]; skipped: PreflightNode[] } {
  const busy = opts.force ? [] : pre.busy;
  const unreachable = opts.skipUnreachable ? [] : pre.unreachable;
  if (busy.length || unreachable.length) throw new SweepRefusedError(busy, unreachable);
  return { send: pre.nodes.filter((n) => !n.error).map((n) => n.node), skipped: pre.unreachable };
}

// ---------------------------------------------------------------- polling

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
  gate?: <T>(fn: () => Promise<T>) => Promise<T>;
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
const FIRST_POLL_MS = 250;

/** Splits a failed poll into "no answer" (unreachable, timeout) and "answered, but unusably". */
function pollFailure(err: unknown, pollTimeoutMs: number, timedOut: boolean): { kind: PollFailureKind; detail: string } {
  if (err instanceof AbortedError && timedOut) return { kind: 'no_answer', detail: `no answer within ${pollTimeoutMs / 1000}s` };
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
  const emit = emitter(opts.onEvent, clock);
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
    const timeout = AbortSignal.timeout(pollTimeout);
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

// ---------------------------------------------------------------- the whole run

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
}

export type SweepSummary = Record<FinalSweepState, number>;

export interface ClusterSweepResult {
  request: SweepRequest;
  nodes: NodeSweepResult[];
  summary: SweepSummary;
  /** The run's signal aborted (Ctrl-C): sweeps that started keep running on their nodes. */
  interrupted: boolean;
}

export interface StartOptions extends CommonOptions {
  /** Poll until the sweep ends (default true); false leaves started nodes as `started`. */
  wait?: boolean;
  intervalMs?: number;
  lostAfterMs?: number;
  /** Overall limit for waiting, from when the DELETEs go out. */
  timeoutMs?: number;
  pollTimeoutMs?: number;
  /**
   * Each node's status before its DELETE (the preflight's), by node URL: a node that keeps sweep
   * records shows its `instance` there, so a restart during the sweep is visible.
   */
  baseline?: ReadonlyMap<string, SweepStatus>;
}

export function summarise(nodes: readonly { state: FinalSweepState }[]): SweepSummary {
  const summary = Object.fromEntries(FINAL_SWEEP_STATES.map((s) => [s, 0])) as SweepSummary;
  for (const n of nodes) summary[n.state]++;
  return summary;
}

/** Statuses of the nodes that answered a preflight, by node URL (StartOptions.baseline). */
export function baselineOf(pre: Preflight): Map<string, SweepStatus> {
  return new Map(pre.nodes.filter((n) => n.status).map((n) => [n.node, n.status!]));
}

/**
 * Sends the DELETE to each of `clients` (concurrently, once each) and, unless `wait` is false,
 * polls each started node until its sweep has ended, classifying each end from the evidence.
 * `skipped` nodes (from the preflight) are carried into the result so nothing is ever hidden.
 * Order of the result follows `clients` then `skipped`.
 */
export async function startAndWait(
  clients: readonly NodeClient[],
  req: SweepRequest,
  opts: StartOptions & { skipped?: readonly PreflightNode[] } = {},
): Promise<ClusterSweepResult> {
  const clock = opts.clock ?? systemClock;
  const emit = emitter(opts.onEvent, clock);
  const concurrency = opts.concurrency ?? 32;
  const wait = opts.wait ?? true;
  const results = new Map<string, NodeSweepResult>();
  const limit = limiter(concurrency);

  for (const s of opts.skipped ?? []) {
    const detail = s.error?.detail ?? 'no answer';
    emit(s.node, 'skipped', { error: detail });
    results.set(s.node, { node: s.node, state: 'skipped', reason: `not sent: ${preflightProblem(s.error)} (at preflight)`, error: detail });
  }
  const deadline = opts.timeoutMs !== undefined ? clock.now() + opts.timeoutMs : undefined;
  // Each node is a pipeline: its DELETE, then (as soon as that answers) its polls. DELETEs and polls
  // share one limiter, so at most `concurrency` requests are in flight across the cluster, and the
  // limiter's FIFO queue sends the DELETEs in node-list order.
  const one = async (c: NodeClient): Promise<void> => {
    const baseline = opts.baseline?.get(c.url);
    const r = await sweepOneNode(c, req, {
      gate: limit,
      wait,
      clock,
      ...(baseline ? { baseline } : {}),
      ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
      ...(opts.lostAfterMs !== undefined ? { lostAfterMs: opts.lostAfterMs } : {}),
      ...(opts.pollTimeoutMs !== undefined ? { pollTimeoutMs: opts.pollTimeoutMs } : {}),
      ...(deadline !== undefined ? { deadline } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
    });
    const { sentAt: _sentAt, ...result } = r;
    results.set(c.url, result);
  };
  await Promise.all(clients.map(one));
  const nodes = [...clients.map((c) => results.get(c.url)!), ...(opts.skipped ?? []).map((s) => results.get(s.node)!)];
  return { request: req, nodes, summary: summarise(nodes), interrupted: Boolean(opts.signal?.aborted) };
}

export interface NodeSweepOptions {
  /** The node's status before the DELETE: its `instance` shows a restart later. */
  baseline?: SweepStatus;
  /** Wraps the DELETE and each poll, e.g. a cluster-wide concurrency limit. */
  gate?: <T>(fn: () => Promise<T>) => Promise<T>;
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
export async function sweepOneNode(client: NodeClient, req: SweepRequest, opts: NodeSweepOptions = {}): Promise<NodeSweepResult & { sentAt?: number }> {
  const clock = opts.clock ?? systemClock;
  const emit = emitter(opts.onEvent, clock);
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
  opts: { gate?: <T>(fn: () => Promise<T>) => Promise<T>; signal?: AbortSignal; pollTimeoutMs?: number } = {},
): Promise<RecheckResult> {
  const gate = opts.gate ?? (<T>(fn: () => Promise<T>): Promise<T> => fn());
  const pollTimeout = opts.pollTimeoutMs ?? 10_000;
  const timeout = AbortSignal.timeout(pollTimeout);
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

export interface ClusterSweepOptions extends StartOptions {
  /** Extra preflight rules (see PreflightCheck). */
  checks?: readonly PreflightCheck[];
  /** Sweep nodes that are already sweeping (their running sweep is cancelled and replaced). */
  force?: boolean;
  /** Leave out nodes that do not answer the preflight, reporting them as `skipped`. */
  skipUnreachable?: boolean;
  /**
   * Called after a clean preflight with the nodes about to be swept; return false to stop
   * (nothing is sent). Scripts may omit it.
   */
  confirm?: (plan: { send: string[]; skipped: PreflightNode[]; preflight: Preflight }) => boolean | Promise<boolean>;
}

/** Thrown when `confirm` declined: nothing was sent. */
export class SweepNotConfirmedError extends Error {
  readonly code = 'sweep_not_confirmed';
  constructor() {
    super('sweep not confirmed: nothing was sent');
    this.name = 'SweepNotConfirmedError';
  }
}

/**
 * The whole cluster sweep: preflight, refuse or continue, confirm, DELETE everywhere once,
 * and wait for every node to finish. Throws SweepRefusedError / SweepNotConfirmedError before
 * anything was deleted; otherwise returns one result per node.
 */
export async function runClusterSweep(clients: readonly NodeClient[], req: SweepRequest, opts: ClusterSweepOptions = {}): Promise<ClusterSweepResult> {
  const pre = await preflightSweep(clients, opts);
  const plan = assessPreflight(pre, opts);
  await runPreflightChecks(pre, opts.checks ?? []);
  if (opts.confirm && !(await opts.confirm({ ...plan, preflight: pre }))) throw new SweepNotConfirmedError();
  const sending = new Set(plan.send);
  return startAndWait(
    clients.filter((c) => sending.has(c.url)),
    req,
    { baseline: baselineOf(pre), ...opts, skipped: plan.skipped },
  );
}

// ---------------------------------------------------------------- helpers

function emitter(listener: SweepListener | undefined, clock: Clock) {
  return (node: string, state: NodeSweepState, extra: { error?: string; status?: SweepStatus } = {}): void => {
    listener?.({ kind: 'state', node, state, at: clock.now(), ...extra });
  };
}

/** A counting semaphore: at most `n` callers inside at once. */
export function limiter(n: number): <T>(fn: () => Promise<T>) => Promise<T> {
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
