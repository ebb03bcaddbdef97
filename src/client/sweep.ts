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
import { TsnodeError } from '../tsnode-error.js';
import type { SweepRequest, SweepStatus } from '../protocol/index.js';
import { systemClock } from './clock.js';
import { limiter } from './concurrency.js';
import type { NodeClient } from './node-client.js';
import { sweepOneNode, type NodeSweepResult } from './sweep-node.js';
import { preflightProblem, type CommonOptions, type PreflightNode } from './sweep-preflight.js';
import { FINAL_SWEEP_STATES, stateEmitter, type FinalSweepState } from './sweep-states.js';

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
  const emit = stateEmitter(opts.onEvent, clock);
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

/** Thrown when `confirm` declined: nothing was sent. `what` names the run (`delete not confirmed: nothing was deleted`). */
export class SweepNotConfirmedError extends TsnodeError {
  declare readonly code: 'sweep_not_confirmed';
  constructor(what = 'sweep', nothing = 'nothing was sent') {
    super('sweep_not_confirmed', `${what} not confirmed: ${nothing}`);
    this.name = 'SweepNotConfirmedError';
  }
}

// The whole cluster sweep (preflight, confirm, DELETEs, outcome, journal) is the run core's: src/run/sweep.ts runClusterSweep.
