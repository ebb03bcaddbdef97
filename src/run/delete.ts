/**
 * A scoped delete (`tsnode delete`) as one destructive run, the same for the CLI and for a script:
 * inside the run core's guard (target lock, refusals journaled), the coverage and reachability
 * check, the store's dry run on every node, the confirmation hook and a second look afterwards (a
 * person may take minutes), the journal's start line, the confirmed delete looping per node (each
 * round journaled with what it deleted, so an interrupted or killed run still says what went), the
 * after-look, then the outcome: per-node states, the receipt, the exit code, the catch-up, the
 * journal's end line. Nothing here prints: stages and rounds go out as events.
 */
import { randomBytes } from 'node:crypto';
import { AbortedError, NodeRequestError } from '../client/errors.js';
import { TsnodeError } from '../tsnode-error.js';
import type { NodeClient } from '../client/node-client.js';
import { gatherClusterFacts, judgeCluster, type ClusterCheckReport, type CoverageOutcome } from '../client/sweep-checks.js';
import { SweepRefusedError, type PreflightNode } from '../client/sweep-preflight.js';
import { lagProblems, type ReplicationLagOption } from '../client/sweep-lag.js';
import { SweepNotConfirmedError } from '../client/sweep.js';
import { deleteOnNodes, lookOnNodes, metricKey, type DeleteProgress, type NodeDeletion, type NodeLook, type TagDeleteRequest } from '../client/tag-delete.js';
import type { CarriedFlags, CatchUp } from './catch-up.js';
import { deleteCatchUp, deleteExitCode, foundOn, judgeNodes, notDeleted, type DeleteSpec, type NodeOutcome } from './delete-outcome.js';
import { RunInterruptedError } from './errors.js';
import { notSweptOf, type NotSwept, type RunExitCode, type SweptEarlier } from './outcome.js';
import type { JournaledCoverage, JournaledDelete } from './records.js';
import { guardRun, type RunRecordHooks } from './refusal.js';

/** What the dry run found, in numbers (the prompt and the log name them). */
export interface DeleteTotals {
  /** Distinct metrics with data to delete. */
  metrics: number;
  /** Metric copies over every node (a metric on two owners counts twice). */
  copies: number;
  /** Nodes with something to delete. */
  targets: number;
  /** Every node of the run. */
  nodes: number;
  /** Nodes left out: unreachable (--skip-unreachable) or their dry run failed. */
  skipped: number;
  /** Some node listed only `listLimit` metrics: the counts are a lower bound. */
  truncated: boolean;
}

/** What the confirmation hook is shown. */
export interface DeleteConfirmation {
  totals: DeleteTotals;
  looks: NodeLook[][];
  targets: string[];
}

export type DeleteStage =
  /** The coverage and reachability check passed: its report, and the unreachable nodes left out. */
  | { kind: 'checked'; report: ClusterCheckReport; skipped: Array<{ node: string; error: string }> }
  /** The dry run on every node (`again`: the second look after a confirmation). */
  | { kind: 'looked'; looks: NodeLook[][]; totals: DeleteTotals; again: boolean }
  /** The confirmed calls go out now. */
  | { kind: 'deleting'; targets: string[] }
  /** Every loop ended; the after-look goes out (not when interrupted). */
  | { kind: 'looking-after'; interrupted: boolean };

export interface DeleteRunOptions extends RunRecordHooks {
  /** Leave out nodes that do not answer (reported `skipped`, exit 3). */
  skipUnreachable?: boolean;
  /** Go ahead although the list misses ring nodes (or they disagree, or a rebalance runs). */
  allowPartial?: boolean;
  /** Stop after the dry run: nothing is deleted, nothing journaled (the lag is read and reported, never refused). */
  dryRun?: boolean;
  /**
   * A replicating ring (client/sweep-lag.ts, as for sweeps): refuse while data is in flight towards
   * a node of the run (default), or accept up to `allowLagSeconds`. False: lag is not read.
   */
  replicationLag?: ReplicationLagOption;
  /** Called after the dry run when there is something to delete; false stops the run (SweepNotConfirmedError), 'interrupted' too (RunInterruptedError). */
  confirm?: (c: DeleteConfirmation) => boolean | 'interrupted' | Promise<boolean | 'interrupted'>;
  onStage?: (s: DeleteStage) => void;
  /** One line per node and round (after the journal has it). */
  onProgress?: (p: DeleteProgress & { type?: string }) => void;
  /** The check's report as soon as it is made (also when it refuses the run). */
  onReport?: (r: ClusterCheckReport) => void;
  signal?: AbortSignal;
  runId?: string;
  /** What the journal says about the run: who, where the nodes came from, the profile. */
  described?: { by?: string; nodeSource?: string; described?: string; profile?: string | null };
  /** Of the ring nodes --allow-partial left out, those an earlier run of this very delete proved done (URL to its run id): they count as done, not left. */
  deletedEarlier?: (missing: NotSwept, request: JournaledDelete) => ReadonlyMap<string, string> | Promise<ReadonlyMap<string, string>>;
  /** The flags a catch-up carries and names (catch-up.ts carriedFlags). */
  carried?: CarriedFlags;
  /** Take the target lock in this folder (the state dir's `locks/`). */
  lockDir?: string;
  onLockTakeOver?: (message: string) => void;
}

