/**
 * A sweep's preflight: `GET /sweep_delete` on every node before anything is sent, and the rules
 * that refuse a run (a node already sweeping, a node without a status, extra checks).
 */
import { TsnodeError } from '../tsnode-error.js';
import { DATA_TYPES, type DataType, type SweepStatus } from '../protocol/index.js';
import { systemClock, type Clock } from './clock.js';
import { fanOut } from './fan-out.js';
import { AbortedError, type NodeRequestError } from './errors.js';
import type { NodeClient } from './node-client.js';
import { stateEmitter, type SweepListener } from './sweep-states.js';

/** Types currently running on a node, from its status. */
export function runningTypes(status: SweepStatus): DataType[] {
  return DATA_TYPES.filter((t) => status[t].running);
}

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
  // It answered: a node without the sweep API is said to be one, never "unreachable".
  if (error.code === 'no_sweep_api') return `no sweep API: ${error.detail.replace(/^the node has no sweep API: /, '')}`;
  const silent = error.code === 'unreachable' || error.code === 'timeout' || error.code === 'tls' || error.code === 'aborted';
  return silent ? `unreachable: ${error.detail}` : `answered without a usable status: ${error.detail}`;
}

/** `GET /sweep_delete` on every node: who is idle, who is already sweeping, who does not answer. */
export async function preflightSweep(clients: readonly NodeClient[], opts: CommonOptions = {}): Promise<Preflight> {
  const clock = opts.clock ?? systemClock;
  const emit = stateEmitter(opts.onEvent, clock);
  clients.forEach((c) => emit(c.url, 'checking'));
  const outcomes = await fanOut(clients, async (c) => c.sweepStatus({ probe: true, ...(opts.signal ? { signal: opts.signal } : {}) }), {
    concurrency: opts.concurrency ?? 32,
    now: clock.now,
  });
  const nodes: PreflightNode[] = outcomes.map((o) => {
    if (!o.ok) {
      // A node that answered 404 to the sweep API is not unreachable: it has none.
      emit(o.node, o.error.code === 'no_sweep_api' ? 'no_sweep_api' : 'unreachable', { error: o.error.detail });
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
export class SweepRefusedError extends TsnodeError {
  declare readonly code: 'sweep_refused';
  constructor(
    readonly busy: readonly PreflightNode[],
    readonly unreachable: readonly PreflightNode[],
    readonly problems: readonly PreflightProblem[] = [],
    /** `preflight`, or `recheck`: the look after the confirmation found a sweep started meanwhile. */
    readonly phase: 'preflight' | 'recheck' = 'preflight',
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
    super('sweep_refused', `refusing to sweep: ${parts.join('; ')}`);
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

/** Statuses of the nodes that answered a preflight, by node URL (StartOptions.baseline). */
export function baselineOf(pre: Preflight): Map<string, SweepStatus> {
  return new Map(pre.nodes.filter((n) => n.status).map((n) => [n.node, n.status!]));
}
