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
import { connectNodes, type NetworkSettings, type NodeSource } from '../client/network.js';
import type { DiscoveredRing } from '../client/discovery.js';
import { lookScopeOf, type Receipt } from '../client/receipt.js';
import { ReceiptHook } from '../client/receipt-hook.js';
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
import type { SweepRequest } from '../protocol/index.js';
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
  | { kind: 'sending'; send: string[]; skipped: string[] }
  /** A target the run connected to itself (sweepTarget): its nodes, and the ring when they came from a seed. */
  | { kind: 'connected'; nodes: string[]; ring: DiscoveredRing | undefined };

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
   * Around the DELETEs, for a script's own reads (the receipt is `receipt`'s): `before` once the
   * start line is journaled and before the first DELETE, with the nodes about to be sent one (URLs
   * and clients); `after` once the waiting ended, before the end line. Awaited; reads only.
   */
  around?: { before(send: readonly string[], clients: readonly NodeClient[]): Promise<void>; after(runId: string, result: ClusterSweepResult): Promise<void> };
  /**
   * Take a receipt (client/receipt-hook.ts) of a run that waits: the inventories of the nodes sent
   * a DELETE, before the first and after the waiting (`settleMs` later), journaled as a `receipt`
   * line and returned in the result; none for an interrupted run. Reads only.
   */
  receipt?: { settleMs: number; now?: () => number };
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
  /** The receipt, when one was asked for (`receipt`) and taken; null otherwise. */
  receipt: Receipt | null;
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

/**
 * The whole cluster sweep (see the module comment). Throws SweepRefusedError (journaled),
 * SweepNotConfirmedError or RunInterruptedError before anything is sent; otherwise returns one
 * result per node and what the run means.
 */
export async function runClusterSweep(clients: readonly NodeClient[], req: SweepRequest, opts: ClusterSweepOptions = {}): Promise<ClusterSweepRun> {
  // dryRun is sweepTarget's: forced off here, so the result is always a run.
  return (await sweepOn(clients, req, { ...opts, dryRun: false })) as ClusterSweepRun;
}

/**
 * Where the run's nodes come from when it connects to them itself (the CLI's way): a list, or a
 * seed whose ring is discovered, and the network to reach them with.
 */
export interface SweepTarget {
  source: NodeSource;
  network: NetworkSettings;
  /** How the journal names where the nodes came from, once they are known (`nodes: profile prod, 6 nodes`). */
  describe?: (nodes: readonly string[], ring: DiscoveredRing | undefined) => string;
}

/** A dry run: the nodes the sweep would send its DELETE to; nothing was sent, not even a status check. */
export interface SweepDryRun {
  dryRun: true;
  nodes: string[];
}

/**
 * runClusterSweep on a target it connects to itself (a seed's ring discovered first): the same run,
 * with the lock taken once the nodes are known and the network closed at the end; with `dryRun`,
 * only the nodes it would send to. A seed that cannot be read throws before the `connected` stage.
 */
export async function sweepTarget(target: SweepTarget, req: SweepRequest, opts: ClusterSweepOptions & { dryRun?: boolean } = {}): Promise<ClusterSweepRun | SweepDryRun> {
  return sweepOn(target, req, opts);
}

async function sweepOn(on: readonly NodeClient[] | SweepTarget, req: SweepRequest, opts: ClusterSweepOptions & { dryRun?: boolean }): Promise<ClusterSweepRun | SweepDryRun> {
  const runId = opts.runId ?? randomBytes(6).toString('hex');
  // What the journal says about the run; where the nodes came from is said once they are known.
  const journaled = (described: string | undefined): JournaledSweep =>
    journaledSweep(req, described === undefined || opts.described === undefined ? opts.described : { ...opts.described, described });
  let sweep = journaled(undefined);
  const target = isTarget(on) ? on : undefined;
  // A target's clients are made once connected (in the body).
  let clients: readonly NodeClient[] = isTarget(on) ? [] : on;
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
  const lockDir = opts.force ? undefined : opts.lockDir;
  const guard = { journal: opts.journal, onRefused: opts.onRefused, lockDir, onTakeOver: opts.onLockTakeOver, report: () => report, lockWhenHeld: true };
  return guardRun(identity, guard, async (hold) => {
    const connected = target ? await connectNodes(target.source, target.network) : undefined;
    try {
      if (connected) {
        clients = connected.nodes.map((n) => connected.network.client(n));
        const described = target?.describe?.(connected.nodes, connected.ring);
        sweep = journaled(described);
        opts.onStage?.({ kind: 'connected', nodes: connected.nodes, ring: connected.ring });
      }
      if (opts.dryRun) return { dryRun: true, nodes: clients.map((c) => c.url) };
      hold();
      return await checkAndSend(clients, req, opts, { runId, sweep, found: (r) => (report = r) });
    } finally {
      await connected?.network.close();
    }
  });
}

