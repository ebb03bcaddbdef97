import { fanOut } from '../../../client/cluster.js';
import type { NodeClient } from '../../../client/node-client.js';
import {
  assessPreflight,
  baselineOf,
  preflightProblem,
  preflightSweep,
  runPreflightChecks,
  startAndWait,
  SweepRefusedError,
  type ClusterSweepResult,
  type FinalSweepState,
  type NodeSweepState,
  type Preflight,
  type PreflightCheck,
} from '../../../client/sweep.js';
import { AbortedError } from '../../../client/errors.js';
import { clusterCheck, gatherClusterFacts, judgeCluster, type ClusterCheckReport, type CoverageOutcome } from '../../../client/sweep-checks.js';
import { runningTypes } from '../../../client/sweep.js';
import type { SweepStatus } from '../../../protocol/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { Journal, journalPath, newRunId, whoAmI, type JournaledCoverage, type JournaledSweep, type SweepCancelEntry, type SweepEndEntry, type SweepStartEntry } from '../../journal.js';
import type { NetworkFlags } from '../../network-options.js';
import { openNetwork } from '../../network.js';
import { resolveNodes, type NodeList } from '../../nodes.js';
import { askYesNo } from '../../prompt.js';
import { NodeProgress, stateLabel } from '../../render/node-progress.js';
import { renderJson, renderTable } from '../../render/table.js';
import { describeTime } from '../../time.js';
import { carriedFlags, catchUpFor, type CarriedFlags, type CatchUp } from './catch-up.js';
import { describeRequest, describeScope, parseOutput, planSweep, type SweepFlags, type SweepPlan } from './plan.js';

export type SweepOptions = SweepFlags & NetworkFlags & { journal?: string };

/** The coverage as the JSON result and the journal carry it (null: not checked, e.g. a dry run). */
export function coverageJson(c: CoverageOutcome | undefined): JournaledCoverage | null {
  return c ? { verdict: c.verdict, hash: c.hash, missing: c.missing, problems: c.problems, allowed: c.allowed } : null;
}

/** The exit code a finished run means (see README: 0 all done, 3 some, 1 none, 130 interrupted). */
export function sweepExitCode(result: Pick<ClusterSweepResult, 'nodes' | 'interrupted'>, wait: boolean): ExitCode {
  if (result.interrupted) return EXIT.interrupted;
  const good = result.nodes.filter((n) => n.state === 'done' || (!wait && n.state === 'started')).length;
  if (good === result.nodes.length) return EXIT.ok;
  return good === 0 ? EXIT.failed : EXIT.partial;
}

/** The nodes a catch-up repeats the sweep on: every node not `done`. */
export function notDone(result: Pick<ClusterSweepResult, 'nodes'>): string[] {
  return result.nodes.filter((n) => n.state !== 'done').map((n) => n.node);
}

/**
 * The `--output json` document. Keys are stable: every node has node, state, reason, error,
 * other and seconds; `catchUp` is null when every node is done.
 */
export function sweepJson(result: ClusterSweepResult, catchUp?: CatchUp, coverage?: CoverageOutcome): unknown {
  return {
    before: result.request.before,
    types: result.request.types,
    nntRollups: result.request.types.includes('nnt') ? (result.request.nntRollups ?? 'all') : null,
    histogramRollups: result.request.types.includes('histogram') ? (result.request.histogramRollups ?? 'all') : null,
    interrupted: result.interrupted,
    nodes: result.nodes.map((n) => ({ node: n.node, state: n.state, reason: n.reason, error: n.error ?? null, other: n.other ?? null, seconds: n.seconds ?? null })),
    summary: result.summary,
    catchUp: catchUp ?? null,
    coverage: coverageJson(coverage),
  };
}

function duration(seconds: number | undefined): string {
  if (seconds === undefined) return '';
  if (seconds < 60) return `${seconds.toFixed(1)}s`;
  const m = Math.floor(seconds / 60);
  return m < 60 ? `${m}m${String(Math.round(seconds % 60)).padStart(2, '0')}s` : `${Math.floor(m / 60)}h${String(m % 60).padStart(2, '0')}m`;
}

const BAD: ReadonlySet<string> = new Set(['failed', 'lost', 'timed out', 'replaced', 'cancelled', 'unconfirmed']);
const MEH: ReadonlySet<string> = new Set(['skipped', 'interrupted', 'started']);

