import type { NodeClient } from '../../../client/node-client.js';
import { clockSkewCheck } from '../../../client/clock-skew.js';
import { startAndWait, type ClusterSweepResult } from '../../../client/sweep.js';
import {
  assessPreflight,
  baselineOf,
  preflightProblem,
  preflightSweep,
  runPreflightChecks,
  runningTypes,
  SweepRefusedError,
  type Preflight,
  type PreflightCheck,
} from '../../../client/sweep-preflight.js';
import type { NodeSweepState } from '../../../client/sweep-states.js';
import { AbortedError } from '../../../client/errors.js';
import { clusterCheck, type ClusterCheckReport, type CoverageOutcome } from '../../../client/sweep-checks.js';
import type { SweepStatus } from '../../../protocol/index.js';
import type { Target } from '../../config/target.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { Journal, journalPath, newRunId, whoAmI, type JournaledCoverage, type JournaledSweep, type SweepEndEntry, type SweepStartEntry } from '../../journal.js';
import { connectTarget, resolveCommandTarget, type TargetRun } from '../../node-source.js';
import { askYesNo } from '../../prompt.js';
import { NodeProgress } from '../../render/node-progress.js';
import { renderJson, tableWidth } from '../../render/table.js';
import { describeTime } from '../../time.js';
import { carriedFlags, catchUpFor, catchUpIsPartial, type CarriedFlags } from './catch-up.js';
import type { SweepOptions } from './options.js';
import { describeRequest, describeScope, planSweep, type SweepPlan } from './plan.js';
import { dryRunCsv, dryRunJson, dryRunText, summaryLine, sweepCsv, sweepJson, sweepTable, type RunTarget } from './render.js';

export type { SweepOptions } from './options.js';