export interface DeleteRun {
  runId: string;
  /** The dry run each node was judged against (the second look's after a confirmation). */
  looks: NodeLook[][];
  totals: DeleteTotals;
  report: ClusterCheckReport;
  /** One per node of the run (empty for a dry run, or when no node had anything to delete). */
  outcomes: NodeOutcome[];
  exitCode: RunExitCode;
  interrupted: boolean;
  catchUp: CatchUp | undefined;
  /** Ring nodes --allow-partial left out: never deleted on, so the run is partial (exit 3) and the catch-up names them. */
  notSwept: NotSwept;
  /** Ring nodes left out that an earlier run of the same delete proved done (with that run). */
  deletedEarlier: SweptEarlier;
  /** Nothing was sent but the dry run (`dryRun`), or no node had anything to delete. */
  stopped: 'dry-run' | 'nothing' | null;
}

const plain = (err: unknown): string => (err instanceof NodeRequestError ? err.message : err instanceof Error ? err.message : String(err));

function journaledCoverage(c: CoverageOutcome): JournaledCoverage {
  return { verdict: c.verdict, hash: c.hash, missing: c.missing, problems: c.problems, allowed: c.allowed };
}

/** Coverage and reachability: who is asked, who is left out; a problem no flag allows refuses the run. */
async function checkNodes(clients: readonly NodeClient[], spec: DeleteSpec, opts: DeleteRunOptions) {
  const facts = await gatherClusterFacts(clients, { concurrency: spec.concurrency, ...(opts.signal ? { call: { signal: opts.signal } } : {}) });
  const report = judgeCluster(facts, { allowPartial: opts.allowPartial });
  opts.onReport?.(report);
  const silent = facts.nodes.filter((n) => n.error !== undefined).map((n) => ({ node: n.url, error: n.error! }));
  const unreachable: PreflightNode[] = opts.skipUnreachable
    ? []
    : silent.map((s) => ({ node: s.node, running: [], error: new NodeRequestError(s.node, 'unreachable', s.error, { retryable: false }) }));
  const left = new Set(silent.map((s) => s.node));
  const ask = clients.filter((c) => !left.has(c.url));
  const lag = await lagRefusals(clients, ask, spec, opts);
  const problems = [...report.problems, ...lag];
  if (problems.length || unreachable.length) throw new SweepRefusedError([], unreachable, problems);
  return { ask, skipped: silent, report };
}

/** The replication-lag rule (as sweep's preflight): the whole ring is read, the nodes asked are judged; a dry run only reports. */
async function lagRefusals(ring: readonly NodeClient[], ask: readonly NodeClient[], spec: DeleteSpec, opts: DeleteRunOptions) {
  if (opts.replicationLag === false) return [];
  const lag = opts.replicationLag ?? {};
  const problems = await lagProblems(
    ring,
    ask.map((c) => c.url),
    {
      ...(lag.allowLagSeconds !== undefined ? { allowLagSeconds: lag.allowLagSeconds } : {}),
      concurrency: spec.concurrency,
      call: opts.signal ? { signal: opts.signal } : {},
      ...(lag.onReport ? { onReport: lag.onReport } : {}),
    },
  );
  return opts.dryRun ? [] : problems;
}