function isTarget(on: readonly NodeClient[] | SweepTarget): on is SweepTarget {
  return !Array.isArray(on);
}

/** What a run hands on to its checks and its DELETEs: its id, the journal's description, the report's listener. */
interface RunRef {
  runId: string;
  sweep: JournaledSweep;
  found: (r: ClusterCheckReport) => void;
}

/**
 * The preflight, the confirmation and the look again, the journal's start line, the DELETEs and
 * the waiting, then the end. What the results will mean is fixed first (runEnd); from there on,
 * the nodes are asked and what they answer comes back as data.
 */
async function checkAndSend(clients: readonly NodeClient[], req: SweepRequest, opts: ClusterSweepOptions, run: RunRef): Promise<ClusterSweepRun> {
  let report: ClusterCheckReport | undefined;
  const end = runEnd(req, opts, run, () => report);
  const { pre, send, skipped } = await checkNodes(clients, opts, (r) => {
    report = r;
    run.found(r);
    opts.onReport?.(r);
  });
  const baseline = baselineOf(pre);
  const shown: SweepConfirmation = { send, skipped, preflight: pre, report };
  opts.onStage?.({ kind: 'checked', ...shown });
  if (send.length && opts.confirm) {
    const answer = await opts.confirm(shown);
    if (answer === 'interrupted') throw new RunInterruptedError('at the prompt');
    if (!answer) throw new SweepNotConfirmedError();
    // A person may take minutes: the nodes again; a sweep started meanwhile refuses the run rather than being cancelled.
    if (!opts.force) {
      const again = await preflightSweep(
        clients.filter((c) => send.includes(c.url)),
        { ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}), ...(opts.signal ? { signal: opts.signal } : {}) },
      ).catch(() => undefined);
      if (opts.signal?.aborted) throw new RunInterruptedError('at the prompt');
      if (again?.busy.length) throw new SweepRefusedError(again.busy, [], [], 'recheck');
      for (const [node, status] of again ? baselineOf(again) : []) baseline.set(node, status);
    }
  }
  const wait = opts.wait ?? true;
  const nodes = [...send, ...skipped.map((x) => x.node)];
  const start: SweepStartEntry = { kind: 'sweep.start', run: run.runId, ...run.sweep, nodes, force: Boolean(opts.force), wait, coverage: journaledCoverage(report?.coverage) };
  opts.journal?.append(start);
  const sending = clients.filter((c) => send.includes(c.url));
  // The receipt of a run that waits (no "after" without the waiting): the nodes sent a DELETE, before and after.
  const { receipt: asked } = opts;
  const hook =
    asked && wait && sending.length
      ? new ReceiptHook(sending, { settleMs: asked.settleMs, concurrency: opts.concurrency ?? 32, signal: opts.signal ?? new AbortController().signal, now: asked.now ?? Date.now })
      : undefined;
  await hook?.before(lookScopeOf([req]));
  await opts.around?.before(send, sending);
  opts.onStage?.({ kind: 'sending', send, skipped: skipped.map((x) => x.node) });
  const { journal: _j, onRefused: _r, confirm: _c, checks: _k, cluster: _cl, around: _a, receipt: _rc, replicationLag: _l, clockSkew: _s, ...start_ } = opts;
  let result = await startAndWait(sending, req, { ...start_, baseline, skipped });
  // A replicating ring: look again, so a node data reached after its sweep is not called done.
  if (opts.replicationLag !== false && wait && !result.interrupted) {
    const late = await markLateData(result.nodes, clients, req.types, {
      ...(opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {}),
      call: opts.signal ? { signal: opts.signal } : {},
    });
    result = { ...result, nodes: late.nodes, summary: summarise(late.nodes) };
  }
  const receipt = hook && !result.interrupted ? await hook.after(opts.journal, run.runId) : null;
  await opts.around?.after(run.runId, result);
  return end(result, receipt);
}

