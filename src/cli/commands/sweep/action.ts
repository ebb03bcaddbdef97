import { runningTypes, SweepRefusedError } from '../../../client/sweep-preflight.js';
import type { NodeSweepState } from '../../../client/sweep-states.js';
import { RunInterruptedError } from '../../../run/errors.js';
import { sweptByEarlierRuns } from '../../../run/journal-query.js';
import { ringShare } from '../../../run/outcome.js';
import { sweepTarget, type ClusterSweepOptions, type ClusterSweepRun, type SweepDryRun, type SweepStage, type SweepTarget } from '../../../run/sweep.js';
import type { NetworkSettings } from '../../../client/network.js';
import { networkSettings } from '../../network.js';
import { hasLag, type LagReport } from '../../../client/replication-lag.js';
import type { ResolvedTarget } from '../../config/target.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { newRunId, whoAmI } from '../../journal.js';
import { withMetricsFile, type MetricsRecorder } from '../../metrics-file.js';
import { receiptFamilies, receiptLine } from '../../receipts.js';
import { connectError, describeNodes, resolveCommandTarget, warnAboutRing } from '../../node-source.js';
import { askYesNo } from '../../prompt.js';
import { NodeProgress } from '../../render/node-progress.js';
import { renderJson, tableWidth } from '../../render/table.js';
import { carriedFlags, catchUpIsPartial, type CarriedFlags } from '../../../run/catch-up.js';
import { confirmShortAge, isShort, shortAgeChecks } from './short-age.js';
import type { SweepOptions } from './options.js';
import { describeRequest, planSweep, type SweepPlan } from './plan.js';
import { lagAllowance, logLag, replicationLagOption, skipUnreachableOf } from '../../run/lag.js';
import { dryRunCsv, dryRunJson, dryRunText, summaryLine, sweepCsv, sweepJson, sweepTable, type RunTarget } from './render.js';
import {
  silentNodesHint,
  busyText,
  canAsk,
  coverageHint,
  lockDir,
  logRefusal,
  logReport,
  missingFooter,
  NO_SWEEP_API_HINT,
  openJournal,
  pastSweepEnds,
  runTarget,
} from '../../run/run-text.js';

export type { SweepOptions } from './options.js';
export { coverageHint, journaledCoverage, logReport, missingFooter, runTarget } from '../../run/run-text.js';

/** ` --nodes a,b`, and the profile whose headers and TLS reach them (never its values). */
function nodesHint(nodes: readonly string[], target: RunTarget): string {
  return ` --nodes ${nodes.join(',')}${target.profile !== null ? ` --profile ${target.profile}` : ''}`;
}

/** The declared spans of the target (a profile's nnt_rollups, histogram_rollups), for nodes that do not report theirs. */
function declaredSpans(target: ResolvedTarget): { nnt?: { spans: number[]; from: string }; histogram?: { spans: number[]; from: string } } {
  const { nntRollups, histogramRollups } = target.spans;
  return {
    ...(nntRollups ? { nnt: { spans: nntRollups.value, from: nntRollups.from } } : {}),
    ...(histogramRollups ? { histogram: { spans: histogramRollups.value, from: histogramRollups.from } } : {}),
  };
}

const plural = (n: number): string => `${n} node${n === 1 ? '' : 's'}`;

export async function sweepAction(opts: SweepOptions, ctx: CliContext): Promise<ExitCode> {
  return withMetricsFile(opts.metricsFile, 'sweep', ctx, (metrics) => sweepRun(opts, ctx, metrics));
}

/**
 * The flags, once: the sweep's own become the plan, the node flags the target and the network's
 * settings, the ones a catch-up repeats `carried`; every step after this reads those, never the
 * flags. The run core then connects (a seed's ring discovered), checks, asks and sends.
 */