/** The dry run of every request on every node; with `metric`, only that metric counts, and a time-bounded query selecting others is refused. */
async function look(clients: readonly NodeClient[], spec: DeleteSpec, signal: AbortSignal | undefined): Promise<NodeLook[][]> {
  const looks = await Promise.all(spec.requests.map((req) => lookOnNodes(clients, req, { limit: spec.listLimit, concurrency: spec.concurrency, ...(signal ? { signal } : {}) })));
  if (!spec.metric) return looks;
  const want = metricKey(spec.metric);
  return looks.map((perNode) =>
    perNode.map((l) => {
      const others = l.metrics.filter((m) => metricKey(m) !== want && m.status === 'found');
      if (others.length && spec.requests[0]!.scope.kind === 'before') throw new DeleteSelectsOthersError(spec.metric!.metric, l.node, others.length, others[0]!.metric);
      return { ...l, metrics: l.metrics.filter((m) => metricKey(m) === want) };
    }),
  );
}

/**
 * `metric` with --before: its query (a time-bounded delete has no exact form) also selects other
 * metrics; nothing was deleted. A refusal of the delete (the CLI says `refusing to delete:` first).
 */
export class DeleteSelectsOthersError extends TsnodeError {
  declare readonly code: 'delete_selects_others';
  constructor(
    readonly metric: string,
    readonly node: string,
    readonly others: number,
    readonly example: string,
  ) {
    super('delete_selects_others', `the query for ${metric} also selects ${others} other metric${others === 1 ? '' : 's'} on ${node} (e.g. ${example}); nothing was deleted`, {
      hint: 'use a tag query that selects only what should go, and check it with tsnode find',
    });
    this.name = 'DeleteSelectsOthersError';
  }
}

/** A dry run that failed on some node refuses the run (unless --skip-unreachable: then the node is left out). */
function failedLooks(looks: NodeLook[][], opts: DeleteRunOptions, phase: 'preflight' | 'recheck'): Array<{ node: string; error: string }> {
  const failed = looks.flatMap((perNode) => perNode.filter((l) => l.error !== undefined)).map((l) => ({ node: l.node, error: `the dry run failed: ${l.error!}` }));
  if (failed.length && (!opts.skipUnreachable || phase === 'recheck')) {
    const silent = failed.map((f) => ({ node: f.node, running: [], error: new NodeRequestError(f.node, 'bad_answer', f.error, { retryable: false }) }));
    throw new SweepRefusedError([], silent, [], phase);
  }
  return failed;
}

function totalsOf(looks: NodeLook[][], asked: readonly NodeClient[], nodes: number, skipped: number): DeleteTotals {
  const found = new Set(looks.flatMap((p) => p.flatMap((l) => l.metrics.filter((m) => m.status === 'found').map(metricKey))));
  const targets = asked.filter((c) => foundOn(looks, c.url) > 0).length;
  return {
    metrics: found.size,
    copies: asked.reduce((n, c) => n + foundOn(looks, c.url), 0),
    targets,
    nodes,
    skipped,
    truncated: looks.some((p) => p.some((l) => l.incomplete)),
  };
}

/**
 * The whole delete run (see the module comment). Throws SweepRefusedError (journaled),
 * SweepNotConfirmedError or RunInterruptedError before anything is deleted; otherwise returns one
 * outcome per node and what the run means.
 */
export async function runDelete(clients: readonly NodeClient[], spec: DeleteSpec, opts: DeleteRunOptions = {}): Promise<DeleteRun> {
  const runId = opts.runId ?? randomBytes(6).toString('hex');
  const d = opts.described ?? {};
  let report: ClusterCheckReport | undefined;
  const identity = () => ({
    command: 'delete',
    runId,
    by: d.by ?? 'library',
    nodes: clients.map((c) => c.url),
    nodeSource: d.nodeSource ?? 'library',
    profile: d.profile ?? null,
    deleting: journaledRequest(spec),
  });
  const guard = { journal: opts.journal, onRefused: opts.onRefused, lockDir: opts.lockDir, onTakeOver: opts.onLockTakeOver, report: () => report };
  return guardRun(identity, guard, async () => {
    const checked = await checkNodes(clients, spec, {
      ...opts,
      onReport: (r) => {
        report = r;
        opts.onReport?.(r);
      },
    }).catch((err: unknown) => {
      if (err instanceof AbortedError || opts.signal?.aborted) throw new RunInterruptedError('during the node check');
      throw err;
    });
    opts.onStage?.({ kind: 'checked', report: checked.report, skipped: checked.skipped });
    return lookConfirmAndDelete(clients, spec, opts, { runId, ...checked });
  });
}

interface Checked {
  runId: string;
  ask: NodeClient[];
  skipped: Array<{ node: string; error: string }>;
  report: ClusterCheckReport;
}

