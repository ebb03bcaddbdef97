/**
 * The cluster sweep as one destructive run, the same for `tsnode sweep` and for a script:
 * lock the target set, preflight (every node's status; busy and unreachable rules; identity,
 * coverage and spans; the extension checks such as replication lag or clock skew), confirm, look
 * again after a confirmation (a person may take minutes), journal a start line, one DELETE per node
 * and wait for each, then the outcome: exit code, the nodes left (ring nodes --allow-partial left
 * out among them), the catch-up, the journal's end line. A refusal is journaled and thrown. Nothing
 * here prints: stages and node states go out as events.
 */
import { randomBytes } from 'node:crypto';
import type { NodeClient } from '../client/node-client.js';
import { clusterCheck, type ClusterCheckOptions, type ClusterCheckReport, type CoverageOutcome } from '../client/sweep-checks.js';
import {
  assessPreflight,
  baselineOf,
  preflightSweep,
  runPreflightChecks,
  SweepRefusedError,
  type Preflight,
  type PreflightCheck,
  type PreflightNode,
} from '../client/sweep-preflight.js';
import { SweepNotConfirmedError, startAndWait, summarise, type ClusterSweepResult, type StartOptions } from '../client/sweep.js';
import { lagCheck, markLateData } from '../client/sweep-lag.js';
import { clockSkewCheck } from '../client/clock-skew.js';
import type { LagReport } from '../client/replication-lag.js';
import { AbortedError } from '../client/errors.js';
import type { SweepRequest, SweepStatus } from '../protocol/index.js';
import { catchUpFor, catchUpIsPartial, type CatchUp } from './catch-up.js';
import { RunInterruptedError } from './errors.js';
import { notDone, notSweptOf, sweepExitCode, type NotSwept, type RunExitCode, type SweptEarlier } from './outcome.js';
import type { JournaledCoverage, JournaledSweep, SweepEndEntry, SweepStartEntry } from './records.js';
import { guardRun, type RunRecordHooks } from './refusal.js';

/** What the confirmation hook is shown: the nodes about to be swept and the ones left out. */
export interface SweepConfirmation {
  send: string[];
  skipped: PreflightNode[];
  preflight: Preflight;
  report: ClusterCheckReport | undefined;
}

/** The run's stages, for a caller that shows them. */
export type SweepStage =
  /** The preflight passed: what it found (the coverage report, the nodes to send to). */
  | ({ kind: 'checked' } & SweepConfirmation)
  /** The DELETEs go out now. */
  | { kind: 'sending'; send: string[]; skipped: string[] };

/**
 * Checks that run after the busy/unreachable rules and before anything is sent. The named
 * extension point for what other parts of tsnode check before a destructive run (replication
 * lag, clock skew): each returns the problems that refuse the run.
 */
export type PreflightExtension = PreflightCheck;

export interface ClusterSweepOptions extends StartOptions, RunRecordHooks {
  /** Sweep nodes that are already sweeping (their running sweep is cancelled and replaced). */
  force?: boolean;
  /** Leave out nodes that do not answer the preflight, reporting them as `skipped`. */
  skipUnreachable?: boolean;
  /**
   * The identity, ring coverage and span checks (the CLI's): on unless false. `allowPartial` goes
   * ahead when the list misses ring nodes; those are then reported as not swept (exit 3).
   */
  cluster?: ClusterCheckOptions | false;
  /** Extra preflight rules (see PreflightExtension). */
  checks?: readonly PreflightExtension[];
  /**
   * A replicating ring (client/sweep-lag.ts): the preflight refuses while data is in flight to a
   * node it would sweep (default), or accepts up to `allowLagSeconds`; after the wait, a node data
   * reached late ends `late_data`. False: lag is not read at all.
   */
  replicationLag?: { allowLagSeconds?: number; onReport?: (r: LagReport) => void } | false;
  /**
   * A cut-off pinned from this host's clock (an age such as 90d): the preflight refuses a node
   * whose clock (its HTTP Date) differs by more than `maxSkewMs`, named as `limitName` (the
   * flag that sets it). Checked after `checks`, before the replication lag.
   */
  clockSkew?: { maxSkewMs: number; limitName?: string; now?: () => number };
  /**
   * Called after a clean preflight; false stops the run (SweepNotConfirmedError), 'interrupted'
   * too (RunInterruptedError). When given, and without `force`, the nodes are looked at again
   * afterwards: a sweep someone started meanwhile refuses the run rather than being cancelled.
   */
  confirm?: (p: SweepConfirmation) => boolean | 'interrupted' | Promise<boolean | 'interrupted'>;
  onStage?: (s: SweepStage) => void;
  /** The identity/coverage/span check's report, as soon as it is made (also when it refuses the run). */
  onReport?: (r: ClusterCheckReport) => void;
  /** The run's id in the journal (default: random). */
  runId?: string;
  /** What the journal says about the run (who, where the nodes came from, the catch-up's flags). */
  described?: Omit<JournaledSweep, 'before' | 'types' | 'nntRollups' | 'histogramRollups'>;
  /**
   * Of the ring nodes --allow-partial left out, the ones an earlier run already swept for this
   * very request (the journal knows; a catch-up names only the nodes left): by node URL, that run's
   * id. They are not counted as left.
   */
  sweptEarlier?: (missing: NotSwept) => ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>>;
  /** Take the target lock in this folder (the state dir's `locks/`); not with `force`, which replaces a running sweep on purpose. */
  lockDir?: string;
  onLockTakeOver?: (message: string) => void;
  /**
   * Around the DELETEs (receipts, cli/receipts.ts): `before` once the start line is journaled and
   * before the first DELETE, with the nodes about to be sent one; `after` once the waiting ended,
   * before the end line. Awaited; reads only.
   */
  around?: { before(send: readonly string[]): Promise<void>; after(runId: string, result: ClusterSweepResult): Promise<void> };
}