export function sweepTable(result: ClusterSweepResult, colour: boolean): string {
  const types = result.request.types.join(',');
  return renderTable(
    ['node', 'types', 'state', 'duration', 'reason'],
    result.nodes.map((n) => [n.node, types, stateLabel(n.state), duration(n.seconds), n.reason]),
    {
      colour,
      align: [undefined, undefined, undefined, 'right'],
      paint: (cell, col, _row, p) => (col !== 2 ? cell : cell === 'done' ? p.green(cell) : BAD.has(cell) ? p.red(cell) : MEH.has(cell) ? p.yellow(cell) : cell),
    },
  );
}

function summaryLine(result: ClusterSweepResult): string {
  return Object.entries(result.summary)
    .filter(([, n]) => n > 0)
    .map(([s, n]) => `${n} ${stateLabel(s as FinalSweepState)}`)
    .join(', ');
}

function nodesHint(nodes: readonly string[]): string {
  return ` --nodes ${nodes.join(',')}`;
}

/** Where the node list came from, for the prompt and the journal (a --seed has filled --nodes by now). */
function nodeSource(opts: NetworkFlags, list: NodeList): string {
  return opts.seed !== undefined ? `--seed ${opts.seed}` : list.source;
}

/** What a run deletes and how to repeat it, as every journal line of the run carries it. */
function journaledSweep(plan: SweepPlan, source: string, carried: CarriedFlags, by: string): JournaledSweep {
  const req = plan.request;
  return {
    by,
    before: req.before,
    types: req.types,
    nntRollups: req.types.includes('nnt') ? (req.nntRollups ?? 'all') : null,
    histogramRollups: req.types.includes('histogram') ? (req.histogramRollups ?? 'all') : null,
    headerPrefix: plan.headerPrefix,
    nodeSource: source,
    carry: carried.carry,
    addBack: carried.addBack,
  };
}

/**
 * Checks run on the preflight after the busy/unreachable rules and before anything is sent: one
 * GET /state (else /stats.json) per node, then node identity (two URLs, one node: refused), ring
 * coverage (issue 15: missing ring nodes, a topology disagreement or a rebalance refuse the sweep
 * unless --allow-partial) and the spans named by --nnt-rollups/--histogram-rollups.
 */
function preflightChecks(clients: readonly NodeClient[], plan: SweepPlan, opts: { allowPartial: boolean; signal: AbortSignal }, found: (r: ClusterCheckReport) => void): PreflightCheck[] {
  return [
    clusterCheck(clients, {
      allowPartial: opts.allowPartial,
      spans: { nnt: plan.request.types.includes('nnt') ? plan.request.nntRollups : undefined, histogram: plan.request.types.includes('histogram') ? plan.request.histogramRollups : undefined },
      concurrency: plan.concurrency,
      call: { signal: opts.signal },
      onReport: found,
    }),
  ];
}

/** Lines for stderr after a check: what it found or could not check; the missing nodes a partial run leaves alone. */
function logReport(ctx: CliContext, report: ClusterCheckReport | undefined): void {
  if (!report) return;
  for (const note of report.notes) ctx.log.info(note);
  if (report.coverage.allowed && report.coverage.problems.length) {
    for (const p of report.coverage.problems) ctx.log.warn(`${p} (going ahead: --allow-partial)`);
  }
}

/** The hint of a refusal that a coverage problem caused. */
function coverageHint(report: ClusterCheckReport | undefined): string {
  return report && report.coverage.problems.length && !report.coverage.allowed ? '--allow-partial to sweep the listed nodes anyway (the missing ones keep their data)' : '';
}

/** Under the table: the ring nodes a partial run did not reach. */
function missingFooter(report: ClusterCheckReport | undefined): string {
  const c = report?.coverage;
  if (!c || !c.allowed || c.missing.length === 0) return '';
  return `\nring nodes not in the list, not swept (--allow-partial): ${c.missing.map((m) => `${m.id} (${m.url})`).join(', ')}\n`;
}