/** 2-3. The dry run, the stop for --dry-run, the confirmation and its second look; then the delete. */
async function lookConfirmAndDelete(clients: readonly NodeClient[], spec: DeleteSpec, opts: DeleteRunOptions, c: Checked): Promise<DeleteRun> {
  let looks = await look(c.ask, spec, opts.signal);
  if (opts.signal?.aborted) throw new RunInterruptedError('during the dry run');
  const failed = failedLooks(looks, opts, 'preflight');
  let ask = c.ask.filter((x) => !failed.some((f) => f.node === x.url));
  const skipped = [...c.skipped, ...failed];
  let totals = totalsOf(looks, ask, clients.length, skipped.length);
  opts.onStage?.({ kind: 'looked', looks, totals, again: false });
  const done = (stopped: DeleteRun['stopped']): DeleteRun => ({
    runId: c.runId,
    looks,
    totals,
    report: c.report,
    outcomes: [],
    exitCode: 0,
    interrupted: false,
    catchUp: undefined,
    notSwept: notSweptOf(c.report.coverage),
    deletedEarlier: [],
    stopped,
  });
  if (opts.dryRun) return done('dry-run');
  // Ring nodes left out (--allow-partial) may hold what the query selects: the run still ends partial, with a catch-up for them.
  if (totals.targets === 0 && skipped.length === 0 && notSweptOf(c.report.coverage).length === 0) return done('nothing');
  if (opts.confirm && totals.targets > 0) {
    const answer = await opts.confirm({ totals, looks, targets: ask.filter((x) => foundOn(looks, x.url) > 0).map((x) => x.url) });
    if (answer === 'interrupted') throw new RunInterruptedError('at the prompt');
    if (!answer) throw new SweepNotConfirmedError('delete', 'nothing was deleted');
    // The second look: what the nodes hold now is what the receipt is judged against; a node that no longer answers refuses the run.
    looks = await look(ask, spec, opts.signal);
    if (opts.signal?.aborted) throw new RunInterruptedError('at the prompt');
    failedLooks(looks, opts, 'recheck');
    totals = totalsOf(looks, ask, clients.length, skipped.length);
    opts.onStage?.({ kind: 'looked', looks, totals, again: true });
  }
  ask = ask.filter((x) => foundOn(looks, x.url) > 0);
  return deleteAndProve(clients, spec, opts, { ...c, ask, skipped }, looks, totals);
}

/** What a delete asks, as its journal lines (and a refusal's) carry it: the query, the metric, the account, the scope. */
function journaledRequest(spec: DeleteSpec): JournaledDelete {
  const first = spec.requests[0]!.scope;
  return {
    query: spec.query,
    metric: spec.metric,
    account: spec.account,
    scope: first.kind === 'full' ? { kind: 'full' } : { kind: 'before', before: first.before, types: spec.requests.map((r) => (r.scope.kind === 'before' ? r.scope.type : 'all')) },
  };
}

/** The common fields of the journal's delete lines (a file format: keys kept as they are). */
function journaled(spec: DeleteSpec, opts: DeleteRunOptions, runId: string, report: ClusterCheckReport) {
  const d = opts.described ?? {};
  return {
    run: runId,
    by: d.by ?? 'library',
    ...journaledRequest(spec),
    nodeSource: d.nodeSource ?? 'library',
    described: d.described ?? null,
    profile: d.profile ?? null,
    coverage: journaledCoverage(report.coverage),
  };
}

