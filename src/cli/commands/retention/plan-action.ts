import { gatherClusterFacts, judgeCluster } from '../../../client/sweep-checks.js';
import { planRetention } from '../../../retention/index.js';
import { describeLag, hasLag, readReplicationLag } from '../../../client/replication-lag.js';
import type { CliContext } from '../../context.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { renderJson, tableWidth } from '../../render/table.js';
import type { RetentionPlanFlags } from './options.js';
import { nodeSpansOf, readPolicy } from './policy-input.js';
import { planCsv, planJson, planText } from './render.js';
import { openTarget } from '../../node-source.js';
import { managedByOfNodes } from './node-managed.js';

/**
 * `tsnode retention plan`: the policy, "now" pinned once, every node's spans (GET /state, read-only)
 * and the steps with each node's exact requests. Sends no DELETE.
 */
export async function retentionPlanAction(opts: RetentionPlanFlags, ctx: CliContext): Promise<ExitCode> {
  const policy = readPolicy(opts.policy, opts.rule, ctx.cwd);
  const run = await openTarget(opts, ctx, { command: 'tsnode retention plan' });
  const { target, nodes, network: net } = run;
  const origin = target.origin;
  try {
    const now = ctx.now();
    const facts = await gatherClusterFacts(
      nodes.map((n) => net.client(n)),
      { concurrency: opts.concurrency, call: { signal: net.signal } },
    );
    if (ctx.signal.aborted) return EXIT.interrupted;
    const managed = await managedByOfNodes(
      nodes.map((n) => net.client(n)),
      { concurrency: opts.concurrency, signal: net.signal },
    );
    for (const n of nodes)
      if (managed.get(n) === 'node') ctx.log.info(`${n}: no sweep API, its retention is its own config: retention apply sends it nothing and verifies it instead`);
    // What apply's lag preflight would find (a replicating ring): shown, never a refusal here.
    const lag = await readReplicationLag(
      nodes.map((n) => net.client(n)),
      { concurrency: opts.concurrency, call: { signal: net.signal } },
    );
    if (!lag.checked) ctx.log.info('replication lag: not reported by the nodes (not checked)');
    for (const n of lag.nodes.filter(hasLag)) ctx.log.warn(`${n.node}: replication ${describeLag(n)} (retention apply refuses this without --allow-lag)`);
    const report = judgeCluster(facts);
    for (const note of report.notes) ctx.log.info(note);
    for (const p of report.problems) ctx.log.warn(`${p.node ? `${p.node}: ` : ''}${p.message} (retention apply refuses this)`);
    const declared = {
      ...(target.spans.nntRollups ? { nnt: target.spans.nntRollups.value } : {}),
      ...(target.spans.histogramRollups ? { histogram: target.spans.histogramRollups.value } : {}),
    };
    const plan = planRetention(policy, now, nodeSpansOf(nodes, facts), { headerPrefix: target.headerPrefix.value, declared });
    for (const w of plan.warnings) ctx.log.warn(w);
    for (const t of ['nnt', 'histogram', 'text'] as const) {
      if (!policy.rules.some((r) => r.type === t)) ctx.log.info(`${t}: no rule, kept forever`);
    }
    if (opts.output === 'json') ctx.stdout.write(renderJson(planJson(plan, { nodeSource: origin, coverage: report.coverage, managed, lag })));
    else if (opts.output === 'csv') ctx.stdout.write(planCsv(plan, Boolean(ctx.stdout.isTTY)));
    else ctx.stdout.write(planText(plan, ctx.colour, tableWidth(ctx)));
    ctx.log.info(
      `planned ${plan.steps.length} step(s) on ${nodes.length} node(s) at ${new Date(plan.now * 1000).toISOString().replace('.000Z', 'Z')}; nothing was sent (tsnode retention apply runs it)`,
    );
    return EXIT.ok;
  } finally {
    await net.close();
  }
}
