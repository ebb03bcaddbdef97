import type { NodeClient } from '../../../client/node-client.js';
import { gatherClusterFacts, judgeCluster, type ClusterCheckReport } from '../../../client/sweep-checks.js';
import { deleteOnNodes, lookOnNodes, metricKey, proveGone, type NodeDeletion, type NodeLook, type NodeProof, type TagDeleteRequest } from '../../../client/tag-delete.js';
import { parseMetricName } from '../../../tags/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { newRunId, whoAmI, type Journal } from '../../journal.js';
import { NodeRequestError } from '../../../client/errors.js';
import { connectTarget, resolveCommandTarget, type TargetRun } from '../../node-source.js';
import { askYesNo } from '../../prompt.js';
import { printable } from '../../render/printable.js';
import { carriedFlags, shellQuote, type CarriedFlags } from '../sweep/catch-up.js';
import { guardRun, RunLockedError } from '../../../run/index.js';
import { SweepRefusedError } from '../../../client/sweep-preflight.js';
import { coverageHint, journaledCoverage, lockDir, logReport, openJournal } from '../sweep/run-text.js';
import type { DeleteOptions } from './options.js';
import { planDelete, type DeletePlan } from './plan.js';
import { printLooks, printResult, type NodeOutcome } from './render.js';

type Opts = DeleteOptions & { target: string };

const plural = (n: number, what = 'node'): string => `${n} ${what}${n === 1 ? '' : 's'}`;

export async function deleteAction(opts: Opts, ctx: CliContext): Promise<ExitCode> {
  // 1. The command's own flags and the query, then the target: nothing is sent until both pass.
  const plan = planDelete(opts, ctx.now(), parseMetricName);
  const target = resolveCommandTarget(opts, ctx, { command: 'tsnode delete', destructive: true });
  if (!opts.dryRun && !opts.yes && !(ctx.stdin.isTTY && ctx.stderr.isTTY)) {
    throw new UsageError('not on a terminal: pass --yes to confirm the delete (nothing was sent)', `it would delete ${plan.scope} of the metrics ${describeWhat(plan)} selects`);
  }
  const carried = carriedFlags(opts, ctx.env, ctx.cwd, { profile: target.profile?.name, journal: opts.journal });
  const run = await connectTarget(target, opts, ctx);
  // The run core's guard: one run per node set (the target lock), and a refused run leaves a
  // `run.refused` record in the journal.
  const journal = openJournal(ctx, opts.journal);
  const runId = newRunId();
  let report: ClusterCheckReport | undefined;
  const identity = () => ({ command: 'delete', runId, by: whoAmI(ctx.env), nodes: run.nodes, nodeSource: run.target.origin, profile: run.target.profile?.name ?? null });
  try {
    return await guardRun(identity, { journal, lockDir: lockDir(ctx), onTakeOver: (m) => ctx.log.warn(m), report: () => report }, () =>
      deleteOn(run, plan, carried, opts, ctx, { journal, runId, onReport: (r) => (report = r) }),
    );
  } catch (err) {
    if (err instanceof RunLockedError) throw new UsageError(`refusing to delete: ${err.message}`, err.hint);
    if (err instanceof SweepRefusedError) throw new UsageError('refusing to delete: nothing was deleted', refusalHint(err, report, opts));
    throw err;
  } finally {
    await run.network.close();
  }
}

function refusalHint(err: SweepRefusedError, report: ClusterCheckReport | undefined, opts: Opts): string | undefined {
  const hints = [
    err.unreachable.length && !opts.skipUnreachable ? '--skip-unreachable to delete on the others (the skipped nodes are listed)' : '',
    coverageHint(report).replace('sweep', 'delete on'),
  ].filter(Boolean);
  return hints.length ? `use ${hints.join('; ')}` : undefined;
}

interface RunHandles {
  journal: Journal;
  runId: string;
  onReport: (r: ClusterCheckReport) => void;
}

function describeWhat(plan: DeletePlan): string {
  return plan.metric ? `--metric ${plan.metric.uuid} ${printable(plan.metric.metric)}` : printable(plan.query);
}

