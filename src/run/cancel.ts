/**
 * `sweep cancel` as a destructive run: the identity and coverage checks (a cancel that misses ring
 * nodes leaves their sweeps running), confirmation, one GET /sweep_delete/cancel per node, the
 * journal line, the exit code. A refusal is journaled (`run.refused`) and thrown. No target lock:
 * a cancel is how an operator stops a sweep this very host may be running.
 */
import { randomBytes } from 'node:crypto';
import { fanOut } from '../client/fan-out.js';
import type { NodeClient } from '../client/node-client.js';
import { gatherClusterFacts, judgeCluster, type ClusterCheckReport } from '../client/sweep-checks.js';
import { runningTypes, SweepRefusedError } from '../client/sweep-preflight.js';
import { SweepNotConfirmedError } from '../client/sweep.js';
import { RunInterruptedError } from './errors.js';
import { runExitCode, type RunExitCode } from './outcome.js';
import type { SweepCancelEntry } from './records.js';
import { guardRun, type RunRecordHooks } from './refusal.js';

export interface CancelRow {
  node: string;
  /** `cancelling` (a sweep was running), `idle` (none was), `no_sweep_api` (404: a store without it), `failed` (no usable answer). */
  state: 'cancelling' | 'idle' | 'no_sweep_api' | 'failed';
  /** The types that were sweeping. */
  cancelled: string[];
  /** Why it failed: the client's error code and message. */
  error: { code: string; message: string } | null;
}

export interface SweepCancelOptions extends RunRecordHooks {
  allowPartial?: boolean;
  concurrency?: number;
  signal?: AbortSignal;
  /** After clean checks: false stops the run (SweepNotConfirmedError), 'interrupted' too. */
  confirm?: (nodes: readonly string[]) => boolean | 'interrupted' | Promise<boolean | 'interrupted'>;
  onReport?: (r: ClusterCheckReport) => void;
  runId?: string;
  /** What the journal says about the run. */
  described?: { by: string; nodeSource: string; described?: string; profile?: string | null };
}

export interface SweepCancelRun {
  runId: string;
  rows: CancelRow[];
  report: ClusterCheckReport;
  exitCode: RunExitCode;
}

/** Cancels the running sweeps on `clients` (see the module comment). */
export async function runSweepCancel(clients: readonly NodeClient[], opts: SweepCancelOptions = {}): Promise<SweepCancelRun> {
  const runId = opts.runId ?? randomBytes(6).toString('hex');
  const d = opts.described ?? { by: 'library', nodeSource: 'library' };
  let report: ClusterCheckReport | undefined;
  const identity = () => ({ command: 'sweep cancel', runId, by: d.by, nodes: clients.map((c) => c.url), nodeSource: d.nodeSource, profile: d.profile ?? null });
  return guardRun(identity, { journal: opts.journal, onRefused: opts.onRefused, report: () => report }, async () => {
    const call = opts.signal ? { signal: opts.signal } : {};
    const checked = judgeCluster(await gatherClusterFacts(clients, { ...(opts.concurrency ? { concurrency: opts.concurrency } : {}), call }), {
      allowPartial: opts.allowPartial ?? false,
    });
    report = checked;
    opts.onReport?.(checked);
    if (opts.signal?.aborted) throw new RunInterruptedError('during the checks');
    if (checked.problems.length) throw new SweepRefusedError([], [], checked.problems);
    if (opts.confirm) {
      const answer = await opts.confirm(clients.map((c) => c.url));
      if (answer === 'interrupted') throw new RunInterruptedError('at the prompt');
      if (!answer) throw new SweepNotConfirmedError('cancel');
    }
    const outcomes = await fanOut(clients, (c) => c.cancelSweep(call), { concurrency: opts.concurrency ?? 32 });
    const rows: CancelRow[] = outcomes.map((o) => {
      if (!o.ok) {
        const state = o.error.code === 'no_sweep_api' ? 'no_sweep_api' : 'failed';
        return { node: o.node, state, cancelled: [], error: { code: o.error.code, message: o.error.detail } };
      }
      const cancelled = runningTypes(o.value);
      return { node: o.node, state: cancelled.length ? 'cancelling' : 'idle', cancelled, error: null };
    });
    const good = rows.filter((r) => r.state === 'cancelling' || r.state === 'idle').length;
    const exitCode = runExitCode({ good, total: rows.length, notSwept: 0, interrupted: Boolean(opts.signal?.aborted) });
    const c = checked.coverage;
    // The journal keeps its own shape (a file format): the error as its message.
    const entry: SweepCancelEntry = {
      kind: 'sweep.cancel',
      run: runId,
      by: d.by,
      nodeSource: d.nodeSource,
      ...(d.described !== undefined ? { described: d.described } : {}),
      profile: d.profile ?? null,
      nodes: rows.map((r) => ({ node: r.node, state: r.state, cancelled: r.cancelled, error: r.error?.message ?? null })),
      coverage: { verdict: c.verdict, hash: c.hash, missing: c.missing, problems: c.problems, allowed: c.allowed },
    };
    opts.journal?.append(entry);
    return { runId, rows, report: checked, exitCode };
  });
}
