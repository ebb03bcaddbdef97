/**
 * `tsnode delete`: flags -> plan -> the run core's delete (src/run/delete.ts) -> render. The core
 * checks, looks, asks through the confirm hook, deletes, proves and journals; this file says it.
 */
import { NodeRequestError } from '../../../client/errors.js';
import { SweepRefusedError } from '../../../client/sweep-preflight.js';
import type { ClusterCheckReport } from '../../../client/sweep-checks.js';
import { runDelete, type DeleteRun, type DeleteRunOptions, type DeleteStage, type DeleteTotals } from '../../../run/delete.js';
import { RunInterruptedError } from '../../../run/errors.js';
import { parseMetricName } from '../../../tags/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { newRunId, whoAmI } from '../../journal.js';
import { connectTarget, resolveCommandTarget, type TargetRun } from '../../node-source.js';
import { askYesNo } from '../../prompt.js';
import { printable } from '../../render/printable.js';
import { carriedFlags, type CarriedFlags } from '../../../run/catch-up.js';
import { lagAllowance, logLag, replicationLagOption } from '../../run/lag.js';
import { describeLag, hasLag, type LagReport } from '../../../client/replication-lag.js';
import { ringShare } from '../../../run/outcome.js';
import { canAsk, coverageHint, lockDir, logReport, openJournal, pastSweepEnds } from '../../run/run-text.js';
import { deletedByEarlierRuns } from '../../../run/journal-query.js';
import type { DeleteOptions } from './options.js';
import { planDelete, type DeletePlan } from './plan.js';
import { printLooks, printResult } from './render.js';

type Opts = DeleteOptions & { target: string };

const plural = (n: number, what = 'node'): string => `${n} ${what}${n === 1 ? '' : 's'}`;

export async function deleteAction(opts: Opts, ctx: CliContext): Promise<ExitCode> {
  // The command's own flags and the query, then the target: nothing is sent until both pass.
  const plan = planDelete(opts, ctx.now(), parseMetricName);
  const target = resolveCommandTarget(opts, ctx, { command: 'tsnode delete', destructive: true });
  if (!opts.dryRun && !opts.yes && !canAsk(ctx)) {
    throw new UsageError('not on a terminal: pass --yes to confirm the delete (nothing was sent)', `it would delete ${plan.scope} of the metrics ${describeWhat(plan)} selects`);
  }
  const carried = carriedFlags(opts, ctx.env, ctx.cwd, { profile: target.profile?.name, journal: opts.journal, yes: opts.yes });
  const run = await connectTarget(target, opts, ctx);
  let report: ClusterCheckReport | undefined;
  const lag: { report?: LagReport } = {};
  try {
    const clients = run.nodes.map((n) => run.network.client(n));
    const result = await runDelete(clients, plan, {
      ...coreOptions(run, plan, carried, opts, ctx, lag),
      onReport: (r) => {
        report = r;
        logReport(ctx, r);
      },
    });
    return renderRun(result, plan, opts, ctx);
  } catch (err) {
    return refused(err, report, lag.report, run.nodes.length, opts, ctx);
  } finally {
    await run.network.close();
  }
}

function describeWhat(plan: DeletePlan): string {
  return plan.metric ? `--metric ${plan.metric.uuid} ${printable(plan.metric.metric)}` : printable(plan.query);
}

function totalsLine(t: DeleteTotals): string {
  return `${t.truncated ? 'at least ' : ''}${plural(t.metrics, 'metric')} with data to delete (${t.copies} node copies) on ${t.targets} of ${plural(t.nodes)}`;
}

/** The run core's options for this command line: journal, lock, what the journal says, the prompt, the stages' lines. */
function coreOptions(run: TargetRun, plan: DeletePlan, carried: CarriedFlags, opts: Opts, ctx: CliContext, lag: { report?: LagReport }): DeleteRunOptions {
  let shown: DeleteTotals | undefined;
  const journal = openJournal(ctx, opts.journal);
  const journalPath = journal.path;
  const allowed = lagAllowance(opts.allowLag, run.target);
  const onStage = (s: DeleteStage): void => {
    if (s.kind === 'checked') {
      if (!opts.dryRun) logLag(ctx, lag.report, allowed);
      else for (const n of lag.report?.nodes.filter(hasLag) ?? []) ctx.log.warn(`${n.node}: replication ${describeLag(n)} (the delete refuses this without --allow-lag)`);
    } else if (s.kind === 'looked' && !s.again) {
      shown = s.totals;
      printLooks(ctx, opts.output, plan, s.looks, Boolean(opts.dryRun));
      ctx.log.info(`dry run: ${totalsLine(s.totals)}${s.totals.skipped ? `; ${plural(s.totals.skipped)} skipped (unreachable)` : ''}`);
      if (s.totals.truncated) ctx.log.warn(`some node listed only --list-limit ${plan.listLimit} metrics in its dry run: the counts above are a lower bound`);
    } else if (s.kind === 'looked' && shown && (s.totals.metrics !== shown.metrics || s.totals.copies !== shown.copies)) {
      ctx.log.warn(`the nodes changed while you were answering: now ${totalsLine(s.totals)}; the receipt is judged against this second look`);
    } else if (s.kind === 'deleting') {
      ctx.log.info(`deleting ${plan.scope} on ${plural(s.targets.length)} (batches of ${plan.batch})`);
    }
  };
  return {
    skipUnreachable: opts.skipUnreachable,
    allowPartial: opts.allowPartial,
    dryRun: opts.dryRun,
    replicationLag: replicationLagOption(allowed, (r) => (lag.report = r)),
    deletedEarlier: async (missing, request) =>
      deletedByEarlierRuns(
        await pastSweepEnds(journalPath, 'delete.end'),
        request,
        missing.map((m) => m.url),
      ),
    onStage,
    onProgress: (p) => ctx.log.info(`${p.node}: round ${p.round}: ${p.deleted} deleted`),
    signal: ctx.signal,
    runId: newRunId(),
    journal,
    lockDir: lockDir(ctx),
    onLockTakeOver: (m) => ctx.log.warn(m),
    described: { by: whoAmI(ctx.env), nodeSource: run.target.origin, described: run.described, profile: run.target.profile?.name ?? null },
    carried,
    ...(opts.yes || opts.dryRun
      ? {}
      : {
          confirm: async (c: { totals: DeleteTotals }) => {
            const answer = await askYesNo(ctx, `Delete ${plan.scope} of ${totalsLine(c.totals)} (${run.described})?`);
            return answer === 'interrupted' ? 'interrupted' : answer === 'yes';
          },
        }),
  };
}