/** Coverage and reachability: who is asked, who is skipped; a problem no flag allows refuses the run (nothing deleted). */
async function preflight(clients: NodeClient[], plan: DeletePlan, opts: Opts, ctx: CliContext, onReport: (r: ClusterCheckReport) => void) {
  const facts = await gatherClusterFacts(clients, { concurrency: plan.concurrency, call: { signal: ctx.signal } });
  const report = judgeCluster(facts, { allowPartial: opts.allowPartial });
  onReport(report);
  logReport(ctx, report);
  const silent = facts.nodes.filter((n) => n.error !== undefined).map((n) => ({ node: n.url, error: n.error! }));
  const unreachable = opts.skipUnreachable
    ? []
    : silent.map((s) => ({ node: s.node, running: [], error: new NodeRequestError(s.node, 'unreachable', s.error, { retryable: false }) }));
  if (report.problems.length || unreachable.length) {
    for (const p of report.problems) ctx.log.error(printable(p.node ? `${p.node}: ${p.message}` : p.message));
    for (const u of silent) if (!opts.skipUnreachable) ctx.log.error(`${u.node} is unreachable: ${printable(u.error)}`);
    throw new SweepRefusedError([], unreachable, report.problems);
  }
  const skippedSet = new Set(silent.map((s) => s.node));
  return { ask: clients.filter((c) => !skippedSet.has(c.url)), skipped: silent, report };
}

/** The dry run of every request on every node; with --metric only the exact metric counts, and a query selecting others is refused. */
async function look(clients: NodeClient[], plan: DeletePlan, ctx: CliContext): Promise<NodeLook[][]> {
  const looks = await Promise.all(plan.requests.map((req) => lookOnNodes(clients, req, { limit: plan.listLimit, concurrency: plan.concurrency, signal: ctx.signal })));
  if (!plan.metric) return looks;
  const want = metricKey(plan.metric);
  return looks.map((perNode) =>
    perNode.map((l) => {
      const others = l.metrics.filter((m) => metricKey(m) !== want && m.status === 'found');
      if (others.length && plan.requests[0]!.scope.kind === 'before') {
        throw new UsageError(
          `refusing to delete: the query for ${printable(plan.metric!.metric)} also selects ${plural(others.length, 'other metric')} on ${l.node} (e.g. ${printable(others[0]!.metric)}); nothing was deleted`,
          'use a tag query that selects only what should go, and check it with tsnode find',
        );
      }
      return { ...l, metrics: l.metrics.filter((m) => metricKey(m) === want) };
    }),
  );
}

const foundOn = (looks: NodeLook[][], node: string): number =>
  looks.reduce((n, perNode) => n + (perNode.find((l) => l.node === node)?.metrics.filter((m) => m.status === 'found').length ?? 0), 0);

async function deleteOn(run: TargetRun, plan: DeletePlan, carried: CarriedFlags, opts: Opts, ctx: CliContext, handles: RunHandles): Promise<ExitCode> {
  const clients = run.nodes.map((n) => run.network.client(n));
  const { ask, skipped, report } = await preflight(clients, plan, opts, ctx, handles.onReport);
  // 2. The store's dry run on every node: what each would delete.
  const before = await look(ask, plan, ctx);
  const failedLook = before.flatMap((perNode) => perNode.filter((l) => l.error !== undefined));
  if (failedLook.length && !opts.skipUnreachable) {
    for (const l of failedLook) ctx.log.error(`${l.node}: the dry run failed: ${printable(l.error!)}`);
    const silent = failedLook.map((l) => ({
      node: l.node,
      running: [],
      error: new NodeRequestError(l.node, 'bad_answer', `the dry run failed: ${l.error!}`, { retryable: false }),
    }));
    throw new SweepRefusedError([], silent, []);
  }
  printLooks(ctx, opts.output, plan, before, opts.dryRun);
  const targets = ask.filter((c) => foundOn(before, c.url) > 0 && !failedLook.some((l) => l.node === c.url));
  const metricsFound = new Set(before.flatMap((p) => p.flatMap((l) => l.metrics.filter((m) => m.status === 'found').map(metricKey))));
  const copies = ask.reduce((n, c) => n + foundOn(before, c.url), 0);
  const truncated = before.some((p) => p.some((l) => l.incomplete));
  const total = `${truncated ? 'at least ' : ''}${plural(metricsFound.size, 'metric')} with data to delete (${copies} node copies) on ${targets.length} of ${plural(run.nodes.length)}`;
  ctx.log.info(`dry run: ${total}${skipped.length ? `; ${plural(skipped.length)} skipped (unreachable)` : ''}`);
  if (truncated) ctx.log.warn(`some node listed only --list-limit ${plan.listLimit} metrics in its dry run: the counts above are a lower bound`);
  if (opts.dryRun) {
    ctx.log.info('dry run: nothing was deleted');
    return EXIT.ok;
  }
  if (targets.length === 0 && skipped.length === 0 && failedLook.length === 0) {
    ctx.log.info('nothing to delete: no node has data the query selects');
    return EXIT.ok;
  }
  // 3. Confirmation, naming the counts.
  if (!opts.yes && targets.length) {
    const answer = await askYesNo(ctx, `Delete ${plan.scope} of ${total} (${run.described})?`);
    if (answer === 'interrupted') {
      ctx.log.warn('interrupted: nothing was deleted');
      return EXIT.interrupted;
    }
    if (answer !== 'yes') throw new UsageError('delete not confirmed: nothing was deleted');
  }
  return execute(run, plan, carried, opts, ctx, { targets, skipped: [...skipped, ...failedLook.map((l) => ({ node: l.node, error: l.error! }))], before, report }, handles);
}