/** A finished cluster sweep: one result per node, and what the run means. */
export interface ClusterSweepRun extends ClusterSweepResult {
  runId: string;
  exitCode: RunExitCode;
  /** The coverage check (absent when `cluster` was false). */
  coverage: CoverageOutcome | undefined;
  report: ClusterCheckReport | undefined;
  /** Ring nodes not in the list (--allow-partial): not swept, counted as left. */
  notSwept: NotSwept;
  /** Ring nodes not in the list that an earlier run swept for this request (see `sweptEarlier`). */
  sweptEarlier: SweptEarlier;
  /** Nodes not known to be done (the not-swept ring nodes among them). */
  pending: string[];
  /** Nodes whose sweep may still run (started, lost, unconfirmed, ...). */
  mayRun: string[];
  catchUp: CatchUp | undefined;
}

const MAY_RUN = new Set(['interrupted', 'started', 'timed_out', 'lost', 'unconfirmed']);

function journaledCoverage(c: CoverageOutcome | undefined): JournaledCoverage | null {
  return c ? { verdict: c.verdict, hash: c.hash, missing: c.missing, problems: c.problems, allowed: c.allowed } : null;
}

/** What every journal line of a sweep run carries. */
export function journaledSweep(req: SweepRequest, d: ClusterSweepOptions['described']): JournaledSweep {
  return {
    by: d?.by ?? 'library',
    before: req.before,
    types: req.types,
    nntRollups: req.types.includes('nnt') ? (req.nntRollups ?? 'all') : null,
    histogramRollups: req.types.includes('histogram') ? (req.histogramRollups ?? 'all') : null,
    headerPrefix: d?.headerPrefix ?? 'X-Service',
    nodeSource: d?.nodeSource ?? 'library',
    ...(d?.described !== undefined ? { described: d.described } : {}),
    ...(d?.profile !== undefined ? { profile: d.profile } : {}),
    carry: d?.carry ?? [],
    addBack: d?.addBack ?? [],
  };
}

/** Preflight, the rules, the extension checks: the nodes to send to, or a refusal thrown. */
async function preflight(clients: readonly NodeClient[], opts: ClusterSweepOptions, found: (r: ClusterCheckReport) => void) {
  const pre = await preflightSweep(clients, opts);
  const { send, skipped } = assessPreflight(pre, opts);
  const cluster = opts.cluster === false ? [] : [clusterCheck(clients, { ...(opts.cluster ?? {}), ...common(opts), onReport: found })];
  await runPreflightChecks(pre, [...cluster, ...(opts.checks ?? [])]);
  return { pre, send, skipped };
}

function common(opts: ClusterSweepOptions): { concurrency?: number; call?: { signal: AbortSignal } } {
  return { ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), ...(opts.signal ? { call: { signal: opts.signal } } : {}) };
}

