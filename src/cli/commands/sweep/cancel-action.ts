import type { ClusterCheckReport } from '../../../client/sweep-checks.js';
import { SweepRefusedError } from '../../../client/sweep-preflight.js';
import { runSweepCancel, type SweepCancelRun } from '../../../run/cancel.js';
import { RunInterruptedError } from '../../../run/errors.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { newRunId, whoAmI } from '../../journal.js';
import { withMetricsFile, type MetricsRecorder } from '../../metrics-file.js';
import { connectTarget, resolveCommandTarget } from '../../node-source.js';
import { askYesNo } from '../../prompt.js';
import { renderJson, tableWidth } from '../../render/table.js';
import type { CancelOptions } from './options.js';
import { cancelCsv, cancelJson, cancelTable, dryRunCsv, dryRunJson, dryRunText } from './render.js';
import { canAsk, coverageHint, logReport, missingFooter, NO_SWEEP_API_HINT, openJournal, runTarget } from '../../run/run-text.js';

const plural = (n: number): string => `${n} node${n === 1 ? '' : 's'}`;

/** `tsnode sweep cancel`: GET /sweep_delete/cancel on every node, after the coverage check and confirmation (src/run/cancel.ts). */
export async function sweepCancelAction(opts: CancelOptions, ctx: CliContext): Promise<ExitCode> {
  return withMetricsFile(opts.metricsFile, 'sweep cancel', ctx, (metrics) => cancelRun(opts, ctx, metrics));
}

async function cancelRun(opts: CancelOptions, ctx: CliContext, metrics: MetricsRecorder): Promise<ExitCode> {
  // Nothing is sent before the target resolves and the confirmation rule passes (a destructive command: no fallback node).
  const target = resolveCommandTarget(opts, ctx, { command: 'tsnode sweep cancel', destructive: true });
  if (!opts.dryRun && !opts.yes && !canAsk(ctx)) {
    throw new UsageError('not on a terminal: pass --yes to confirm cancelling (nothing was sent)', `it would cancel the running sweeps on the nodes of ${target.origin}`);
  }
  const shown = runTarget(target);
  const run = await connectTarget(target, opts, ctx);
  try {
    if (opts.dryRun) {
      const requests = run.nodes.map((n) => ({ node: n, method: 'GET' as const, url: `${n}/sweep_delete/cancel`, headers: {} }));
      if (opts.output === 'json') ctx.stdout.write(renderJson(dryRunJson(requests, { target: shown })));
      else if (opts.output === 'csv') ctx.stdout.write(dryRunCsv(requests, Boolean(ctx.stdout.isTTY)));
      else ctx.stdout.write(dryRunText(requests));
      ctx.log.info(`dry run: would cancel the running sweeps on ${plural(run.nodes.length)} (${run.described}); nothing was sent`);
      return EXIT.ok;
    }
    const clients = run.nodes.map((n) => run.network.client(n));
    let result: SweepCancelRun;
    let report: ClusterCheckReport | undefined;
    try {
      result = await runSweepCancel(clients, {
        allowPartial: opts.allowPartial,
        concurrency: opts.concurrency,
        signal: ctx.signal,
        journal: openJournal(ctx, opts.journal),
        runId: newRunId(),
        described: { by: whoAmI(ctx.env), nodeSource: target.origin, described: run.described, profile: shown.profile },
        onReport: (r) => {
          report = r;
          logReport(ctx, r);
        },
        ...(opts.yes ? {} : { confirm: (nodes: readonly string[]) => confirmCancel(ctx, `Cancel running sweeps on ${plural(nodes.length)} (${run.described})?`) }),
      });
    } catch (err) {
      // Kept: an interruption is 130 without an error line; a refusal lists each node's problem
      // and the coverage hint of this run's report. Any other error says itself (cli/errors.ts).
      if (err instanceof RunInterruptedError) return EXIT.interrupted;
      if (!(err instanceof SweepRefusedError)) throw err;
      for (const p of err.problems) ctx.log.error(p.node ? `${p.node}: ${p.message}` : p.message);
      throw new UsageError('refusing to cancel: nothing was sent', coverageHint(report) || undefined);
    }
    const { rows, report: checked, exitCode } = result;
    metrics.add({
      name: 'tsnode_node_state',
      help: 'The state each node ended the last run in, as a label (cancelling, idle, no_sweep_api, failed); value always 1.',
      type: 'gauge',
      samples: rows.map((r) => ({ labels: { command: 'sweep cancel', node: r.node, state: r.state }, value: 1 })),
    });
    if (opts.output === 'json') ctx.stdout.write(renderJson(cancelJson(rows, { target: shown, coverage: checked.coverage, exitCode })));
    else if (opts.output === 'csv') ctx.stdout.write(cancelCsv(rows, Boolean(ctx.stdout.isTTY)));
    else ctx.stdout.write(cancelTable(rows, { colour: ctx.colour, width: tableWidth(ctx) }) + missingFooter(checked, 'not cancelled'));
    if (rows.some((r) => r.state === 'no_sweep_api')) ctx.log.hint(`for a node with no sweep API, use ${NO_SWEEP_API_HINT}`);
    return exitCode;
  } finally {
    await run.network.close();
  }
}

async function confirmCancel(ctx: CliContext, question: string): Promise<boolean | 'interrupted'> {
  const answer = await askYesNo(ctx, question);
  if (answer === 'no-tty') throw new UsageError('not on a terminal: pass --yes to confirm cancelling (nothing was sent)');
  return answer === 'interrupted' ? 'interrupted' : answer === 'yes';
}