interface Stage {
  targets: NodeClient[];
  skipped: Array<{ node: string; error: string }>;
  before: NodeLook[][];
  report: ClusterCheckReport;
}

/** 4-6. The journal's start line, the confirmed deletes, the after-look, the receipt and the exit code. */
async function execute(run: TargetRun, plan: DeletePlan, carried: CarriedFlags, opts: Opts, ctx: CliContext, stage: Stage, handles: RunHandles): Promise<ExitCode> {
  const { journal, runId } = handles;
  const common = {
    run: runId,
    by: whoAmI(ctx.env),
    query: plan.query,
    metric: plan.metric,
    account: plan.account,
    scope:
      plan.requests[0]!.scope.kind === 'full'
        ? { kind: 'full' }
        : { kind: 'before', before: (plan.requests[0]!.scope as { before: number }).before, types: plan.requests.map((r) => (r.scope as { type: string }).type) },
    nodeSource: run.target.origin,
    described: run.described,
    profile: run.target.profile?.name ?? null,
    coverage: journaledCoverage(stage.report.coverage),
  };
  journal.append({ kind: 'delete.start', ...common, nodes: run.nodes });
  ctx.log.info(`deleting ${plan.scope} on ${plural(stage.targets.length)} (batches of ${plan.batch})`);
  const deletions: NodeDeletion[][] = [];
  for (const req of plan.requests) deletions.push(await runDeletes(stage.targets, req, plan, ctx));
  const after = await look(stage.targets, plan, ctx);
  const outcomes = judge(run.nodes, plan, stage, deletions, after);
  const code = exitOf(outcomes, ctx.signal.aborted);
  const catchUp = catchUpCommand(plan, opts, carried, outcomes, stage.report);
  printResult(ctx, opts.output, { run: runId, plan, outcomes, exit: code, catchUp });
  journal.append({ kind: 'delete.end', ...common, nodes: outcomes, exit: code, catchUp: catchUp ?? null });
  for (const o of outcomes)
    if (o.reappeared.length)
      ctx.log.warn(`${o.node}: ${plural(o.reappeared.length, 'metric')} came back after the delete (a late replay?), e.g. ${printable(o.reappeared[0]!.metric)}`);
  if (catchUp) ctx.log.info(`to catch up: ${catchUp}`);
  ctx.log.info(`receipt: tsnode history show ${runId}`);
  return code;
}

async function runDeletes(targets: NodeClient[], req: TagDeleteRequest, plan: DeletePlan, ctx: CliContext): Promise<NodeDeletion[]> {
  if (plan.metric && req.scope.kind === 'full') {
    const m = plan.metric;
    return Promise.all(
      targets.map(async (c): Promise<NodeDeletion> => {
        try {
          await c.deleteCanonical({ ...m, account: plan.account }, { signal: ctx.signal });
          return { node: c.url, deleted: [m], rounds: 1, end: 'complete', other: [] };
        } catch (err) {
          return { node: c.url, deleted: [], rounds: 1, end: 'failed', other: [], error: err instanceof Error ? err.message : String(err) };
        }
      }),
    );
  }
  return deleteOnNodes(targets, req, {
    batch: plan.batch,
    maxRounds: plan.maxRounds,
    concurrency: plan.concurrency,
    signal: ctx.signal,
    onProgress: (p) => ctx.log.info(`${p.node}: round ${p.round}: ${p.deleted} deleted`),
  });
}