async function sweepRun(opts: SweepOptions, ctx: CliContext, metrics: MetricsRecorder): Promise<ExitCode> {
  // 1. The command's own flags, then the target: nothing is sent until both have passed.
  const plan = planSweep(opts, ctx.now());
  for (const w of plan.warnings) ctx.log.warn(w);
  // --nnt-rollups/--histogram-rollups name what to delete, not the spans the nodes have: the
  // target's declared spans are the profile's, to check them against.
  const target = resolveCommandTarget({ ...opts, nntRollups: undefined, histogramRollups: undefined }, ctx, { command: 'tsnode sweep', destructive: true });
  if (!plan.dryRun && !plan.yes && !canAsk(ctx)) {
    throw new UsageError('not on a terminal: pass --yes to confirm the sweep (nothing was sent)', `it would delete ${plan.what} on the nodes of ${target.origin}`);
  }
  const carried = carriedFlags(opts, ctx.env, ctx.cwd, { profile: target.profile?.name, journal: plan.journal, yes: plan.yes });
  if (plan.shortAge.allowShortAge) carried.carry.push('--allow-short-age');
  // The network's settings, resolved here (TLS files read, their warnings said); the run core connects with them.
  const network = networkSettings({ values: opts, target }, ctx);
  return sweepNodes({ target, network }, plan, carried, ctx, metrics);
}

/** Where the nodes turned out to be, once the run core has connected: for the prompt, the messages, the journal. */
interface Found {
  nodes: string[];
  /** `nodes: profile prod, 6 nodes (...)`, as said on stderr. */
  described: string;
}

/** --dry-run: each node's exact request; sends nothing at all, not even the read-only status check. */
function dryRun(nodes: readonly string[], found: Found, shown: RunTarget, plan: SweepPlan, ctx: CliContext): ExitCode {
  const requests = nodes.map((n) => ({ node: n, ...describeRequest(n, plan.request, shown.headerPrefix) }));
  if (plan.output === 'json') ctx.stdout.write(renderJson(dryRunJson(requests, { target: shown, request: plan.request })));
  else if (plan.output === 'csv') ctx.stdout.write(dryRunCsv(requests, Boolean(ctx.stdout.isTTY)));
  else ctx.stdout.write(dryRunText(requests));
  ctx.log.info(`dry run: would delete ${plan.what} on ${plural(nodes.length)} (${found.described}); nothing was sent`);
  return EXIT.ok;
}

/** What the journal says about the run: who, where the nodes came from (the core adds how many), the flags a catch-up carries. */
function journalDescription(target: ResolvedTarget, carried: CarriedFlags, ctx: CliContext): ClusterSweepOptions['described'] {
  return {
    by: whoAmI(ctx.env),
    headerPrefix: target.headerPrefix.value,
    nodeSource: target.origin,
    profile: target.profile?.name ?? null,
    carry: carried.carry,
    addBack: carried.addBack,
  };
}

/**
 * The stages' lines and the progress display: once connected, where the nodes came from (and, for
 * a run, its progress: one display for the status check, one for the DELETEs and the waiting).
 */
function progressOf(
  target: ResolvedTarget,
  found: Found,
  plan: SweepPlan,
  ctx: CliContext,
  lagLine: () => void,
): { onStage: (s: SweepStage) => void; onEvent: ClusterSweepOptions['onEvent']; stop: () => void } {
  let progress: NodeProgress | undefined;
  const stop = (): void => {
    progress?.stop();
    progress = undefined;
  };
  const onStage = (s: SweepStage): void => {
    if (s.kind === 'connected') {
      ctx.log.info(found.described);
      if (s.ring) warnAboutRing(s.ring, ctx);
      if (plan.dryRun) return;
      // Said here, after where the nodes came from: the option itself was set before the run.
      skipUnreachableOf(plan.skipUnreachable, target, ctx);
      progress = new NodeProgress(ctx, s.nodes, { quiet: new Set<NodeSweepState>(['checking', 'sending']) });
      return;
    }
    stop();
    if (s.kind === 'checked') {
      logReport(ctx, s.report);
      lagLine();
      if (plan.force) for (const b of s.preflight.busy) ctx.log.warn(`${b.node} is sweeping ${runningTypes(b.status!).join(',')}: --force replaces that sweep`);
      if (s.send.length === 0) ctx.log.error('every node was unreachable: nothing was sent');
      return;
    }
    if (s.send.length) ctx.log.info(`deleting ${plan.what} on ${plural(s.send.length)} (${found.described})${plan.wait ? '' : ' (not waiting)'}`);
    progress = new NodeProgress(ctx, [...s.send, ...s.skipped], { quiet: new Set<NodeSweepState>(['sending']) });
  };
  return { onStage, onEvent: (e) => progress?.onEvent(e), stop };
}