/**
 * The preflight: every node's status and the busy/unreachable rules, then the identity, coverage
 * and span check, the caller's `checks`, the clock (an age) and the replication lag. The nodes to
 * send to, or a refusal thrown (an interruption as RunInterruptedError).
 */
async function checkNodes(clients: readonly NodeClient[], opts: ClusterSweepOptions, found: (r: ClusterCheckReport) => void) {
  const skew = opts.clockSkew;
  const lag = opts.replicationLag === false ? undefined : (opts.replicationLag ?? {});
  const call = opts.signal ? { signal: opts.signal } : {};
  const concurrency = opts.concurrency !== undefined ? { concurrency: opts.concurrency } : {};
  const checks: PreflightExtension[] = [
    ...(opts.checks ?? []),
    ...(skew
      ? [
          clockSkewCheck(clients, {
            maxSkewMs: skew.maxSkewMs,
            limitName: skew.limitName ?? 'maxSkewMs',
            concurrency: opts.concurrency ?? 32,
            call,
            ...(skew.now ? { now: skew.now } : {}),
          }),
        ]
      : []),
    ...(lag
      ? [
          lagCheck(
            clients,
            clients.map((c) => c.url),
            { ...(lag.allowLagSeconds !== undefined ? { allowLagSeconds: lag.allowLagSeconds } : {}), ...concurrency, call, ...(lag.onReport ? { onReport: lag.onReport } : {}) },
          ),
        ]
      : []),
  ];
  try {
    const pre = await preflightSweep(clients, opts);
    const { send, skipped } = assessPreflight(pre, opts);
    const cluster = opts.cluster === false ? [] : [clusterCheck(clients, { ...(opts.cluster ?? {}), ...concurrency, ...(opts.signal ? { call } : {}), onReport: found })];
    await runPreflightChecks(pre, [...cluster, ...checks]);
    return { pre, send, skipped };
  } catch (err) {
    if (err instanceof AbortedError || opts.signal?.aborted) throw new RunInterruptedError('during the status check');
    throw err;
  }
}

/**
 * The end of a run, as a function of its nodes' results: the ring nodes left out (and the ones an
 * earlier run swept), the exit code, the nodes left, the catch-up, the journal's end line.
 */
function runEnd(
  req: SweepRequest,
  o: ClusterSweepOptions,
  run: RunRef,
  reported: () => ClusterCheckReport | undefined,
): (result: ClusterSweepResult, receipt: Receipt | null) => Promise<ClusterSweepRun> {
  const wait = o.wait ?? true;
  return async (result, receipt) => {
    const report = reported();
    const missing = notSweptOf(report?.coverage);
    const earlierRuns = missing.length && o.sweptEarlier ? await o.sweptEarlier(missing) : new Map<string, string>();
    const sweptEarlier: SweptEarlier = missing.filter((m) => earlierRuns.has(m.url)).map((m) => ({ ...m, run: earlierRuns.get(m.url)! }));
    const notSwept = missing.filter((m) => !earlierRuns.has(m.url));
    const exitCode = sweepExitCode(result, wait, notSwept.length);
    const pending = notDone(result, notSwept);
    const total = result.nodes.length + notSwept.length;
    const catchUp = catchUpFor(req, run.sweep.headerPrefix, pending, run.sweep, catchUpIsPartial(report?.coverage, pending.length, total));
    const end: SweepEndEntry = {
      kind: 'sweep.end',
      run: run.runId,
      ...run.sweep,
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
      coverage: journaledCoverage(report?.coverage),
    };
    o.journal?.append(end);
    const mayRun = result.nodes.filter((n) => MAY_RUN.has(n.state)).map((n) => n.node);
    return { ...result, runId: run.runId, exitCode, coverage: report?.coverage, report, notSwept, sweptEarlier, pending, mayRun, catchUp, receipt };
  };
}