/** The result on stdout; what came back, the catch-up and the receipt on stderr. */
function renderRun(r: DeleteRun, plan: DeletePlan, opts: Opts, ctx: CliContext): ExitCode {
  const share = ringShare(r.outcomes.filter((o) => o.state === 'deleted' || o.state === 'nothing').length, r.notSwept, r.deletedEarlier)
    .replace('not swept', 'not deleted on')
    .replace('swept by an earlier run', 'deleted on by an earlier run');
  if (r.stopped === 'dry-run') {
    if (r.notSwept.length)
      ctx.log.warn(`dry run: ${r.notSwept.length} ring node(s) not in the node list would not be deleted on: ${r.notSwept.map((m) => `${m.id} (${m.url})`).join(', ')}`);
    ctx.log.info('dry run: nothing was deleted');
    return EXIT.ok;
  }
  if (r.stopped === 'nothing') {
    ctx.log.info('nothing to delete: no node has data the query selects');
    return EXIT.ok;
  }
  printResult(ctx, opts.output, { run: r.runId, plan, outcomes: r.outcomes, exit: r.exitCode, catchUp: r.catchUp?.command, notSwept: r.notSwept });
  if (share && r.notSwept.length) ctx.log.warn(`ring: ${share}`);
  else if (share) ctx.log.info(`ring: ${share}`);
  for (const o of r.outcomes)
    if (o.reappeared.length)
      ctx.log.warn(`${o.node}: ${plural(o.reappeared.length, 'metric')} came back after the delete (a late replay?), e.g. ${printable(o.reappeared[0]!.metric)}`);
  if (r.interrupted) {
    const deleted = r.outcomes.reduce((n, o) => n + o.deleted, 0);
    ctx.log.warn(
      `interrupted: ${deleted} metric ${deleted === 1 ? 'copy' : 'copies'} deleted before the stop (the journal has each round); a call in flight may have deleted more, and nothing was looked at again`,
    );
  }
  if (r.catchUp) {
    ctx.log.info(`to catch up: ${r.catchUp.command}`);
    if (r.catchUp.addBack.length) ctx.log.info(`  add back: ${r.catchUp.addBack.join('; ')}`);
  }
  ctx.log.info(`receipt: tsnode history show ${r.runId}`);
  return r.exitCode;
}

/**
 * What stopped the run before anything was deleted, as the CLI says it (exit 2, or 130). Kept
 * here, not in cli/errors.ts: an interruption is a warning in the delete's words, and a refusal
 * is one line per node with hints that only this run's report and lag reading know.
 */
function refused(err: unknown, report: ClusterCheckReport | undefined, lag: LagReport | undefined, listed: number, opts: Opts, ctx: CliContext): ExitCode {
  if (err instanceof RunInterruptedError) {
    ctx.log.warn('interrupted: nothing was deleted');
    return EXIT.interrupted;
  }
  // Every other error says itself through the one mapping (cli/errors.ts messageOf, exitCodeOf).
  if (!(err instanceof SweepRefusedError)) throw err;
  for (const p of err.problems) ctx.log.error(printable(p.node ? `${p.node}: ${p.message}` : p.message));
  for (const u of err.unreachable) {
    const e = u.error instanceof NodeRequestError ? u.error : undefined;
    if (e?.code === 'unreachable') ctx.log.error(`${u.node} is unreachable: ${printable(e.detail)}`);
    else ctx.log.error(`${u.node}: ${printable(e?.detail ?? 'no answer')}${err.phase === 'recheck' ? ' (the second look after your answer)' : ''}`);
  }
  const hints = [
    // (only when other nodes answered: with every node unreachable, skipping them leaves nothing)
    err.unreachable.length && err.unreachable.length < listed && !opts.skipUnreachable ? '--skip-unreachable to delete on the others (the skipped nodes are listed)' : '',
    coverageHint(report).replace('sweep', 'delete on'),
    lag?.nodes.some(hasLag)
      ? 'tsnode status --watch --until-caught-up to wait until replication catches up, or --allow-lag <duration> to delete anyway (data on its way may bring a deleted metric back: the after-look reports it)'
      : '',
  ].filter(Boolean);
  throw new UsageError('refusing to delete: nothing was deleted', hints.length ? `use ${hints.join('; ')}` : undefined);
}