/**
 * The run core's options for this plan: the journal and lock, what the journal says about the run,
 * the checks (identity, coverage, spans, a short age, the clock for an age), the prompt, and the
 * progress display. Everything the CLI decides first; the core's own steps (the journal query,
 * the clock check) after it, as data or hooks the core calls.
 */
function coreOptions(
  target: ResolvedTarget,
  found: Found,
  plan: SweepPlan,
  carried: CarriedFlags,
  ctx: CliContext,
): { options: ClusterSweepOptions; stop: () => void; lag: { report?: LagReport } } {
  const req = plan.request;
  const allowed = lagAllowance(plan.allowLagMs, target);
  // The lag the preflight read: logged once checked, and named in a refusal's hint.
  const lag: { report?: LagReport } = {};
  const { onStage, onEvent, stop } = progressOf(target, found, plan, ctx, () => logLag(ctx, lag.report, allowed));
  const journal = openJournal(ctx, plan.journal);
  const options: ClusterSweepOptions = {
    force: plan.force,
    skipUnreachable: plan.skipUnreachable || target.skipUnreachable?.value === true,
    cluster: {
      allowPartial: plan.allowPartial,
      spans: { nnt: req.types.includes('nnt') ? req.nntRollups : undefined, histogram: req.types.includes('histogram') ? req.histogramRollups : undefined },
      declared: declaredSpans(target),
    },
    replicationLag: replicationLagOption(allowed, (r) => {
      lag.report = r;
    }),
    checks: shortAgeChecks(plan.shortAge, ctx),
    onEvent,
    onStage,
    journal,
    lockDir: lockDir(ctx),
    onLockTakeOver: (m) => ctx.log.warn(m),
    runId: newRunId(),
    described: journalDescription(target, carried, ctx),
    concurrency: plan.concurrency,
    signal: ctx.signal,
    wait: plan.wait,
    intervalMs: plan.intervalMs,
    lostAfterMs: plan.lostAfterMs,
    timeoutMs: plan.timeoutMs,
    // The receipt: the inventories before the first DELETE and after the waiting (none for --no-wait: no "after" yet).
    receipt: { settleMs: plan.settleMs, now: ctx.now },
    ...confirmOption(found, plan, ctx),
    // An age (--before 90d) is pinned from this host's clock: the core checks it against the nodes'.
    ...(plan.maxClockSkewMs !== undefined ? { clockSkew: { maxSkewMs: plan.maxClockSkewMs, limitName: '--max-clock-skew', now: ctx.now } } : {}),
    sweptEarlier: async (missing) =>
      sweptByEarlierRuns(
        await pastSweepEnds(journal.path),
        req,
        target.headerPrefix.value,
        missing.map((m) => m.url),
      ),
  };
  return { options, stop, lag };
}