/** One outcome per node of the run, from its dry run, its deletions and its after-look. */
function judge(nodes: readonly string[], plan: DeletePlan, stage: Stage, deletions: NodeDeletion[][], after: NodeLook[][]): NodeOutcome[] {
  return nodes.map((node) => {
    const skip = stage.skipped.find((s) => s.node === node);
    const base: NodeOutcome = {
      node,
      state: 'nothing',
      reason: '',
      found: foundOn(stage.before, node),
      deleted: 0,
      rounds: 0,
      gone: 0,
      reappeared: [],
      remaining: [],
      metrics: [],
    };
    if (skip) return { ...base, state: 'skipped', reason: `unreachable: ${skip.error}` };
    const problems: string[] = [];
    plan.requests.forEach((req, r) => {
      const d = deletions[r]!.find((x) => x.node === node);
      if (!d) return;
      const a = after[r]!.find((x) => x.node === node)!;
      const b = stage.before[r]!.find((x) => x.node === node)!;
      const proof = proveGone(d, a, b);
      base.deleted += d.deleted.length;
      base.rounds += d.rounds;
      base.gone += proof.gone;
      base.reappeared.push(...proof.reappeared);
      base.remaining.push(...proof.remaining);
      const type = req.scope.kind === 'before' ? req.scope.type : undefined;
      base.metrics.push(...receiptRows(b, proof, type));
      if (d.end !== 'complete') problems.push(d.end === 'failed' ? `failed: ${d.error ?? ''}` : d.end.replace('_', ' '));
      if (proof.unconfirmed) problems.push(`unconfirmed: ${proof.unconfirmed}`);
    });
    if (base.found === 0 && base.deleted === 0) return base;
    if (base.reappeared.length) problems.push(`${base.reappeared.length} reappeared`);
    if (base.remaining.length) problems.push(`${base.remaining.length} remaining`);
    // A call that failed after the node did its work (a lost answer) is no failure when the after-look proves everything gone.
    const proven = base.remaining.length === 0 && base.reappeared.length === 0 && base.gone >= base.found && !problems.some((p) => p.startsWith('unconfirmed'));
    if (problems.length === 0 || (proven && problems.every((p) => p.startsWith('failed')))) {
      const lost = problems.length ? ` (${problems.join('; ')}; the after-look proves every metric gone)` : '';
      return { ...base, state: 'deleted', reason: `every deleted metric answers no content or not found${lost}` };
    }
    const state = problems.some((p) => p.startsWith('unconfirmed')) && base.gone > 0 ? 'unconfirmed' : base.deleted === 0 && base.gone === 0 ? 'failed' : 'partial';
    return { ...base, state, reason: problems.join('; ') };
  });
}

function receiptRows(before: NodeLook, proof: NodeProof, type?: string): NodeOutcome['metrics'] {
  const back = new Set(proof.reappeared.map(metricKey));
  const left = new Set(proof.remaining.map(metricKey));
  return before.metrics.map((m) => ({
    ...(type ? { type } : {}),
    uuid: m.uuid,
    metric_name: m.metric,
    before: m.status,
    after: back.has(metricKey(m)) ? 'reappeared' : left.has(metricKey(m)) ? 'not deleted' : m.status === 'found' ? 'gone' : m.status,
  }));
}

function exitOf(outcomes: NodeOutcome[], interrupted: boolean): ExitCode {
  if (interrupted) return EXIT.interrupted;
  const good = outcomes.filter((o) => o.state === 'deleted' || o.state === 'nothing').length;
  if (good === outcomes.length) return EXIT.ok;
  return outcomes.some((o) => o.state === 'deleted' || o.state === 'partial') ? EXIT.partial : EXIT.failed;
}

/** The command that repeats this delete on the nodes not proven done: it runs as printed (--yes when the run had it). */
function catchUpCommand(plan: DeletePlan, opts: Opts, carried: CarriedFlags, outcomes: NodeOutcome[], report: ClusterCheckReport): string | undefined {
  const nodes = outcomes.filter((o) => o.state !== 'deleted' && o.state !== 'nothing').map((o) => o.node);
  if (nodes.length === 0) return undefined;
  const args = ['tsnode', 'delete'];
  if (plan.metric) args.push('--metric', plan.metric.uuid, plan.metric.metric);
  else args.push(plan.query);
  const first = plan.requests[0]!.scope;
  if (first.kind === 'full') args.push('--full');
  else args.push('--before', String(first.before), '--types', plan.requests.map((r) => (r.scope as { type: string }).type).join(','));
  if (plan.account !== 1) args.push('--account', String(plan.account));
  if (opts.batch !== undefined) args.push('--batch', String(plan.batch));
  args.push('--nodes', nodes.join(','));
  const ring = report.coverage.hash !== null || report.coverage.allowed;
  if (ring && (report.coverage.allowed || nodes.length < outcomes.length)) args.push('--allow-partial');
  if (opts.yes) args.push('--yes');
  args.push(...carried.carry);
  return args.map(shellQuote).join(' ');
}