/** After a confirmation: the nodes again; a sweep started meanwhile refuses the run. Returns fresher baselines. */
async function lookAgain(clients: readonly NodeClient[], send: readonly string[], opts: ClusterSweepOptions): Promise<Map<string, SweepStatus> | undefined> {
  const again = await preflightSweep(
    clients.filter((c) => send.includes(c.url)),
    { ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), ...(opts.signal ? { signal: opts.signal } : {}) },
  ).catch(() => undefined);
  if (opts.signal?.aborted) throw new RunInterruptedError('at the prompt');
  if (again?.busy.length) throw new SweepRefusedError(again.busy, [], [], 'recheck');
  return again ? baselineOf(again) : undefined;
}

/**
 * The whole cluster sweep (see the module comment). Throws SweepRefusedError (journaled),
 * SweepNotConfirmedError or RunInterruptedError before anything is sent; otherwise returns one
 * result per node and what the run means.
 */
export async function runClusterSweep(clients: readonly NodeClient[], req: SweepRequest, opts: ClusterSweepOptions = {}): Promise<ClusterSweepRun> {
  const runId = opts.runId ?? randomBytes(6).toString('hex');
  const sweep = journaledSweep(req, opts.described);
  let report: ClusterCheckReport | undefined;
  const identity = () => ({
    command: 'sweep',
    runId,
    by: sweep.by,
    nodes: clients.map((c) => c.url),
    nodeSource: sweep.nodeSource,
    profile: sweep.profile ?? null,
    sweep,
    catchUp:
      catchUpFor(
        req,
        sweep.headerPrefix,
        clients.map((c) => c.url),
        sweep,
        catchUpIsPartial(report?.coverage, clients.length, clients.length),
      ) ?? null,
  });
  const guard = { journal: opts.journal, onRefused: opts.onRefused, lockDir: opts.force ? undefined : opts.lockDir, onTakeOver: opts.onLockTakeOver, report: () => report };
  return guardRun(identity, guard, async () => {
    let checked;
    try {
      const skew = opts.clockSkew ? [skewRule(clients, opts.clockSkew, opts)] : [];
      const lag = opts.replicationLag === false ? [] : [lagRule(clients, opts)];
      checked = await preflight(clients, { ...opts, checks: [...(opts.checks ?? []), ...skew, ...lag] }, (r) => {
        report = r;
        opts.onReport?.(r);
      });
    } catch (err) {
      if (err instanceof AbortedError || opts.signal?.aborted) throw new RunInterruptedError('during the status check');
      throw err;
    }
    const { pre, send, skipped } = checked;
    const baseline = baselineOf(pre);
    const shown: SweepConfirmation = { send, skipped, preflight: pre, report };
    opts.onStage?.({ kind: 'checked', ...shown });
    if (send.length && opts.confirm) {
      const answer = await opts.confirm(shown);
      if (answer === 'interrupted') throw new RunInterruptedError('at the prompt');
      if (!answer) throw new SweepNotConfirmedError();
      if (!opts.force) for (const [node, status] of (await lookAgain(clients, send, opts)) ?? []) baseline.set(node, status);
    }
    return sendAndWait(clients, req, { ...opts, runId, sweep, report, send, skipped, baseline });
  });
}

type Sending = ClusterSweepOptions & {
  runId: string;
  sweep: JournaledSweep;
  report: ClusterCheckReport | undefined;
  send: string[];
  skipped: PreflightNode[];
  baseline: Map<string, SweepStatus>;
};

/** The clock rule of the preflight (a cut-off from this host's clock), for every node that answered. */
function skewRule(clients: readonly NodeClient[], skew: NonNullable<ClusterSweepOptions['clockSkew']>, opts: ClusterSweepOptions): PreflightExtension {
  return clockSkewCheck(clients, {
    maxSkewMs: skew.maxSkewMs,
    limitName: skew.limitName ?? 'maxSkewMs',
    concurrency: opts.concurrency ?? 32,
    call: opts.signal ? { signal: opts.signal } : {},
    ...(skew.now ? { now: skew.now } : {}),
  });
}

/** The replication-lag rule of the preflight, for every node of the run. */
function lagRule(clients: readonly NodeClient[], opts: ClusterSweepOptions): PreflightExtension {
  const lag = opts.replicationLag === false ? {} : (opts.replicationLag ?? {});
  return lagCheck(
    clients,
    clients.map((c) => c.url),
    {
      ...(lag.allowLagSeconds !== undefined ? { allowLagSeconds: lag.allowLagSeconds } : {}),
      ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      call: opts.signal ? { signal: opts.signal } : {},
      ...(lag.onReport ? { onReport: lag.onReport } : {}),
    },
  );
}

