/**
 * A sweep on a replicating ring: refused while data is in flight towards a node it would sweep
 * (unless the caller accepts that much lag), and, once it ran, `late_data` for a node whose sweep
 * finished while a peer still held journaled data for it, or whose status counts records below
 * the cut-off that arrived after the sweep began. Sweeps are node-local: data on its way lands
 * after the delete and is back the next morning.
 */
import type { DataType } from '../protocol/index.js';
import { fanOut } from './fan-out.js';
import type { CallOptions, NodeClient } from './node-client.js';
import { describeLag, hasLag, lateRecords, readReplicationLag, type LagReport } from './replication-lag.js';
import type { NodeSweepResult } from './sweep-node.js';
import type { PreflightCheck } from './sweep-preflight.js';

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
  return async () => {
    const report = await readReplicationLag(ring, { ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), ...(opts.call ? { call: opts.call } : {}) });
    opts.onReport?.(report);
    const allowed = opts.allowLagSeconds;
    return report.nodes
      .filter((n) => swept.includes(n.node) && hasLag(n) && (allowed === undefined || (n.lagSeconds ?? 0) > allowed))
      .map((n) => ({
        node: n.node,
        message: `replication is behind: ${describeLag(n)}; records older than the cut-off may still be on their way to it${allowed !== undefined ? ` (more than --allow-lag ${allowed}s)` : ''}`,
      }));
  };
}

/**
 * After the run: every `done` node is looked at again. Data still in flight towards it, or late
 * records its status counts, make it `late_data`; with no lag reported anywhere it stays `done`,
 * its reason saying replication could not be checked. Every node's result carries the lag read.
 */
export async function markLateData(
  nodes: readonly NodeSweepResult[],
  ring: readonly NodeClient[],
  types: readonly DataType[],
  opts: { concurrency?: number; call?: CallOptions } = {},
): Promise<{ nodes: NodeSweepResult[]; report: LagReport }> {
  const call = opts.call ?? {};
  const report = await readReplicationLag(ring, { ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), call });
  const done = ring.filter((c) => nodes.some((n) => n.node === c.url && n.state === 'done'));
  const statuses = new Map((await fanOut(done, (c) => c.sweepStatus(call))).flatMap((o) => (o.ok ? [[o.node, o.value] as const] : [])));
  const out = nodes.map((n): NodeSweepResult => {
    const lag = report.nodes.find((l) => l.node === n.node);
    const withLag: NodeSweepResult = { ...n, ...(lag ? { lag } : {}) };
    if (n.state !== 'done') return withLag;
    const late = lateRecords(statuses.get(n.node) ?? n.status, types);
    withLag.lateRecords = late.records;
    const why: string[] = [];
    if (lag && hasLag(lag)) why.push(`a peer still held data for it when its sweep finished (${describeLag(lag)})`);
    if (late.records > 0)
      why.push(
        `${late.records} record${late.records === 1 ? '' : 's'} below the cut-off arrived after the sweep began${late.oldest !== null ? ` (the oldest at ${late.oldest})` : ''}`,
      );
    if (why.length) {
      return { ...withLag, state: 'late_data', reason: `the sweep finished, but ${why.join('; ')}: data older than the cut-off may be back; repeat the sweep once its lag is 0` };
    }
    if (!report.checked) return { ...withLag, reason: `${n.reason}; replication could not be checked (the nodes report no lag)` };
    return withLag;
  });
  return { nodes: out, report };
}