/** The coverage as the journal carries it (null: not checked, e.g. a dry run). A file format: keys kept as they are. */
export function journaledCoverage(c: CoverageOutcome | undefined): JournaledCoverage | null {
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

/** ` --nodes a,b`, and the profile whose headers and TLS reach them (never its values). */
function nodesHint(nodes: readonly string[], target: RunTarget): string {
  return ` --nodes ${nodes.join(',')}${target.profile !== null ? ` --profile ${target.profile}` : ''}`;
}

/** The target as results and documents name it. */
export function runTarget(target: Target): RunTarget {
  return { origin: target.origin, profile: target.profile?.name ?? null, headerPrefix: target.headerPrefix.value };
}

/** What a run deletes and how to repeat it, as every journal line of the run carries it (a file format: camelCase kept). */
function journaledSweep(plan: SweepPlan, run: TargetRun, carried: CarriedFlags, by: string): JournaledSweep {
  const req = plan.request;
  return {
    by,
    before: req.before,
    types: req.types,
    nntRollups: req.types.includes('nnt') ? (req.nntRollups ?? 'all') : null,
    histogramRollups: req.types.includes('histogram') ? (req.histogramRollups ?? 'all') : null,
    headerPrefix: run.target.headerPrefix.value,
    nodeSource: run.target.origin,
    described: run.described,
    profile: run.target.profile?.name ?? null,
    carry: carried.carry,
    addBack: carried.addBack,
  };
}

/** The declared spans of the target (a profile's nnt_rollups, histogram_rollups), for nodes that do not report theirs. */
function declaredSpans(target: Target): { nnt?: { spans: number[]; from: string }; histogram?: { spans: number[]; from: string } } {
  const { nntRollups, histogramRollups } = target.spans;
  return {
    ...(nntRollups ? { nnt: { spans: nntRollups.value, from: nntRollups.from } } : {}),
    ...(histogramRollups ? { histogram: { spans: histogramRollups.value, from: histogramRollups.from } } : {}),
  };
}

/**
 * Checks run on the preflight after the busy/unreachable rules and before anything is sent: one
 * GET /state (else /stats.json) per node, then node identity (two URLs, one node: refused), ring
 * coverage (issue 15: missing ring nodes, a topology disagreement or a rebalance refuse the sweep
 * unless --allow-partial) and the spans named by --nnt-rollups/--histogram-rollups.
 */
function preflightChecks(
  clients: readonly NodeClient[],
  plan: SweepPlan,
  target: Target,
  opts: { allowPartial: boolean; signal: AbortSignal; maxClockSkew: number; now: () => number },
  found: (r: ClusterCheckReport) => void,
): PreflightCheck[] {
  // An age (--before 90d) is pinned from this host's clock: it must agree with the nodes'.
  const clock = plan.relative
    ? [clockSkewCheck(clients, { maxSkewMs: opts.maxClockSkew, limitName: '--max-clock-skew', concurrency: plan.concurrency, call: { signal: opts.signal }, now: opts.now })]
    : [];
  return [
    ...clock,
    clusterCheck(clients, {
      allowPartial: opts.allowPartial,
      spans: {
        nnt: plan.request.types.includes('nnt') ? plan.request.nntRollups : undefined,
        histogram: plan.request.types.includes('histogram') ? plan.request.histogramRollups : undefined,
      },
      declared: declaredSpans(target),
      concurrency: plan.concurrency,
      call: { signal: opts.signal },
      onReport: found,
    }),
  ];
}

/** Lines for stderr after a check: what it found or could not check; the missing nodes a partial run leaves alone. */
export function logReport(ctx: CliContext, report: ClusterCheckReport | undefined): void {
  if (!report) return;
  for (const note of report.notes) ctx.log.info(note);
  if (report.coverage.allowed && report.coverage.problems.length) {
    for (const p of report.coverage.problems) ctx.log.warn(`${p} (going ahead: --allow-partial)`);
  }
}

/** The hint of a refusal that a coverage problem caused. */
export function coverageHint(report: ClusterCheckReport | undefined): string {
  return report && report.coverage.problems.length && !report.coverage.allowed ? '--allow-partial to sweep the listed nodes anyway (the missing ones keep their data)' : '';
}

/** Under the table: the ring nodes a partial run did not reach. */
export function missingFooter(report: ClusterCheckReport | undefined, what = 'not swept'): string {
  const c = report?.coverage;
  if (!c || !c.allowed || c.missing.length === 0) return '';
  return `\nring nodes not in the list, ${what} (--allow-partial): ${c.missing.map((m) => `${m.id} (${m.url})`).join(', ')}\n`;
}

/** Without a terminal to ask on, --yes is the only confirmation. */
function canAsk(ctx: CliContext): boolean {
  return Boolean(ctx.stdin.isTTY && ctx.stderr.isTTY);
}

const plural = (n: number): string => `${n} node${n === 1 ? '' : 's'}`;

export async function sweepAction(opts: SweepOptions, ctx: CliContext): Promise<ExitCode> {
  // 1. The command's own flags, then the target: nothing is sent until both have passed.
  const plan: SweepPlan = planSweep(opts, ctx.now());
  for (const w of plan.warnings) ctx.log.warn(w);
  const what = `data before ${describeTime(plan.request.before * 1000)} (${describeScope(plan.request)})`;
  // --nnt-rollups/--histogram-rollups name what to delete, not the spans the nodes have: the
  // target's declared spans are the profile's, to check them against.
  const target = resolveCommandTarget({ ...opts, nntRollups: undefined, histogramRollups: undefined }, ctx, { command: 'tsnode sweep', destructive: true });
  if (!opts.dryRun && !opts.yes && !canAsk(ctx)) {
    throw new UsageError('not on a terminal: pass --yes to confirm the sweep (nothing was sent)', `it would delete ${what} on the nodes of ${target.origin}`);
  }
  const carried = carriedFlags(opts, ctx.env, ctx.cwd, { profile: target.profile?.name, journal: opts.journal });
  const shown = runTarget(target);
  // A seed's ring is discovered here (GET only); a list is not contacted yet.
  const run = await connectTarget(target, opts, ctx);
  try {
    if (opts.dryRun) return dryRun(run, plan, shown, opts, ctx);
    return await sweepNodes(run, plan, shown, carried, opts, ctx);
  } finally {
    await run.network.close();
  }
}

/** --dry-run: each node's exact request; sends nothing at all, not even the read-only status check. */
function dryRun(run: TargetRun, plan: SweepPlan, shown: RunTarget, opts: SweepOptions, ctx: CliContext): ExitCode {
  const requests = run.nodes.map((n) => ({ node: n, ...describeRequest(n, plan.request, shown.headerPrefix) }));
  if (opts.output === 'json') ctx.stdout.write(renderJson(dryRunJson(requests, { target: shown, request: plan.request })));
  else if (opts.output === 'csv') ctx.stdout.write(dryRunCsv(requests, Boolean(ctx.stdout.isTTY)));
  else ctx.stdout.write(dryRunText(requests));
  ctx.log.info(
    `dry run: would delete data before ${describeTime(plan.request.before * 1000)} (${describeScope(plan.request)}) on ${plural(run.nodes.length)} (${run.described}); nothing was sent`,
  );
  return EXIT.ok;
}

async function sweepNodes(run: TargetRun, plan: SweepPlan, shown: RunTarget, carried: CarriedFlags, opts: SweepOptions, ctx: CliContext): Promise<ExitCode> {
  const what = `data before ${describeTime(plan.request.before * 1000)} (${describeScope(plan.request)})`;
  const clients = run.nodes.map((n) => run.network.client(n));
  const progress = new NodeProgress(ctx, run.nodes, { quiet: new Set<NodeSweepState>(['checking', 'sending']) });
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
      await runPreflightChecks(
        pre,
        preflightChecks(clients, plan, run.target, { allowPartial: opts.allowPartial, signal: ctx.signal, maxClockSkew: opts.maxClockSkew, now: ctx.now }, (r) => (report = r)),
      );
      stopProgress();
      logReport(ctx, report);
      if (opts.force && pre.busy.length) {
        for (const b of pre.busy) ctx.log.warn(`${b.node} is sweeping ${runningTypes(b.status!).join(',')}: --force replaces that sweep`);
      }
    } catch (err) {
      stopProgress();
      if (err instanceof SweepRefusedError) {
        for (const b of err.busy) {
          ctx.log.error(
            `${b.node} is already sweeping ${b.running.map((t) => `${t}${b.status?.[t].timestamp !== undefined ? ` before ${describeTime(b.status[t].timestamp * 1000)}` : ''}`).join(', ')}`,
          );
        }
        for (const u of err.unreachable)
          ctx.log.error(
            `${u.node} ${preflightProblem(u.error)
              .replace(/^unreachable:/, 'is unreachable:')
              .replace(/^no sweep API:/, 'has no sweep API:')}`,
          );
        for (const p of err.problems) ctx.log.error(p.node ? `${p.node}: ${p.message}` : p.message);
        if (report) for (const note of report.notes) ctx.log.info(note);
        const hints = [
          err.busy.length ? '--force to cancel and replace running sweeps (or wait: tsnode status --watch)' : '',
          err.unreachable.some((u) => u.error?.code === 'no_sweep_api')
            ? 'a tsnode reference node, or version 0.11.6 to 0.19.22 of the store, where a node has no sweep API (tsnode retention verify checks what such a node keeps)'
            : '',
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
      const question = `Delete ${what} on ${plural(send.length)} (${run.described}${skippedNote})?`;
      const answer = await askYesNo(ctx, question);
      if (answer === 'no-tty')
        throw new UsageError('not on a terminal: pass --yes to confirm the sweep (nothing was sent)', `it would delete ${what} on ${plural(send.length)} (${run.described})`);
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
    const runId = newRunId();
    const sweep = journaledSweep(plan, run, carried, whoAmI(ctx.env));
    const coverage = journaledCoverage(report?.coverage);
    const start: SweepStartEntry = { kind: 'sweep.start', run: runId, ...sweep, nodes: [...send, ...skipped.map((x) => x.node)], force: opts.force, wait: plan.wait, coverage };
    journal.append(start);

    // 5 + 6. One DELETE per node, then wait for each node's sweep to end.
    const sending = new Set(send);
    const targets: NodeClient[] = clients.filter((c) => sending.has(c.url));
    if (targets.length) ctx.log.info(`deleting ${what} on ${plural(targets.length)} (${run.described})${plan.wait ? '' : ' (not waiting)'}`);
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
    const pending = notDone(result);
    const catchUp = catchUpFor(plan.request, shown.headerPrefix, pending, carried, catchUpIsPartial(report?.coverage, pending.length, result.nodes.length));
    if (opts.output === 'json') ctx.stdout.write(renderJson(sweepJson(result, { target: shown, exitCode: code, catchUp, coverage: report?.coverage })));
    else if (opts.output === 'csv') ctx.stdout.write(sweepCsv(result, Boolean(ctx.stdout.isTTY)));
    else ctx.stdout.write(sweepTable(result, { colour: ctx.colour, width: tableWidth(ctx) }) + missingFooter(report));
    ctx.log.info(`summary: ${summaryLine(result)}`);
    const end: SweepEndEntry = {
      kind: 'sweep.end',
      run: runId,
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
    // A cancel of some nodes of a ring passes its coverage check only with --allow-partial.
    const cancelPartial = catchUpIsPartial(report?.coverage, mayRun.length, result.nodes.length) ? ' --allow-partial' : '';
    if (mayRun.length)
      ctx.log.info(`watch them with: tsnode status${nodesHint(mayRun, shown)} --watch   (cancel with: tsnode sweep cancel${nodesHint(mayRun, shown)}${cancelPartial})`);
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
  }
}