/** The journal's start line, the DELETEs and the waiting, the outcome and the end line. */
async function sendAndWait(clients: readonly NodeClient[], req: SweepRequest, o: Sending): Promise<ClusterSweepRun> {
  const coverage = journaledCoverage(o.report?.coverage);
  const wait = o.wait ?? true;
  // What the nodes' results will mean, fixed from the request and the options before anything is sent.
  const end = runEnd(req, o, wait, coverage);
  const start: SweepStartEntry = { kind: 'sweep.start', run: o.runId, ...o.sweep, nodes: [...o.send, ...o.skipped.map((x) => x.node)], force: Boolean(o.force), wait, coverage };
  o.journal?.append(start);
  await o.around?.before(o.send);
  o.onStage?.({ kind: 'sending', send: o.send, skipped: o.skipped.map((x) => x.node) });
  const sending = new Set(o.send);
  const { journal: _j, onRefused: _r, confirm: _c, checks: _k, cluster: _cl, around: _a, replicationLag: _l, clockSkew: _s, ...start_ } = o;
  let result = await startAndWait(
    clients.filter((c) => sending.has(c.url)),
    req,
    { ...start_, baseline: o.baseline, skipped: o.skipped },
  );
  // A replicating ring: look again, so a node data reached after its sweep is not called done.
  if (o.replicationLag !== false && wait && !result.interrupted) {
    const late = await markLateData(result.nodes, clients, req.types, {
      ...(o.concurrency !== undefined ? { concurrency: o.concurrency } : {}),
      call: o.signal ? { signal: o.signal } : {},
    });
    result = { ...result, nodes: late.nodes, summary: summarise(late.nodes) };
  }
  await o.around?.after(o.runId, result);
  return end(result);
}

/**
 * The end of a run, as a function of its nodes' results: the ring nodes left out (and the ones an
 * earlier run swept), the exit code, the nodes left, the catch-up, the journal's end line.
 */
function runEnd(req: SweepRequest, o: Sending, wait: boolean, coverage: JournaledCoverage | null): (result: ClusterSweepResult) => Promise<ClusterSweepRun> {
  return async (result) => {
    const missing = notSweptOf(o.report?.coverage);
    const earlierRuns = missing.length && o.sweptEarlier ? await o.sweptEarlier(missing) : new Map<string, string>();
    const sweptEarlier: SweptEarlier = missing.filter((m) => earlierRuns.has(m.url)).map((m) => ({ ...m, run: earlierRuns.get(m.url)! }));
    const notSwept = missing.filter((m) => !earlierRuns.has(m.url));
    const exitCode = sweepExitCode(result, wait, notSwept.length);
    const pending = notDone(result, notSwept);
    const total = result.nodes.length + notSwept.length;
    const catchUp = catchUpFor(req, o.sweep.headerPrefix, pending, o.sweep, catchUpIsPartial(o.report?.coverage, pending.length, total));
    const end: SweepEndEntry = {
      kind: 'sweep.end',
      run: o.runId,
      ...o.sweep,
      nodes: [
        ...result.nodes.map((n) => ({
          node: n.node,
          state: n.state,
          reason: n.reason,
          ...(n.error ? { error: n.error } : {}),
          ...(n.other ? { other: n.other } : {}),
          ...(n.seconds !== undefined ? { seconds: n.seconds } : {}),
        })),
        // A ring node the run went ahead without is not finished: history counts it as left.
        ...notSwept.map((m) => ({ node: m.url, state: 'not_swept', reason: `ring node ${m.id} not in the node list: not swept (--allow-partial)` })),
        ...sweptEarlier.map((m) => ({ node: m.url, state: 'not_swept', reason: `ring node ${m.id} not in the node list: swept by run ${m.run}`, sweptBy: m.run })),
      ],
      summary: { ...result.summary, ...(notSwept.length ? { not_swept: notSwept.length } : {}) },
      interrupted: result.interrupted,
      exit: exitCode,
      catchUp: catchUp ?? null,
      coverage,
    };
    o.journal?.append(end);
    const mayRun = result.nodes.filter((n) => MAY_RUN.has(n.state)).map((n) => n.node);
    return { ...result, runId: o.runId, exitCode, coverage: o.report?.coverage, report: o.report, notSwept, sweptEarlier, pending, mayRun, catchUp };
  };
}
