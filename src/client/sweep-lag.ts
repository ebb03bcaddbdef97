/**
 * A sweep on a replicating ring: refused while data is in flight towards a node it would sweep
 * (unless the caller accepts that much lag), and, once it ran, `late_data` for a node whose sweep
 * finished while a peer still held journaled data for it, or whose status counts records below
 * the cut-off that arrived after the sweep began. Sweeps are node-local: data on its way lands
 * after the delete and is back the next morning.
 */
import type { DataType, SweepStatus } from '../protocol/index.js';
import { fanOut } from './fan-out.js';
import type { CallOptions, NodeClient } from './node-client.js';
import { describeLag, hasLag, lateRecords, readReplicationLag, type LagReport, type NodeLag } from './replication-lag.js';
import type { NodeSweepResult } from './sweep-node.js';
import type { PreflightCheck, PreflightProblem } from './sweep-preflight.js';

/**
 * How a destructive run treats a replicating ring: refuse while data is in flight towards a node
 * it would sweep (default), or accept up to `allowLagSeconds`; `onReport` is shown what was read.
 * False: lag is not read at all.
 */
export type ReplicationLagOption = { allowLagSeconds?: number; onReport?: (r: LagReport) => void } | false;

export interface LagCheckOptions {
  /** The most lag (seconds) a swept node may have; absent: none (any data in flight refuses the sweep). */
  allowLagSeconds?: number;
  concurrency?: number;
  call?: CallOptions;
  /** What was read, for the caller to show (also when the sweep goes ahead). */
  onReport?: (report: LagReport) => void;
}

/**
 * The preflight rule: reads the lag of every node of `ring` (the whole ring: the peers hold the
 * journals) and refuses the sweep for each of `swept` with data in flight beyond the allowed lag.
 */
export function lagCheck(ring: readonly NodeClient[], swept: readonly string[], opts: LagCheckOptions = {}): PreflightCheck {
  return () => lagProblems(ring, swept, opts);
}

/** What lagCheck refuses, for a run without a sweep preflight (`tsnode delete`). */
export async function lagProblems(ring: readonly NodeClient[], swept: readonly string[], opts: LagCheckOptions = {}): Promise<PreflightProblem[]> {
  const report = await readReplicationLag(ring, { ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), ...(opts.call ? { call: opts.call } : {}) });
  opts.onReport?.(report);
  const allowed = opts.allowLagSeconds;
  return report.nodes
    .filter((n) => swept.includes(n.node) && hasLag(n) && (allowed === undefined || (n.lagSeconds ?? 0) > allowed))
    .map((n) => ({
      node: n.node,
      message: `replication is behind: ${describeLag(n)}; records older than the cut-off may still be on their way to it${allowed !== undefined ? ` (more than the ${allowed}s that --allow-lag or the profile's allow_lag accepts)` : ''}`,
    }));
}

/** What the look after a run found for one node that finished. */
export interface LateLook {
  lag: NodeLag | undefined;
  lateRecords: number;
  /** Set: the node ends `late_data`, and this says why (one line, for its reason). */
  late?: string;
}

/**
 * The look after a run at the nodes that finished (`finished`: node URL to the status its run
 * ended with): the lag of the whole ring again and each finished node's sweep status. A node with
 * data still in flight towards it, or late records its status counts, gets `late`.
 */
export async function lookForLateData(
  finished: ReadonlyMap<string, SweepStatus | undefined>,
  ring: readonly NodeClient[],
  types: readonly DataType[],
  opts: { concurrency?: number; call?: CallOptions } = {},
): Promise<{ looks: Map<string, LateLook>; report: LagReport }> {
  const call = opts.call ?? {};
  const report = await readReplicationLag(ring, { ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), call });
  const done = ring.filter((c) => finished.has(c.url));
  const statuses = new Map((await fanOut(done, (c) => c.sweepStatus({ ...call, probe: true }))).flatMap((o) => (o.ok ? [[o.node, o.value] as const] : [])));
  const looks = new Map<string, LateLook>();
  for (const [node, status] of finished) {
    const lag = report.nodes.find((l) => l.node === node);
    const late = lateRecords(statuses.get(node) ?? status, types);
    const why: string[] = [];
    if (lag && hasLag(lag)) why.push(`a peer still held data for it when its sweep finished (${describeLag(lag)})`);
    if (late.records > 0)
      why.push(
        `${late.records} record${late.records === 1 ? '' : 's'} below the cut-off arrived after the sweep began${late.oldest !== null ? ` (the oldest at ${late.oldest})` : ''}`,
      );
    looks.set(node, {
      lag,
      lateRecords: late.records,
      ...(why.length ? { late: `the sweep finished, but ${why.join('; ')}: data older than the cut-off may be back; repeat the sweep once its lag is 0` } : {}),
    });
  }
  return { looks, report };
}

/** Appended to a finished node's reason when no node reports lag. */
export const LAG_NOT_CHECKED = 'replication could not be checked (the nodes report no lag)';

/**
 * After the run: every `done` node is looked at again (lookForLateData). Data still in flight
 * towards it, or late records its status counts, make it `late_data`; with no lag reported
 * anywhere it stays `done`, its reason saying replication could not be checked. Every node's
 * result carries the lag read.
 */
export async function markLateData(
  nodes: readonly NodeSweepResult[],
  ring: readonly NodeClient[],
  types: readonly DataType[],
  opts: { concurrency?: number; call?: CallOptions } = {},
): Promise<{ nodes: NodeSweepResult[]; report: LagReport }> {
  const finished = new Map(nodes.filter((n) => n.state === 'done').map((n) => [n.node, n.status] as const));
  const { looks, report } = await lookForLateData(finished, ring, types, opts);
  const out = nodes.map((n): NodeSweepResult => {
    const lag = report.nodes.find((l) => l.node === n.node);
    const withLag: NodeSweepResult = { ...n, ...(lag ? { lag } : {}) };
    const look = looks.get(n.node);
    if (n.state !== 'done' || !look) return withLag;
    withLag.lateRecords = look.lateRecords;
    if (look.late) return { ...withLag, state: 'late_data', reason: look.late };
    if (!report.checked) return { ...withLag, reason: `${n.reason}; ${LAG_NOT_CHECKED}` };
    return withLag;
  });
  return { nodes: out, report };
}