/** The prompt: without --yes; and a cut-off under an hour ago is typed back on a terminal, --yes or not (short-age.ts). */
function confirmOption(found: Found, plan: SweepPlan, ctx: CliContext): Pick<ClusterSweepOptions, 'confirm'> {
  if (plan.yes && !isShort(plan.shortAge, ctx.now())) return {};
  const { what } = plan;
  return {
    confirm: async (p) => {
      const yes = plan.yes
        ? true
        : await confirmSweep(
            ctx,
            `Delete ${what} on ${plural(p.send.length)} (${found.described}${p.skipped.length ? `; ${p.skipped.length} unreachable node(s) skipped` : ''})?`,
            `it would delete ${what} on ${plural(p.send.length)} (${found.described})`,
          );
      return yes === true ? confirmShortAge(plan.shortAge, ctx) : yes;
    },
  };
}

async function confirmSweep(ctx: CliContext, question: string, would: string): Promise<boolean | 'interrupted'> {
  const answer = await askYesNo(ctx, question);
  if (answer === 'no-tty') throw new UsageError('not on a terminal: pass --yes to confirm the sweep (nothing was sent)', would);
  return answer === 'interrupted' ? 'interrupted' : answer === 'yes';
}

/**
 * What stopped a run before anything was sent, as the CLI says it (exit 2, or 130). Kept here, not
 * in cli/errors.ts: an interruption is a warning in the sweep's words, and a refusal is one line
 * per node with hints that only this run's report and lag reading know.
 */
function refused(err: unknown, report: ClusterSweepRun['report'], lag: LagReport | undefined, ctx: CliContext, total: number): ExitCode {
  if (err instanceof RunInterruptedError) {
    ctx.log.warn(err.phase === 'during the status check' ? 'interrupted during the status check: nothing was sent' : 'interrupted: nothing was sent');
    return EXIT.interrupted;
  }
  // Every other error says itself through the one mapping (cli/errors.ts messageOf, exitCodeOf).
  if (!(err instanceof SweepRefusedError)) throw err;
  if (err.phase === 'recheck') {
    for (const b of err.busy) ctx.log.error(`${b.node} started sweeping ${b.running.join(',')} while you were answering`);
    throw new UsageError('refusing to sweep: nothing was sent', 'use --force to cancel and replace running sweeps (or wait: tsnode status --watch)');
  }
  logRefusal(ctx, err, (b) => `${b.node} is already sweeping ${busyText(b)}`);
  if (report) for (const note of report.notes) ctx.log.info(note);
  const hints = [
    err.busy.length ? 'use --force to cancel and replace running sweeps (or wait: tsnode status --watch)' : '',
    err.unreachable.some((u) => u.error?.code === 'no_sweep_api') ? `use ${NO_SWEEP_API_HINT}` : '',
    silentNodesHint(err, total, 'to sweep the others (the skipped nodes are listed in the result)'),
    coverageHint(report) ? `use ${coverageHint(report)}` : '',
    lag?.nodes.some(hasLag)
      ? 'use tsnode status --watch --until-caught-up to wait until replication catches up, or --allow-lag <duration> to sweep anyway (a node data reaches after its sweep ends late_data)'
      : '',
  ].filter(Boolean);
  throw new UsageError(`refusing to sweep: nothing was sent`, hints.length ? hints.join('; ') : undefined);
}