export async function sweepAction(opts: SweepOptions, ctx: CliContext): Promise<ExitCode> {
  // 1. Resolve and validate everything before touching the network.
  const plan: SweepPlan = planSweep(opts, ctx.now());
  const list = resolveNodes({ flag: opts.nodes, env: ctx.env, cwd: ctx.cwd });
  for (const w of [...list.warnings, ...plan.warnings]) ctx.log.warn(w);
  const scope = describeScope(plan.request);
  const what = `data before ${describeTime(plan.request.before * 1000)} (${scope})`;
  const source = nodeSource(opts, list);
  const where = (n: number): string => `${n} node${n === 1 ? '' : 's'} (node list: ${source})`;

  if (opts.dryRun) {
    // Sends nothing at all, not even the read-only status check: a dry run must be safe to run anywhere.
    const requests = list.nodes.map((n) => describeRequest(n, plan));
    if (plan.output === 'json') {
      ctx.stdout.write(renderJson({ dryRun: true, before: plan.request.before, types: plan.request.types, requests }));
    } else {
      const lines = requests.flatMap((r) => [`${r.method} ${r.url}`, ...Object.entries(r.headers).map(([k, v]) => `  ${k}: ${v}`), '']);
      ctx.stdout.write(lines.join('\n'));
    }
    ctx.log.info(`dry run: would delete ${what} on ${where(list.nodes.length)}; nothing was sent`);
    return EXIT.ok;
  }

  // Without a terminal to ask on, --yes is the only confirmation: refuse before any request at all.
  if (!opts.yes && !(ctx.stdin.isTTY && ctx.stderr.isTTY)) {
    throw new UsageError('not on a terminal: pass --yes to confirm the sweep (nothing was sent)', `it would delete ${what} on ${where(list.nodes.length)}`);
  }
  const carried = carriedFlags(opts, ctx.env, ctx.cwd);
  const net = openNetwork(opts, ctx, { headerPrefix: plan.headerPrefix });
  const clients = list.nodes.map((n) => net.client(n));
  const progress = new NodeProgress(ctx, list.nodes, { quiet: new Set<NodeSweepState>(['checking', 'sending']) });
  let stopped = false;
  const stopProgress = (): void => {
    if (!stopped) progress.stop();
    stopped = true;
  };
  try {
    // 2. Preflight: every node's status, then the rules that refuse a sweep before anything is sent.
    let send: string[];
    let skipped;
    let pre: Preflight;
    let report: ClusterCheckReport | undefined;
    try {
      pre = await preflightSweep(clients, { concurrency: plan.concurrency, signal: ctx.signal, onEvent: progress.onEvent });
      ({ send, skipped } = assessPreflight(pre, { force: opts.force, skipUnreachable: opts.skipUnreachable }));
      await runPreflightChecks(pre, preflightChecks(clients, plan, { allowPartial: opts.allowPartial === true, signal: ctx.signal }, (r) => (report = r)));
      stopProgress();
      logReport(ctx, report);
      if (opts.force && pre.busy.length) {
        stopProgress();
        for (const b of pre.busy) ctx.log.warn(`${b.node} is sweeping ${runningTypes(b.status!).join(',')}: --force replaces that sweep`);
      }
    } catch (err) {
      stopProgress();
      if (err instanceof SweepRefusedError) {
        for (const b of err.busy) {
          ctx.log.error(`${b.node} is already sweeping ${b.running.map((t) => `${t}${b.status?.[t].timestamp !== undefined ? ` before ${describeTime(b.status[t].timestamp * 1000)}` : ''}`).join(', ')}`);
        }
        for (const u of err.unreachable) ctx.log.error(`${u.node} ${preflightProblem(u.error).replace(/^unreachable:/, 'is unreachable:')}`);
        for (const p of err.problems) ctx.log.error(p.node ? `${p.node}: ${p.message}` : p.message);
        if (report) for (const note of report.notes) ctx.log.info(note);
        const hints = [
          err.busy.length ? '--force to cancel and replace running sweeps (or wait: tsnode status --watch)' : '',
          err.unreachable.length ? '--skip-unreachable to sweep the others (the skipped nodes are listed in the result)' : '',
          coverageHint(report),
        ].filter(Boolean);
        throw new UsageError(`refusing to sweep: nothing was sent`, hints.length ? `use ${hints.join('; ')}` : undefined);
      }
      if (err instanceof AbortedError || ctx.signal.aborted) {
        ctx.log.warn('interrupted during the status check: nothing was sent');
        return EXIT.interrupted;
      }
      throw err;
    }
    stopProgress();
    const baseline: Map<string, SweepStatus> = baselineOf(pre);

    // 3. Confirm (nothing to confirm when every node was skipped: the table below says so, exit 1).
    if (send.length === 0) ctx.log.error('every node was unreachable: nothing was sent');
    else if (!opts.yes) {
      const skippedNote = skipped.length ? `; ${skipped.length} unreachable node(s) skipped` : '';
      const answer = await askYesNo(ctx, `Delete ${what} on ${where(send.length)}${skippedNote}?`);
      if (answer === 'no-tty') throw new UsageError('not on a terminal: pass --yes to confirm the sweep (nothing was sent)', `it would delete ${what} on ${where(send.length)}`);
      if (answer === 'interrupted') {
        ctx.log.warn('interrupted: nothing was sent');
        return EXIT.interrupted;
      }
      if (answer === 'no') throw new UsageError('sweep not confirmed: nothing was sent');
      // A person may take minutes to answer: look again, so a sweep someone started meanwhile is not
      // cancelled by ours without --force.
      if (!opts.force) {
        const again = await preflightSweep(
          clients.filter((c) => send.includes(c.url)),
          { concurrency: plan.concurrency, signal: ctx.signal },
        ).catch(() => undefined);
        if (ctx.signal.aborted) {
          ctx.log.warn('interrupted: nothing was sent');
          return EXIT.interrupted;
        }
        const busy = again?.busy ?? [];
        if (busy.length) {
          for (const b of busy) ctx.log.error(`${b.node} started sweeping ${b.running.join(',')} while you were answering`);
          throw new UsageError('refusing to sweep: nothing was sent', 'use --force to cancel and replace running sweeps (or wait: tsnode status --watch)');
        }
        // The fresher status is the better baseline (a restart while you answered shows as a new instance).
        if (again) for (const [node, status] of baselineOf(again)) baseline.set(node, status);
      }
    }

    // 4. The journal: a start line before any DELETE, so a run killed midway still leaves a trace.
    const journal = new Journal(journalPath({ flag: opts.journal, env: ctx.env, cwd: ctx.cwd }), (m) => ctx.log.warn(m), ctx.now);
    const run = newRunId();
    const sweep = journaledSweep(plan, source, carried, whoAmI(ctx.env));
    const coverage = coverageJson(report?.coverage);
    const start: SweepStartEntry = { kind: 'sweep.start', run, ...sweep, nodes: [...send, ...skipped.map((x) => x.node)], force: opts.force, wait: plan.wait, coverage };
    journal.append(start);

    // 5 + 6. One DELETE per node, then wait for each node's sweep to end.
    const sending = new Set(send);
    const targets: NodeClient[] = clients.filter((c) => sending.has(c.url));
    if (targets.length) ctx.log.info(`deleting ${what} on ${where(targets.length)}${plan.wait ? '' : ' (not waiting)'}`);
    const live = new NodeProgress(ctx, [...send, ...skipped.map((x) => x.node)], { quiet: new Set<NodeSweepState>(['sending']) });
    let result: ClusterSweepResult;
    try {
      result = await startAndWait(targets, plan.request, {
        skipped,
        baseline,
        concurrency: plan.concurrency,
        signal: ctx.signal,
        onEvent: live.onEvent,
        wait: plan.wait,
        intervalMs: plan.intervalMs,
        lostAfterMs: plan.lostAfterMs,
        timeoutMs: plan.timeoutMs,
      });
    } finally {
      live.stop();
    }

    // 7. The result, the catch-up, the journal's end line.
    const code = sweepExitCode(result, plan.wait);
    const catchUp = catchUpFor(plan.request, plan.headerPrefix, notDone(result), carried);
    ctx.stdout.write(plan.output === 'json' ? renderJson(sweepJson(result, catchUp, report?.coverage)) : sweepTable(result, ctx.colour) + missingFooter(report));
    ctx.log.info(`summary: ${summaryLine(result)}`);
    const end: SweepEndEntry = {
      kind: 'sweep.end',
      run,
      ...sweep,
      nodes: result.nodes.map((n) => ({
        node: n.node,
        state: n.state,
        reason: n.reason,
        ...(n.error ? { error: n.error } : {}),
        ...(n.other ? { other: n.other } : {}),
        ...(n.seconds !== undefined ? { seconds: n.seconds } : {}),
      })),
      summary: result.summary,
      interrupted: result.interrupted,
      exit: code,
      catchUp: catchUp ?? null,
      coverage,
    };
    journal.append(end);
    if (result.interrupted) {
      ctx.log.warn(`interrupted: stopped watching; sweeps already started keep running on their nodes (no DELETE was repeated or cancelled)`);
    }
    const mayRun = result.nodes.filter((n) => ['interrupted', 'started', 'timed_out', 'lost', 'unconfirmed'].includes(n.state)).map((n) => n.node);
    if (mayRun.length) ctx.log.info(`watch them with: tsnode status${nodesHint(mayRun)} --watch   (cancel with: tsnode sweep cancel${nodesHint(mayRun)})`);
    if (catchUp) {
      const allStarted = result.nodes.every((n) => n.state === 'started' || n.state === 'done');
      const label = allStarted ? 'if a node does not finish, repeat the sweep there with' : `to catch up (${catchUp.nodes.length} node(s) not done)`;
      ctx.log.info(`${label}: ${catchUp.command}`);
      if (catchUp.addBack.length) ctx.log.info(`  add back: ${catchUp.addBack.join('; ')}`);
      if (mayRun.length) ctx.log.info('  (a node still sweeping is refused by the catch-up until it is idle, unless you add --force)');
    }
    return code;
  } finally {
    stopProgress();
    await net.close();
  }
}