/** 4-6. The start line, the confirmed loops (a line per round), the after-look, the outcome and the end line. */
async function deleteAndProve(
  clients: readonly NodeClient[],
  spec: DeleteSpec,
  opts: DeleteRunOptions,
  c: Checked,
  before: NodeLook[][],
  totals: DeleteTotals,
): Promise<DeleteRun> {
  const common = journaled(spec, opts, c.runId, c.report);
  opts.journal?.append({ kind: 'delete.start', ...common, nodes: clients.map((x) => x.url) });
  opts.onStage?.({ kind: 'deleting', targets: c.ask.map((x) => x.url) });
  const deletions: NodeDeletion[][] = [];
  for (const req of spec.requests) {
    if (opts.signal?.aborted) break;
    deletions.push(await deleteRequest(c.ask, req, spec, opts, c.runId));
  }
  const interrupted = Boolean(opts.signal?.aborted);
  opts.onStage?.({ kind: 'looking-after', interrupted });
  const after = interrupted ? undefined : await look(c.ask, spec, opts.signal);
  const outcomes = judgeNodes(
    clients.map((x) => x.url),
    spec,
    { before, skipped: c.skipped, deletions, after },
  );
  const missing = notSweptOf(c.report.coverage);
  const earlierRuns = missing.length && opts.deletedEarlier ? await opts.deletedEarlier(missing, journaledRequest(spec)) : new Map<string, string>();
  const deletedEarlier: SweptEarlier = missing.filter((m) => earlierRuns.has(m.url)).map((m) => ({ ...m, run: earlierRuns.get(m.url)! }));
  const notSwept = missing.filter((m) => !earlierRuns.has(m.url));
  const exitCode = deleteExitCode(outcomes, interrupted, notSwept.length);
  const catchUp = deleteCatchUp(spec, [...notDeleted(outcomes), ...notSwept.map((m) => m.url)], clients.length + notSwept.length, c.report.coverage, opts.carried);
  journalReceipt(opts.journal, c.runId, outcomes);
  const nodes = [
    ...outcomes.map(({ metrics, ...o }) => ({ ...o, receipt: metrics.length })),
    // A ring node the run went ahead without is not finished: history counts it as left (as for sweeps).
    ...notSwept.map((m) => ({ node: m.url, state: 'not_swept', reason: `ring node ${m.id} not in the node list: not deleted on (--allow-partial)` })),
    ...deletedEarlier.map((m) => ({ node: m.url, state: 'not_swept', reason: `ring node ${m.id} not in the node list: deleted on by run ${m.run}`, sweptBy: m.run })),
  ];
  opts.journal?.append({ kind: 'delete.end', ...common, nodes, interrupted, exit: exitCode, catchUp: catchUp?.command ?? null });
  return { runId: c.runId, looks: before, totals, report: c.report, outcomes, exitCode, interrupted, catchUp, notSwept, deletedEarlier, stopped: null };
}

/** Receipt rows per journal line: a line stays far below what a journal reader holds (cli/journal.ts MAX_JOURNAL_LINE, 4 MiB). */
export const RECEIPT_ROWS_PER_LINE = 1000;

/** The per-metric receipt as `delete.receipt` lines, each node's rows in chunks, before the end line (which keeps only counts). */
function journalReceipt(journal: DeleteRunOptions['journal'], runId: string, outcomes: readonly NodeOutcome[]): void {
  for (const o of outcomes)
    for (let i = 0; i < o.metrics.length; i += RECEIPT_ROWS_PER_LINE)
      journal?.append({ kind: 'delete.receipt', run: runId, node: o.node, metrics: o.metrics.slice(i, i + RECEIPT_ROWS_PER_LINE) });
}

/** One request on every target: `/full/canonical` for one exact metric, else the batched tag-query loop. Each round is journaled before it is reported. */
async function deleteRequest(targets: readonly NodeClient[], req: TagDeleteRequest, spec: DeleteSpec, opts: DeleteRunOptions, runId: string): Promise<NodeDeletion[]> {
  const type = req.scope.kind === 'before' ? req.scope.type : undefined;
  const round = (p: DeleteProgress): void => {
    opts.journal?.append({
      kind: 'delete.round',
      run: runId,
      node: p.node,
      ...(type ? { type } : {}),
      round: p.round,
      deleted: p.fresh.map((m) => ({ uuid: m.uuid, metric_name: m.metric })),
      total: p.deleted,
    });
    opts.onProgress?.({ ...p, ...(type ? { type } : {}) });
  };
  if (spec.metric && req.scope.kind === 'full') {
    const m = spec.metric;
    return Promise.all(
      targets.map(async (c): Promise<NodeDeletion> => {
        try {
          await c.deleteCanonical({ ...m, account: spec.account }, opts.signal ? { signal: opts.signal } : {});
          round({ node: c.url, round: 1, deleted: 1, fresh: [m] });
          return { node: c.url, deleted: [m], rounds: 1, end: 'complete', other: [] };
        } catch (err) {
          return { node: c.url, deleted: [], rounds: 1, end: opts.signal?.aborted ? 'interrupted' : 'failed', other: [], error: plain(err) };
        }
      }),
    );
  }
  return deleteOnNodes(targets, req, {
    batch: spec.batch,
    maxRounds: spec.maxRounds,
    concurrency: spec.concurrency,
    ...(opts.signal ? { signal: opts.signal } : {}),
    onProgress: round,
  });
}

export type { DeleteSpec, NodeOutcome } from './delete-outcome.js';
