import { gatherRetentionFacts } from '../../../client/inventory.js';
import { gatherClusterFacts, judgeCluster, type CoverageOutcome } from '../../../client/sweep-checks.js';
import { rulesOf, verifyOutcome, verifyRetention, type Policy, type VerifyReport } from '../../../retention/index.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { renderJson, tableWidth } from '../../render/table.js';
import { openTarget } from '../../node-source.js';
import type { RetentionVerifyFlags } from './options.js';
import { readPolicy } from './policy-input.js';
import { withMetricsFile } from '../../metrics-file.js';
import { verifyFamilies } from './verify-metrics.js';
import { verifyCsv, verifyJson, verifyText } from './verify-render.js';

/** What a verify run found and what it means, for output, metrics and the exit code. */
export interface VerifyRun {
  report: VerifyReport;
  coverage: CoverageOutcome | null;
  outcome: ReturnType<typeof verifyOutcome>;
  exit: ExitCode;
}

/**
 * `tsnode retention verify`: per node, type and span, what the node holds against the policy.
 * Read-only (GETs only): checks the nodes it is given, reports ring coverage without refusing.
 */
export async function retentionVerifyAction(opts: RetentionVerifyFlags, ctx: CliContext): Promise<ExitCode> {
  return withMetricsFile(opts.metricsFile, 'retention_verify', ctx, async (metrics) => {
    const policy = readPolicy(opts.policy, opts.rule, ctx.cwd);
    const run = await openTarget(opts, ctx, { command: 'tsnode retention verify' });
    const { target, nodes, network: net } = run;
    try {
      const result = await verifyNodes(policy, nodes, (u) => net.client(u), { concurrency: opts.concurrency, signal: net.signal, now: ctx.now() });
      if (ctx.signal.aborted) return EXIT.interrupted;
      metrics.outcome = result.outcome;
      metrics.add(...verifyFamilies('retention_verify', result.report));
      if (result.coverage) ctx.log.info(result.coverage.note);
      if (result.coverage?.missing.length) {
        ctx.log.warn(`not verified: ${result.coverage.missing.length} ring node(s) not in the list: ${result.coverage.missing.map((m) => m.url).join(', ')}`);
      }
      const { report } = result;
      if (opts.output === 'json') ctx.stdout.write(renderJson(verifyJson(report, { policy, nodeSource: target.origin, coverage: result.coverage, outcome: result.outcome })));
      else if (opts.output === 'csv') ctx.stdout.write(verifyCsv(report, Boolean(ctx.stdout.isTTY)));
      else ctx.stdout.write(verifyText(report, ctx.colour, tableWidth(ctx)));
      const c = report.counts;
      ctx.log.info(
        `verified ${nodes.length} node(s): ${c.compliant} compliant, ${c.over_retained} over_retained, ${c.drift} drift, ${c.cannot_verify} cannot_verify (read-only: nothing was deleted)`,
      );
      return result.exit;
    } finally {
      await net.close();
    }
  });
}

/** Gathers the facts, verifies, and judges the exit: 0 compliant, 3 over-retained, drift, partly verified or ring nodes missing, 1 nothing verified. */
export async function verifyNodes(
  policy: Policy,
  nodes: readonly string[],
  client: (url: string) => import('../../../client/node-client.js').NodeClient,
  o: { concurrency: number; signal: AbortSignal; now: number },
): Promise<VerifyRun> {
  const clients = nodes.map(client);
  const histogramPeriods = rulesOf(policy, 'histogram').flatMap((r) => (typeof r.span === 'number' ? [r.span] : []));
  const [facts, cluster] = await Promise.all([
    gatherRetentionFacts(clients, { histogramPeriods, concurrency: o.concurrency, call: { signal: o.signal } }),
    gatherClusterFacts(clients, { concurrency: o.concurrency, call: { signal: o.signal } }),
  ]);
  const coverage = judgeCluster(cluster).coverage;
  const report = verifyRetention(policy, o.now, facts);
  const outcome = verifyOutcome(report);
  let exit: ExitCode = outcome === 'compliant' ? EXIT.ok : outcome === 'unverified' ? EXIT.failed : EXIT.partial;
  if (exit === EXIT.ok && coverage.missing.length > 0) exit = EXIT.partial;
  return { report, coverage: coverage.verdict === 'unchecked' ? null : coverage, outcome, exit };
}