export interface CancelOptions extends NetworkFlags {
  yes: boolean;
  output: string;
  journal?: string;
  allowPartial?: boolean;
}

/** `tsnode sweep cancel`: GET /sweep_delete/cancel on every node, after confirmation. */
export async function sweepCancelAction(opts: CancelOptions, ctx: CliContext): Promise<ExitCode> {
  const output = parseOutput(opts.output, ['table', 'json'] as const);
  const list = resolveNodes({ flag: opts.nodes, env: ctx.env, cwd: ctx.cwd });
  for (const w of list.warnings) ctx.log.warn(w);
  if (!opts.yes && !(ctx.stdin.isTTY && ctx.stderr.isTTY)) throw new UsageError('not on a terminal: pass --yes to confirm cancelling (nothing was sent)');
  const net = openNetwork(opts, ctx);
  try {
    const clients = list.nodes.map((n) => net.client(n));
    // The same identity and coverage checks as a sweep: a cancel that misses ring nodes leaves their sweeps running.
    const report = judgeCluster(await gatherClusterFacts(clients, { call: { signal: ctx.signal } }), { allowPartial: opts.allowPartial === true });
    if (ctx.signal.aborted) return EXIT.interrupted;
    logReport(ctx, report);
    if (report.problems.length) {
      for (const p of report.problems) ctx.log.error(p.node ? `${p.node}: ${p.message}` : p.message);
      throw new UsageError('refusing to cancel: nothing was sent', coverageHint(report) || undefined);
    }
    if (!opts.yes) {
      const answer = await askYesNo(ctx, `Cancel running sweeps on ${list.nodes.length} node${list.nodes.length === 1 ? '' : 's'} (node list: ${nodeSource(opts, list)})?`);
      if (answer === 'no-tty') throw new UsageError('not on a terminal: pass --yes to confirm cancelling (nothing was sent)');
      if (answer === 'interrupted') return EXIT.interrupted;
      if (answer === 'no') throw new UsageError('cancel not confirmed: nothing was sent');
    }
    const outcomes = await fanOut(clients, (c) => c.cancelSweep({ signal: ctx.signal }));
    const rows = outcomes.map((o) => {
      if (!o.ok) return { node: o.node, state: 'failed', cancelled: [] as string[], error: o.error.detail };
      const cancelled = runningTypes(o.value);
      return { node: o.node, state: cancelled.length ? 'cancelling' : 'idle', cancelled, error: null };
    });
    const entry: SweepCancelEntry = { kind: 'sweep.cancel', run: newRunId(), by: whoAmI(ctx.env), nodeSource: nodeSource(opts, list), nodes: rows, coverage: coverageJson(report.coverage) };
    new Journal(journalPath({ flag: opts.journal, env: ctx.env, cwd: ctx.cwd }), (m) => ctx.log.warn(m), ctx.now).append(entry);
    if (output === 'json') ctx.stdout.write(renderJson({ nodes: rows, coverage: coverageJson(report.coverage) }));
    else {
      ctx.stdout.write(renderTable(['node', 'state', 'detail'], rows.map((r) => [r.node, r.state, r.error ?? (r.cancelled.length ? `was sweeping ${r.cancelled.join(',')}` : 'nothing was running')]), { colour: ctx.colour }));
      ctx.stdout.write(missingFooter(report).replace('not swept', 'not cancelled'));
    }
    if (ctx.signal.aborted) return EXIT.interrupted;
    const failed = rows.filter((r) => r.state === 'failed').length;
    return failed === 0 ? EXIT.ok : failed === rows.length ? EXIT.failed : EXIT.partial;
  } finally {
    await net.close();
  }
}