async function sweepNodes(
  t: { target: ResolvedTarget; network: NetworkSettings },
  plan: SweepPlan,
  carried: CarriedFlags,
  ctx: CliContext,
  metrics: MetricsRecorder,
): Promise<ExitCode> {
  const { target } = t;
  const found: Found = { nodes: [], described: '' };
  const shown = runTarget(target);
  // How the outcome is shown: chosen from the plan before the run, fed what the run returns.
  const render = (result: ClusterSweepRun): void => renderResult(result, shown, plan.output, ctx);
  const renderDryRun = (nodes: readonly string[]): ExitCode => dryRun(nodes, found, shown, plan, ctx);
  const { options, stop, lag } = coreOptions(target, found, plan, carried, ctx);
  let report: ClusterSweepRun['report'];
  options.onReport = (r) => (report = r);
  const on: SweepTarget = {
    source: target.source,
    network: t.network,
    describe: (nodes, ring) => {
      found.nodes = [...nodes];
      found.described = describeNodes(target, ring);
      return found.described;
    },
  };
  let outcome: ClusterSweepRun | SweepDryRun;
  try {
    outcome = await sweepTarget(on, plan.request, { ...options, dryRun: plan.dryRun });
  } catch (err) {
    stop();
    // Before the core connected: the seed's ring could not be read (nothing was sent).
    if (found.described === '') throw connectError(err, target);
    return refused(err, report, lag.report, ctx, found.nodes.length);
  } finally {
    stop();
  }
  if ('dryRun' in outcome) return renderDryRun(outcome.nodes);
  const result = outcome;
  render(result);
  const done = result.receipt;
  if (done) ctx.log.info(`${receiptLine(done)} (tsnode history show ${result.runId})`);
  metrics.add(
    {
      name: 'tsnode_node_state',
      help: 'The state each node ended the last run in, as a label (done, failed, skipped, ...); value always 1.',
      type: 'gauge',
      samples: result.nodes.map((n) => ({ labels: { command: 'sweep', node: n.node, state: n.state }, value: 1 })),
    },
    ...(done ? receiptFamilies('sweep', done) : []),
  );
  return result.exitCode;
}

/** The result on stdout, then the summary, the watch and cancel hints, the catch-up on stderr. */
function renderResult(result: ClusterSweepRun, shown: RunTarget, output: SweepPlan['output'], ctx: CliContext): void {
  const { catchUp, report } = result;
  if (output === 'json') ctx.stdout.write(renderJson(sweepJson(result, { target: shown, exitCode: result.exitCode, catchUp, coverage: report?.coverage })));
  else if (output === 'csv') ctx.stdout.write(sweepCsv(result, Boolean(ctx.stdout.isTTY)));
  else ctx.stdout.write(sweepTable(result, { colour: ctx.colour, width: tableWidth(ctx) }) + missingFooter(report));
  const share = ringShare(result.nodes.filter((n) => n.state === 'done').length, result.notSwept, result.sweptEarlier);
  ctx.log.info(`summary: ${summaryLine(result)}${share ? ` (${share})` : ''}`);
  if (result.interrupted) {
    ctx.log.warn(`interrupted: stopped watching; sweeps already started keep running on their nodes (no DELETE was repeated or cancelled)`);
  }
  const mayRun = result.mayRun;
  // A cancel of some nodes of a ring passes its coverage check only with --allow-partial.
  const cancelPartial = catchUpIsPartial(report?.coverage, mayRun.length, result.nodes.length) ? ' --allow-partial' : '';
  if (mayRun.length)
    ctx.log.info(`watch them with: tsnode status${nodesHint(mayRun, shown)} --watch   (cancel with: tsnode sweep cancel${nodesHint(mayRun, shown)}${cancelPartial})`);
  if (catchUp) {
    const allStarted = result.nodes.every((n) => n.state === 'started' || n.state === 'done') && result.notSwept.length === 0;
    const lateOnly = result.notSwept.length === 0 && result.nodes.filter((n) => n.state !== 'done').every((n) => n.state === 'late_data');
    const label = allStarted
      ? 'if a node does not finish, repeat the sweep there with'
      : lateOnly
        ? `once their replication lag is 0 (tsnode status${nodesHint(catchUp.nodes, shown)} --watch --until-caught-up), repeat the sweep on the ${catchUp.nodes.length} late_data node(s)`
        : `to catch up (${catchUp.nodes.length} node(s) not done)`;
    ctx.log.info(`${label}: ${catchUp.command}`);
    if (catchUp.addBack.length) ctx.log.info(`  add back: ${catchUp.addBack.join('; ')}`);
    if (mayRun.length) ctx.log.info('  (a node still sweeping is refused by the catch-up until it is idle, unless you add --force)');
  }
}
