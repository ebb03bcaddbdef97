/**
 * Cluster-wide sweep deletes, UI-free: preflight every node, send one DELETE per node, then poll
 * each node until it is idle. Callers observe progress through per-node events and get one result
 * per node back; nothing here prints, prompts or exits.
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
 * Final (one per node in the result): `done`, `started` (with wait=false), `failed`, `lost`,
 * `skipped`, `timed_out`, `interrupted`.
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
export const FINAL_SWEEP_STATES = ['done', 'started', 'failed', 'lost', 'skipped', 'timed_out', 'interrupted'] as const;
export type FinalSweepState = (typeof FINAL_SWEEP_STATES)[number];

export type SweepEvent =
  /** A node moved to another state. `error` says why for failed/lost/no_answer/unreachable. */
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

/** The preflight found nodes the sweep must not touch without an explicit override. */
export class SweepRefusedError extends Error {
  readonly code = 'sweep_refused';
  constructor(
    readonly busy: readonly PreflightNode[],
    readonly unreachable: readonly PreflightNode[],
  ) {
    const parts: string[] = [];
    if (busy.length) {
      parts.push(
        `${busy.length} node(s) already sweeping (a new DELETE would cancel it): ${busy
          .map((n) => `${n.node} (${n.running.map((t) => describeRunning(t, n.status)).join(', ')})`)
          .join('; ')}`,
      );
    }
    if (unreachable.length) {
      parts.push(`${unreachable.length} node(s) unreachable: ${unreachable.map((n) => `${n.node} (${n.error?.detail ?? 'no answer'})`).join('; ')}`);
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
  /** Data types that must all be idle (default: the three types). */
  types?: readonly DataType[];
  /** Between polls (default 2 s). */
  intervalMs?: number;
  /**
   * Grace period: a node that has not answered a poll for this long is `lost` (default 30 s).
   * Shorter silences are tolerated (`no_answer`) and polling continues.
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
  state: 'done' | 'lost' | 'timed_out' | 'interrupted';
  /** The last status the node sent. */
  status?: SweepStatus;
  /** The last poll error, for lost nodes. */
  error?: string;
  /** Polls sent. */
  polls: number;
}

export const DEFAULT_POLL_INTERVAL_MS = 2_000;
export const DEFAULT_LOST_AFTER_MS = 30_000;
const FIRST_POLL_MS = 250;

/**
 * Polls one node's `GET /sweep_delete` until every requested type reports `running: false`.
 * Never sends anything but GETs. Errors are tolerated for `lostAfterMs` since the last answer.
 */
export async function pollUntilIdle(client: NodeClient, opts: PollOptions = {}): Promise<PollResult> {
  const clock = opts.clock ?? systemClock;
  const types = opts.types ?? DATA_TYPES;
  const interval = opts.intervalMs ?? DEFAULT_POLL_INTERVAL_MS;
  const lostAfter = opts.lostAfterMs ?? DEFAULT_LOST_AFTER_MS;
  const pollTimeout = opts.pollTimeoutMs ?? Math.min(lostAfter, 10_000);
  const emit = emitter(opts.onEvent, clock);
  const node = client.url;
  let lastAnswer = clock.now();
  let status: SweepStatus | undefined;
  let lastError: string | undefined;
  let polls = 0;
  let state: 'running' | 'no_answer' | undefined;
  const finish = (s: PollResult['state'], error?: string): PollResult => {
    emit(node, s, { ...(error ? { error } : {}), ...(status ? { status } : {}) });
    return { node, state: s, ...(status ? { status } : {}), ...(error ? { error } : {}), polls };
  };
  if (opts.initialDelayMs) {
    let wait = opts.initialDelayMs;
    if (opts.deadline !== undefined) wait = Math.min(wait, Math.max(0, opts.deadline - clock.now()));
    await clock.sleep(wait, opts.signal);
  }
  for (;;) {
    if (opts.signal?.aborted) return finish('interrupted');
    if (opts.deadline !== undefined && clock.now() >= opts.deadline) return finish('timed_out', lastError);
    polls++;
    const timeout = AbortSignal.timeout(pollTimeout);
    const signal = opts.signal ? AbortSignal.any([opts.signal, timeout]) : timeout;
    try {
      const ask = (): Promise<SweepStatus> => client.sweepStatus({ signal, retry: NO_RETRY });
      status = await (opts.gate ? opts.gate(ask) : ask());
      lastAnswer = clock.now();
      lastError = undefined;
      opts.onEvent?.({ kind: 'status', node, at: lastAnswer, status });
      if (isIdle(status, types)) return finish('done');
      if (state !== 'running') emit(node, 'running', { status });
      state = 'running';
    } catch (err) {
      if (opts.signal?.aborted) return finish('interrupted');
      lastError =
        err instanceof AbortedError && timeout.aborted
          ? `no answer within ${pollTimeout / 1000}s`
          : err instanceof NodeRequestError
            ? err.detail
            : err instanceof Error
              ? err.message
              : String(err);
      const silentFor = clock.now() - lastAnswer;
      if (silentFor >= lostAfter) return finish('lost', `no answer for ${Math.round(silentFor / 1000)}s: ${lastError}`);
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
  /** The node's message (failed), the poll error (lost), the preflight error (skipped), ... */
  error?: string;
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
  /** Poll until idle (default true); false leaves started nodes as `started`. */
  wait?: boolean;
  intervalMs?: number;
  lostAfterMs?: number;
  /** Overall limit for waiting, from when the DELETEs go out. */
  timeoutMs?: number;
  pollTimeoutMs?: number;
}

export function summarise(nodes: readonly { state: FinalSweepState }[]): SweepSummary {
  const summary = Object.fromEntries(FINAL_SWEEP_STATES.map((s) => [s, 0])) as SweepSummary;
  for (const n of nodes) summary[n.state]++;
  return summary;
}

/**
 * Sends the DELETE to each of `clients` (concurrently, once each) and, unless `wait` is false,
 * polls each started node until idle. `skipped` nodes (from the preflight) are carried into the
 * result so nothing is ever hidden. Order of the result follows `clients` then `skipped`.
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
  const sentAt = new Map<string, number>();
  const results = new Map<string, NodeSweepResult>();
  const seconds = (node: string): number | undefined => {
    const t = sentAt.get(node);
    return t === undefined ? undefined : Math.round(clock.now() - t) / 1000;
  };
  const limit = limiter(concurrency);

  for (const s of opts.skipped ?? []) {
    emit(s.node, 'skipped', { error: s.error?.detail ?? 'unreachable' });
    results.set(s.node, { node: s.node, state: 'skipped', error: `unreachable at preflight: ${s.error?.detail ?? 'no answer'}` });
  }
  const deadline = opts.timeoutMs !== undefined ? clock.now() + opts.timeoutMs : undefined;
  // Each node is a pipeline: its DELETE, then (as soon as that answers) its polls. DELETEs and polls
  // share one limiter, so at most `concurrency` requests are in flight across the cluster, and the
  // limiter's FIFO queue sends the DELETEs in node-list order.
  const one = async (c: NodeClient): Promise<void> => {
    try {
      await limit(async () => {
        if (opts.signal?.aborted) throw new AbortedError(c.url, 'not sent: interrupted before this node was reached');
        emit(c.url, 'sending');
        sentAt.set(c.url, clock.now());
        await c.sweepDelete(req, opts.signal ? { signal: opts.signal } : {});
      });
    } catch (err) {
      const aborted = err instanceof AbortedError || Boolean(opts.signal?.aborted);
      const state: FinalSweepState = aborted ? 'interrupted' : 'failed';
      const detail = err instanceof NodeRequestError ? err.detail : err instanceof Error ? err.message : String(err);
      const error = aborted && sentAt.has(c.url) ? 'interrupted while sending: the node may have started the sweep (check tsnode status)' : detail;
      emit(c.url, state, { error });
      const s = seconds(c.url);
      results.set(c.url, { node: c.url, state, error, ...(s !== undefined && !aborted ? { seconds: s } : {}) });
      return;
    }
    emit(c.url, 'started');
    if (!wait) {
      results.set(c.url, { node: c.url, state: 'started', seconds: seconds(c.url)! });
      return;
    }
    const r = await pollUntilIdle(c, {
      gate: limit,
      types: req.types,
      // The DELETE just answered "started": the node is running by definition, so the first poll
      // waits a moment; then the gaps ramp up to the interval (small sweeps finish fast).
      initialDelayMs: Math.min(FIRST_POLL_MS, opts.intervalMs ?? DEFAULT_POLL_INTERVAL_MS),
      rampFromMs: Math.min(FIRST_POLL_MS, opts.intervalMs ?? DEFAULT_POLL_INTERVAL_MS),
      ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
      ...(opts.lostAfterMs !== undefined ? { lostAfterMs: opts.lostAfterMs } : {}),
      ...(opts.pollTimeoutMs !== undefined ? { pollTimeoutMs: opts.pollTimeoutMs } : {}),
      ...(deadline !== undefined ? { deadline } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
      ...(opts.onEvent ? { onEvent: opts.onEvent } : {}),
      clock,
    });
    const error = r.state === 'interrupted' ? 'stopped watching: the sweep keeps running on the node' : r.error;
    results.set(r.node, { node: r.node, state: r.state, ...(error ? { error } : {}), seconds: seconds(r.node)!, ...(r.status ? { status: r.status } : {}) });
  };
  await Promise.all(clients.map(one));
  const nodes = [...clients.map((c) => results.get(c.url)!), ...(opts.skipped ?? []).map((s) => results.get(s.node)!)];
  return { request: req, nodes, summary: summarise(nodes), interrupted: Boolean(opts.signal?.aborted) };
}

export interface ClusterSweepOptions extends StartOptions {
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
  if (opts.confirm && !(await opts.confirm({ ...plan, preflight: pre }))) throw new SweepNotConfirmedError();
  const sending = new Set(plan.send);
  return startAndWait(
    clients.filter((c) => sending.has(c.url)),
    req,
    { ...opts, skipped: plan.skipped },
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
