import { fanOut } from '../../../client/fan-out.js';
import { gatherClusterFacts, judgeCluster } from '../../../client/sweep-checks.js';
import { runningTypes } from '../../../client/sweep-preflight.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { Journal, journalPath, newRunId, whoAmI, type SweepCancelEntry } from '../../journal.js';
import { connectTarget, resolveCommandTarget } from '../../node-source.js';
import { askYesNo } from '../../prompt.js';
import { renderJson, tableWidth } from '../../render/table.js';
import { coverageHint, journaledCoverage, logReport, missingFooter, runTarget } from './run-text.js';
import type { CancelOptions } from './options.js';
import { cancelCsv, cancelJson, cancelTable, dryRunCsv, dryRunJson, dryRunText, type CancelRow } from './render.js';

const plural = (n: number): string => `${n} node${n === 1 ? '' : 's'}`;

/** `tsnode sweep cancel`: GET /sweep_delete/cancel on every node, after the coverage check and confirmation. */
export async function sweepCancelAction(opts: CancelOptions, ctx: CliContext): Promise<ExitCode> {
  // Nothing is sent before the target resolves and the confirmation rule passes (a destructive command: no fallback node).
  const target = resolveCommandTarget(opts, ctx, { command: 'tsnode sweep cancel', destructive: true });
  if (!opts.dryRun && !opts.yes && !(ctx.stdin.isTTY && ctx.stderr.isTTY)) {
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
    // The same identity and coverage checks as a sweep: a cancel that misses ring nodes leaves their sweeps running.
    const report = judgeCluster(await gatherClusterFacts(clients, { concurrency: opts.concurrency, call: { signal: ctx.signal } }), { allowPartial: opts.allowPartial });
    if (ctx.signal.aborted) return EXIT.interrupted;
    logReport(ctx, report);
    if (report.problems.length) {
      for (const p of report.problems) ctx.log.error(p.node ? `${p.node}: ${p.message}` : p.message);
      throw new UsageError('refusing to cancel: nothing was sent', coverageHint(report) || undefined);
    }
    if (!opts.yes) {
      const answer = await askYesNo(ctx, `Cancel running sweeps on ${plural(run.nodes.length)} (${run.described})?`);
      if (answer === 'no-tty') throw new UsageError('not on a terminal: pass --yes to confirm cancelling (nothing was sent)');
      if (answer === 'interrupted') return EXIT.interrupted;
      if (answer === 'no') throw new UsageError('cancel not confirmed: nothing was sent');
    }
    const outcomes = await fanOut(clients, (c) => c.cancelSweep({ signal: ctx.signal }), { concurrency: opts.concurrency });
    const rows: CancelRow[] = outcomes.map((o) => {
      if (!o.ok) return { node: o.node, state: 'failed', cancelled: [], error: { code: o.error.code, message: o.error.detail } };
      const cancelled = runningTypes(o.value);
      return { node: o.node, state: cancelled.length ? 'cancelling' : 'idle', cancelled, error: null };
    });
    const failed = rows.filter((r) => r.state === 'failed').length;
    const code = ctx.signal.aborted ? EXIT.interrupted : failed === 0 ? EXIT.ok : failed === rows.length ? EXIT.failed : EXIT.partial;
    // The journal keeps its own shape (a file format): the error as its message.
    const entry: SweepCancelEntry = {
      kind: 'sweep.cancel',
      run: newRunId(),
      by: whoAmI(ctx.env),
      nodeSource: target.origin,
      described: run.described,
      profile: shown.profile,
      nodes: rows.map((r) => ({ node: r.node, state: r.state, cancelled: r.cancelled, error: r.error?.message ?? null })),
      coverage: journaledCoverage(report.coverage),
    };
    new Journal(journalPath({ flag: opts.journal, env: ctx.env, cwd: ctx.cwd }), (m) => ctx.log.warn(m), ctx.now).append(entry);
    if (opts.output === 'json') ctx.stdout.write(renderJson(cancelJson(rows, { target: shown, coverage: report.coverage, exitCode: code })));
    else if (opts.output === 'csv') ctx.stdout.write(cancelCsv(rows, Boolean(ctx.stdout.isTTY)));
    else ctx.stdout.write(cancelTable(rows, { colour: ctx.colour, width: tableWidth(ctx) }) + missingFooter(report, 'not cancelled'));
    return code;
  } finally {
    await run.network.close();
  }
}
