import type { NodeClient } from '../../../client/node-client.js';
import { describeGap, describeSkew, judgeClockSkew, sampleClocks } from '../../../client/clock-skew.js';
import { resolve } from 'node:path';
import { gatherClusterFacts, judgeCluster, type ClusterCheckReport, type ClusterFacts } from '../../../client/sweep-checks.js';
import { SweepRefusedError } from '../../../client/sweep-preflight.js';
import { AbortedError } from '../../../client/errors.js';
import { lockTargets } from '../../../run/lock.js';
import { recordRefusal, refusalOf } from '../../../run/refusal.js';
import { notSweptCatchUp, runRetention, type RetentionRun } from '../../../run/retention.js';
import {
  formatRule,
  isoSeconds,
  newRetentionRunId,
  planRetention,
  policyToObject,
  resumeRun,
  runFingerprint,
  shortRules,
  shortRuleWarning,
  summariseRun,
  type Policy,
  type RetentionEvent,
  type RetentionPlan,
  type RunState,
  newRun,
  type RunOrigin,
} from '../../../retention/index.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { silentNodesHint, lockDir, logRefusal, missingFooter, NO_SWEEP_API_HINT, openJournal } from '../../run/run-text.js';
import { lagAllowance, logLag, replicationLagOption, skipUnreachableOf } from '../../run/lag.js';
import type { LagReport } from '../../../client/replication-lag.js';
import {
  Journal,
  journalPath,
  whoAmI,
  type JournaledCoverage,
  type JournaledSpans,
  type RetentionEndEntry,
  type RetentionStartEntry,
  type RetentionStepEntry,
} from '../../journal.js';
import { askTyped, askYesNo } from '../../prompt.js';
import { renderJson, tableWidth } from '../../render/table.js';
import { describeTime } from '../../time.js';
import { shellQuote } from '../../../run/catch-up.js';
import type { RetentionApplyFlags } from './options.js';
import { nodeSpansOf, readPolicy } from './policy-input.js';
import { RetentionProgress } from './progress.js';
import { describeRequest, resultCsv, resultJson, resultTable, stoppedAt } from './render.js';
import { CONTINUABLE, findSavedRun, lockRun, rawHasWorkLeft, readRunFile, runDir, runFilePath, writeRunFile } from './run-files.js';
import { openNetwork, type Network } from '../../network.js';
import { openTarget } from '../../node-source.js';
import { resolveSettings } from './target.js';
import type { ResolvedTarget } from '../../config/target.js';
import { withMetricsFile, type MetricsRecorder } from '../../metrics-file.js';
import { ReceiptHook, receiptFamilies, receiptLine } from '../../receipts.js';
import { lookScopeOf, type LookScope } from '../../../client/receipt.js';
import type { WireNodeState } from '../../../protocol/index.js';
import type { MetricFamily } from '../../render/prometheus.js';
import type { ManagedBy } from '../../../protocol/index.js';
import type { VerifyReport } from '../../../retention/index.js';
import { managedByOfNodes, nodeManagedJson, nodeManagedLines, verifyNodeManaged, withNodeManaged } from './node-managed.js';
import { verifyFamilies } from './verify-metrics.js';

export { retentionExitCode } from '../../../run/retention.js';

/** The command that continues a run on the nodes that did not finish: its id, and the flags that reach them the same way (header values never shown). */
export function resumeCommand(
  runId: string,
  opts: Pick<RetentionApplyFlags, 'cacert' | 'cert' | 'key' | 'insecure' | 'redact' | 'header' | 'journal'> & { yes?: boolean; allowShortAge?: boolean },
  ctx: Pick<CliContext, 'profile' | 'cwd' | 'env'>,
): { command: string; addBack: string[]; reach: string[] } {
  const args = ['tsnode', 'retention', 'apply', '--resume', runId];
  // A catch-up runs as printed: unattended when the run was.
  if (opts.yes) args.push('--yes');
  if (opts.allowShortAge) args.push('--allow-short-age');
  const first = args.length;
  if (ctx.profile !== undefined) args.push('--profile', ctx.profile);
  if (opts.cacert !== undefined) args.push('--cacert', resolve(ctx.cwd, opts.cacert));
  if (opts.cert !== undefined) args.push('--cert', resolve(ctx.cwd, opts.cert));
  if (opts.key !== undefined) args.push('--key', resolve(ctx.cwd, opts.key));
  if (opts.insecure) args.push('--insecure');
  for (const r of opts.redact) args.push('--redact', r);
  if (opts.journal !== undefined) args.push('--journal', resolve(ctx.cwd, opts.journal));
  const addBack: string[] = [];
  if (opts.header.length) addBack.push(`--header (${opts.header.length} given; values not shown)`);
  if (ctx.env.TSNODE_HEADERS) addBack.push('TSNODE_HEADERS (read from the environment again when set)');
  if (ctx.profile === undefined && ctx.env.TSNODE_PROFILE) addBack.push(`TSNODE_PROFILE (${ctx.env.TSNODE_PROFILE}, read from the environment again when set)`);
  return { command: args.map(shellQuote).join(' '), addBack, reach: args.slice(first) };
}

/** The run's state, recording how it reached its nodes (a run file of version 1 gets this attempt's). */
function withOrigin(found: RunState | undefined, plan: RetentionPlan, runId: string, base: ReturnType<typeof resumeCommand>, ctx: CliContext): RunState {
  const origin: RunOrigin = found?.origin ?? { profile: ctx.profile ?? null, flags: base.reach, addBack: base.addBack };
  return found ? { ...found, origin } : newRun(plan, { runId, at: ctx.now(), origin });
}

/**
 * A resume reaches the run's nodes as the run did: without --profile (or TSNODE_PROFILE) it takes
 * the profile its run file records; flags that differ from the recorded ones are named (the
 * resume goes on with the ones given).
 */
function withRecordedProfile(saved: RunState, opts: RetentionApplyFlags, ctx: CliContext): CliContext {
  const origin = saved.origin;
  if (!origin) return ctx;
  const recorded = origin.profile;
  const run = recorded !== null && ctx.profile === undefined && !ctx.env.TSNODE_PROFILE ? { ...ctx, profile: recorded } : ctx;
  if (run !== ctx) ctx.log.info(`profile ${recorded}: the one run ${saved.runId} was started with (its run file); --profile chooses another`);
  const now = resumeCommand(saved.runId, opts, run).reach;
  if (now.join('\0') !== origin.flags.join('\0')) {
    const shown = (f: readonly string[]): string => (f.length ? f.map(shellQuote).join(' ') : '(none)');
    ctx.log.warn(`run ${saved.runId} was started with ${shown(origin.flags)}; this resume reaches its nodes with ${shown(now)}`);
  }
  if (origin.addBack.length) ctx.log.info(`run ${saved.runId} also had: ${origin.addBack.join('; ')}`);
  return run;
}

/** Rules under an hour (SHORT_AGE_SECONDS) off a terminal: only --allow-short-age lets them run. */
function refuseShortAgesOffTerminal(policy: Policy | undefined, opts: RetentionApplyFlags, ctx: CliContext): void {
  const short = policy ? shortRules(policy) : [];
  if (!short.length || opts.allowShortAge || (ctx.stdin.isTTY && ctx.stderr.isTTY)) return;
  throw new UsageError(
    `${shortRuleWarning(short[0]!)}; refused without --allow-short-age off a terminal (nothing was sent)`,
    `if you mean it, add --allow-short-age; otherwise fix the age (${short.map((r) => formatRule(r)).join(', ')})`,
  );
}

/** On a terminal, rules under an hour need the shortest one typed back (--allow-short-age skips it). */
async function confirmShortAges(policy: Policy, opts: RetentionApplyFlags, ctx: CliContext): Promise<boolean> {
  const short = shortRules(policy);
  if (!short.length || opts.allowShortAge) return true;
  const rule = formatRule(short[0]!);
  const others = short.length > 1 ? ` (and ${short.length - 1} other rule(s) under 1h)` : '';
  const answer = await askTyped(ctx, `${rule}${others} deletes nearly everything it covers. Type ${rule} to run it anyway (anything else stops here):`, rule);
  if (answer === 'interrupted') throw new AbortedError('(cluster)', 'interrupted at the prompt');
  return answer === 'yes';
}

function spansOf(list: number[] | undefined, swept: boolean): JournaledSpans {
  return !swept ? null : list?.length ? [...list] : 'all';
}

function journaledCoverage(r: ClusterCheckReport): JournaledCoverage {
  const c = r.coverage;
  return { verdict: c.verdict, hash: c.hash, missing: c.missing, problems: c.problems, allowed: c.allowed };
}

/**
 * `tsnode retention apply`: plan (or load a saved run), preflight and checks, confirm, then every
 * node's steps; the run file before every DELETE, the journal per step, the result and catch-up.
 */
export async function retentionApplyAction(opts: RetentionApplyFlags, ctx: CliContext): Promise<ExitCode> {
  return withMetricsFile(opts.metricsFile, 'retention_apply', ctx, (metrics) => applyRun(opts, ctx, metrics));
}

/** What a run holds and must let go of, whatever happens. */
interface Held {
  net?: Network;
  progress?: RetentionProgress;
  lock?: { release(): void };
  targetLock?: { release(): void };
  journal?: Journal;
}

/** Where the nodes came from: a saved run's own, or the target's. */
interface Resolved {
  nodes: string[];
  origin: string;
}

/** One run of `retention apply` as its steps below share it, once the plan is known. */
interface ApplyContext {
  opts: RetentionApplyFlags;
  ctx: CliContext;
  held: Held;
  plan: RetentionPlan;
  runId: string;
  runFile: string;
  nodeSource: string;
  by: string;
  log: Journal;
  report: ClusterCheckReport;
  receipts: ReceiptHook | null;
  /** The command that continues this run (resumeCommand). */
  catchUpBase: ReturnType<typeof resumeCommand>;
  resolved: Resolved;
  /** --allow-lag, or the profile's allow_lag. */
  allowed: ReturnType<typeof lagAllowance>;
  /** --skip-unreachable, or the profile's skip_unreachable. */
  skipUnreachable: boolean;
  /** The replication lag the preflight read (shown once the preflight passed: a refusal names it itself). */
  lagRead?: LagReport;
}

/**
 * What an apply starts from: the policy, or the saved run `--resume` names and the context that
 * reaches the nodes as that run did (the profile its run file records). `done` when that run
 * already finished every step.
 */
function startingPoint(opts: RetentionApplyFlags, given: CliContext): { policy: Policy | undefined; saved: RunState | undefined; ctx: CliContext; dir: string } | 'done' {
  const policy = checkApplyFlags(opts, given);
  const dir = runDir(given.env);
  const saved = opts.resume !== undefined ? findRun(dir, opts.resume, given) : undefined;
  refuseShortAgesOffTerminal(policy ?? saved?.plan.policy, opts, given);
  if (saved && summariseRun(saved).outcome === 'complete') {
    given.log.info(`run ${saved.runId} finished every step on every node already: nothing to do (nothing was sent)`);
    return 'done';
  }
  return { policy, saved, dir, ctx: saved ? withRecordedProfile(saved, opts, given) : given };
}

async function applyRun(opts: RetentionApplyFlags, given: CliContext, metrics: MetricsRecorder): Promise<ExitCode> {
  const start = startingPoint(opts, given);
  if (start === 'done') return EXIT.ok;
  const { policy, saved, ctx, dir } = start;
  // SIGTERM (systemd stopping the unit, kill) aborts ctx.signal like Ctrl-C (main.ts): no further
  // DELETE, the run recorded as interrupted.
  const signal = ctx.signal;
  const held: Held = {};
  try {
    const { target, resolved } = await openApplyTarget(opts, ctx, saved, held);
    const network = held.net!;
    const allowed = lagAllowance(opts.allowLag, target);
    const clients = resolved.nodes.map((n) => network.client(n));
    const refuse = refuser(opts, ctx, resolved, policy);
    // One destructive run per node from this host: taken before a saved run of the same policy is
    // looked for, so a second apply never mistakes a running one for one to continue.
    held.targetLock = lockNodes(ctx, resolved, saved, refuse);

    const look = await lookAtNodes(opts, ctx, clients, resolved, saved);
    if (look === 'interrupted') return EXIT.interrupted;
    const { facts, report, nodeManaged, sweepNodes, sweepClients, states } = look;
    const receipts = opts.receipt ? new ReceiptHook(sweepClients, { settleMs: opts.settle, concurrency: opts.concurrency, signal, now: ctx.now, states }) : null;
    const verifyManaged = (): Promise<VerifyReport | null> =>
      verifyManagedNodes(
        opts,
        ctx,
        policy,
        clients.filter((c) => nodeManaged.includes(c.url)),
      );
    if (!saved && sweepNodes.length === 0 && nodeManaged.length > 0) return onlyNodeManaged(opts, ctx, await verifyManaged(), metrics);

    const { state: found, plan } = saved ? continueSaved(saved, ctx) : await planNewRun({ opts, ctx, clients, policy: policy!, target, facts, sweepNodes, report, dir, refuse });
    const runId = found?.runId ?? newRetentionRunId(ctx.now());
    const catchUpBase = resumeCommand(runId, opts, ctx);
    const state = withOrigin(found, plan, runId, catchUpBase, ctx);
    const runFile = runFilePath(dir, runId);
    held.lock = lockRun(dir, runId, (m) => ctx.log.warn(m));
    const log = new Journal(journalPath({ flag: opts.journal, env: ctx.env, cwd: ctx.cwd }), (m) => ctx.log.warn(m), ctx.now, true);
    held.journal = log;
    const nodeSource = saved ? `run file ${runFile}` : resolved.origin;
    const run: ApplyContext = {
      opts,
      ctx,
      held,
      plan,
      runId,
      runFile,
      nodeSource,
      by: whoAmI(ctx.env),
      log,
      report,
      receipts,
      resolved,
      allowed,
      skipUnreachable: skipUnreachableOf(opts.skipUnreachable, target, ctx),
      catchUpBase,
    };

    // Unattended, the receipt's first look runs alongside the preflight: read-only, and nobody's
    // answer comes between it and the first DELETE (on a refusal it is simply not used).
    if (unattended(opts, plan)) receipts?.start(receiptScope(plan));
    const result = await runOrRefuse(run, sweepClients, state);
    if (typeof result === 'number') return result;
    held.progress?.stop();
    const receipt = (await receipts?.after(log, runId, result.state.attempt)) ?? null;
    const managedReport = result.interrupted ? null : await verifyManaged();
    return finishRun(run, result, managedReport, receipt, metrics);
  } finally {
    held.progress?.stop();
    held.journal?.close();
    held.lock?.release();
    held.targetLock?.release();
    await held.net?.close();
  }
}

/**
 * What the nodes say about themselves: their spans (for the plan), identities and ring (the
 * checks), and which keep their own retention (no sweep API: nothing is sent to them, they are
 * verified instead).
 */
async function lookAtNodes(
  opts: RetentionApplyFlags,
  ctx: CliContext,
  clients: readonly NodeClient[],
  resolved: Resolved,
  saved: RunState | undefined,
): Promise<
  'interrupted' | { facts: ClusterFacts; report: ClusterCheckReport; nodeManaged: string[]; sweepNodes: string[]; sweepClients: NodeClient[]; states: Map<string, WireNodeState> }
> {
  const signal = ctx.signal;
  // Their `/state` answers are kept: the receipt's before-look reads free space from them rather than asking again.
  const states = new Map<string, WireNodeState>();
  const facts = await gatherClusterFacts(clients, { concurrency: opts.concurrency, call: { signal }, states });
  if (signal.aborted) {
    ctx.log.warn('interrupted before anything was sent');
    return 'interrupted';
  }
  const report = judgeCluster(facts, { allowPartial: opts.allowPartial });
  for (const note of report.notes) ctx.log.info(note);
  const managed = saved ? new Map<string, ManagedBy | null>() : await managedByOfNodes(clients, { concurrency: opts.concurrency, signal });
  const nodeManaged = resolved.nodes.filter((n) => managed.get(n) === 'node');
  for (const n of nodeManaged) ctx.log.info(`${n}: no sweep API, its retention is its own config: node_managed (nothing is sent to it; it is verified instead)`);
  const sweepNodes = resolved.nodes.filter((n) => managed.get(n) !== 'node');
  const sweepClients = clients.filter((c) => managed.get(c.url) !== 'node');
  return { facts, report, nodeManaged, sweepNodes, sweepClients, states };
}

/** The nodes that keep their own retention, verified against the policy (none, or a resumed run without one: nothing to verify). */
async function verifyManagedNodes(opts: RetentionApplyFlags, ctx: CliContext, policy: Policy | undefined, managed: readonly NodeClient[]): Promise<VerifyReport | null> {
  if (!managed.length || !policy) return null;
  const r = await verifyNodeManaged(policy, managed, { concurrency: opts.concurrency, signal: ctx.signal, now: ctx.now() });
  for (const line of nodeManagedLines(r)) ctx.log.info(line);
  return r;
}

/** Every node keeps its own retention: nothing is sent; the verification is the result. */
function onlyNodeManaged(opts: RetentionApplyFlags, ctx: CliContext, r: VerifyReport | null, metrics: MetricsRecorder): ExitCode {
  if (opts.output === 'json') ctx.stdout.write(renderJson({ outcome: 'node_managed', node_managed: nodeManagedJson(r) }));
  metrics.outcome = 'node_managed';
  if (r) metrics.add(...verifyFamilies('retention_apply', r));
  return withNodeManaged(EXIT.ok, r);
}

/** The target lock on the run's nodes; a node another run holds refuses this one (journaled). */
function lockNodes(ctx: CliContext, resolved: Resolved, saved: RunState | undefined, refuse: (err: unknown) => void): { release(): void } {
  try {
    return lockTargets(lockDir(ctx), resolved.nodes, { command: `retention apply (${saved?.runId ?? 'new run'})`, by: whoAmI(ctx.env), run: 'retention apply' }, (m) =>
      ctx.log.warn(m),
    );
  } catch (err) {
    // Kept: the refusal is journaled (refuse) before the error says itself (cli/errors.ts messageOf).
    refuse(err);
    throw err;
  }
}

/** Refuses flags that contradict each other and a run nobody can confirm, before any request; returns the policy of a new run. */
function checkApplyFlags(opts: RetentionApplyFlags, ctx: CliContext): Policy | undefined {
  const resuming = opts.resume !== undefined;
  if (resuming && (opts.policy !== undefined || opts.rule.length)) {
    throw new UsageError(
      '--resume continues a saved run: its policy and pinned cut-offs are in its run file (nothing was sent)',
      'drop the policy file and --rule, or drop --resume to start a new run',
      undefined,
      'conflicting_options',
    );
  }
  if (resuming && opts.fresh) throw new UsageError('--resume and --fresh contradict each other', 'give one of them', undefined, 'conflicting_options');
  if (resuming && (opts.nodes !== undefined || opts.seed !== undefined)) {
    throw new UsageError(
      '--resume continues a run on its own nodes (listed in its run file): --nodes and --seed do not apply',
      'drop --nodes/--seed; TLS and header options (or --profile) are given again',
      undefined,
      'conflicting_options',
    );
  }
  const policy = resuming ? undefined : readPolicy(opts.policy, opts.rule, ctx.cwd);
  // Without a terminal to ask on, --yes is the only confirmation: refuse before any request at all.
  if (!opts.yes && !(ctx.stdin.isTTY && ctx.stderr.isTTY)) {
    throw new UsageError('not on a terminal: pass --yes to confirm the retention run (nothing was sent)');
  }
  return policy;
}

/** The nodes and the network: a saved run's own nodes (only the settings come from flags and profile), else the target's. */
async function openApplyTarget(opts: RetentionApplyFlags, ctx: CliContext, saved: RunState | undefined, held: Held): Promise<{ target: ResolvedTarget; resolved: Resolved }> {
  if (saved) {
    const target = resolveSettings(opts, ctx, 'tsnode retention apply');
    held.net = openNetwork({ values: opts, target }, ctx);
    const resolved = { nodes: saved.plan.nodes.map((n) => n.node), origin: `run ${saved.runId} (${saved.plan.nodes.length} node(s))` };
    ctx.log.info(`nodes: the ${resolved.nodes.length} of run ${saved.runId} (its run file)`);
    return { target, resolved };
  }
  const opened = await openTarget(opts, ctx, { command: 'tsnode retention apply', destructive: true });
  held.net = opened.network;
  return { target: opened.target, resolved: { nodes: opened.nodes, origin: opened.target.origin } };
}

/** Journals a refusal (`run.refused`) before anything was sent, when the error is one. */
function refuser(opts: RetentionApplyFlags, ctx: CliContext, resolved: Resolved, policy: Policy | undefined): (err: unknown, report?: ClusterCheckReport) => void {
  const refusals = openJournal(ctx, opts.journal);
  return (err, report) => {
    const refusal = refusalOf(err, report);
    const who = { command: 'retention apply', runId: newRetentionRunId(ctx.now()), by: whoAmI(ctx.env), nodes: resolved.nodes, nodeSource: resolved.origin };
    if (refusal) recordRefusal({ ...who, ...(policy ? { policySource: policy.source } : {}) }, refusal, err, { journal: refusals });
  };
}

function continueSaved(saved: RunState, ctx: CliContext): { state: RunState; plan: RetentionPlan } {
  const state = resumeRun(saved);
  ctx.log.info(`continuing run ${state.runId} (attempt ${state.attempt}) with its cut-offs pinned at ${describeTime(state.plan.now * 1000)}`);
  return { state, plan: state.plan };
}

/** A new run's plan, after the clock check; or the stopped run of the very same plan, continued (unless --fresh). */
async function planNewRun(x: {
  opts: RetentionApplyFlags;
  ctx: CliContext;
  clients: readonly NodeClient[];
  policy: Policy;
  target: ResolvedTarget;
  facts: ClusterFacts;
  sweepNodes: string[];
  report: ClusterCheckReport;
  dir: string;
  refuse: (err: unknown, report?: ClusterCheckReport) => void;
}): Promise<{ state: RunState | undefined; plan: RetentionPlan }> {
  const { opts, ctx, target } = x;
  // The cut-offs are about to be pinned from this host's clock: it must agree with the nodes'.
  await refuseSkewedClock(x.clients, opts, ctx);
  const declared = {
    ...(target.spans.nntRollups ? { nnt: target.spans.nntRollups.value } : {}),
    ...(target.spans.histogramRollups ? { histogram: target.spans.histogramRollups.value } : {}),
  };
  let plan;
  try {
    plan = planRetention(x.policy, ctx.now(), nodeSpansOf(x.sweepNodes, x.facts), { headerPrefix: target.headerPrefix.value, declared });
  } catch (err) {
    // A span some node lacks refuses the run before anything is sent: the journal keeps it.
    x.refuse(err, x.report);
    throw err;
  }
  for (const w of plan.warnings) ctx.log.warn(w);
  if (opts.fresh) return { state: undefined, plan };
  const fp = runFingerprint(plan);
  const previous = findSavedRun(x.dir, (r) => r.fingerprint === fp, { skip: (p, why) => ctx.log.debug(`${p}: skipped (${why})`) });
  if (!previous || !CONTINUABLE.has(previous.outcome)) return { state: undefined, plan };
  const state = resumeRun(previous.state);
  ctx.log.info(
    `continuing run ${state.runId} of the same policy on the same nodes, which was stopped before it finished (attempt ${state.attempt}, cut-offs pinned at ${describeTime(state.plan.now * 1000)}); --fresh starts a new run instead`,
  );
  return { state, plan: state.plan };
}

/** The journal's line for every step that ended, and the progress display's events. */
function stepEvents(run: ApplyContext): (e: RetentionEvent) => void {
  const { ctx, plan } = run;
  return (e) => {
    run.held.progress?.onEvent(e);
    if (e.kind === 'persist_failed') ctx.log.warn(`cannot write the run file ${run.runFile}: ${e.error} (the run goes on; a later resume may repeat steps)`);
    if (e.kind !== 'step_end') return;
    const step = plan.steps[e.step - 1]!;
    const req = plan.nodes.find((n) => n.node === e.node)!.steps[e.step - 1]!.request;
    const entry: RetentionStepEntry = {
      kind: 'retention.step',
      run: run.runId,
      attempt: e.attempt,
      node: e.node,
      step: e.step,
      cutoff: step.cutoff,
      types: req?.types ?? [],
      nntRollups: spansOf(req?.nntRollups, req?.types.includes('nnt') ?? false),
      histogramRollups: spansOf(req?.histogramRollups, req?.types.includes('histogram') ?? false),
      state: e.state,
      reason: e.reason,
      sentAt: e.sentAt !== undefined ? new Date(e.sentAt).toISOString() : null,
      finishedAt: new Date(e.finishedAt).toISOString(),
      seconds: e.seconds ?? null,
    };
    run.log.append(entry);
  };
}

/** The confirmation: the steps, the question on a terminal (not with --yes), then the journal's start line and the receipts' first look. */
function confirmHook(run: ApplyContext): (p: { state: RunState; send: string[]; skipped: { node: string }[] }) => Promise<boolean> {
  const { opts, ctx, plan } = run;
  return async (p) => {
    const steps = plan.steps.map((s) => {
      const reqs = plan.nodes.map((n) => n.steps[s.step - 1]!.request).filter((r) => r !== null);
      const same = reqs.every((r) => JSON.stringify(r) === JSON.stringify(reqs[0]));
      return `step ${s.step}: ${same && reqs[0] ? describeRequest(reqs[0]) : s.types.join(', ')} before ${describeTime(s.cutoff * 1000)}`;
    });
    logLag(ctx, run.lagRead, run.allowed);
    const where = `${p.send.length} node${p.send.length === 1 ? '' : 's'} (node list: ${run.nodeSource})`;
    const skippedNote = p.skipped.length ? `; ${p.skipped.length} unreachable node(s) skipped` : '';
    if (!opts.yes) {
      for (const line of steps) ctx.log.info(`  ${line}`);
      const answer = await askYesNo(ctx, `Run ${plan.steps.length} retention step(s) on ${where}${skippedNote}?`);
      if (answer === 'interrupted') throw new AbortedError('(cluster)', 'interrupted at the prompt');
      if (answer !== 'yes') return false;
    }
    if (!(await confirmShortAges(plan.policy, opts, ctx))) return false;
    // A start line before any DELETE, so a run killed midway still leaves a trace.
    const start: RetentionStartEntry = {
      kind: 'retention.start',
      run: run.runId,
      attempt: p.state.attempt,
      by: run.by,
      policySource: plan.policy.source,
      policy: policyToObject(plan.policy),
      fingerprint: runFingerprint(plan),
      now: plan.now,
      steps: plan.steps.map((s) => ({ step: s.step, cutoff: s.cutoff, types: s.types, rules: s.rules.map(formatRule) })),
      headerPrefix: plan.headerPrefix,
      nodeSource: run.nodeSource,
      nodes: plan.nodes.map((n) => n.node),
      runFile: run.runFile,
      coverage: journaledCoverage(run.report),
      profile: ctx.profile ?? null,
      resume: { command: run.catchUpBase.command, addBack: run.catchUpBase.addBack },
    };
    run.log.append(start);
    await run.receipts?.before(receiptScope(plan));
    ctx.log.info(`run ${run.runId}: ${steps.join('; ')}; on ${where}${skippedNote}; run file ${run.runFile}`);
    // Made once the run is confirmed: a live display must not draw over the prompt.
    run.held.progress ??= new RetentionProgress(ctx, run.resolved.nodes, plan.steps.length);
    return true;
  };
}

/** The receipt looks only at the lists this run's DELETEs can change. */
function receiptScope(plan: RetentionPlan): LookScope {
  return lookScopeOf(plan.nodes.flatMap((n) => n.steps.flatMap((st) => (st.request ? [st.request] : []))));
}

/** Whether nothing waits for a person between the preflight and the first DELETE: --yes, and no rule under 1h to type back (or --allow-short-age). */
function unattended(opts: RetentionApplyFlags, plan: RetentionPlan): boolean {
  return opts.yes && (opts.allowShortAge || shortRules(plan.policy).length === 0);
}

/** The library's run (runRetention) with the CLI's hooks; a refusal, a declined prompt or an interruption before anything was sent becomes its exit code or usage error. */
async function runOrRefuse(run: ApplyContext, sweepClients: readonly NodeClient[], state: RunState | undefined): Promise<RetentionRun | ExitCode> {
  const { opts, ctx, plan, runId, report } = run;
  try {
    return await runRetention(sweepClients, plan, {
      ...(state ? { state } : { runId }),
      identity: () => ({
        runId,
        by: run.by,
        nodes: run.resolved.nodes,
        nodeSource: run.nodeSource,
        profile: ctx.profile ?? null,
        policySource: plan.policy.source,
        fingerprint: runFingerprint(plan),
        catchUp: null,
      }),
      journal: run.log,
      report,
      persist: (s) => writeRunFile(run.runFile, s),
      onEvent: stepEvents(run),
      ...(run.receipts ? { onNodeEnd: (node: string) => run.receipts!.nodeEnded(node) } : {}),
      skipUnreachable: run.skipUnreachable,
      confirm: confirmHook(run),
      concurrency: opts.concurrency,
      intervalMs: opts.pollInterval,
      lostAfterMs: opts.lostAfter ?? Math.max(30_000, 3 * opts.pollInterval),
      stepTimeoutMs: opts.stepTimeout,
      signal: ctx.signal,
      replicationLag: replicationLagOption(run.allowed, (r) => (run.lagRead = r)),
    });
  } catch (err) {
    run.held.progress?.stop();
    // Kept: a refusal is one line per node and hints only this run's report knows; an interruption
    // is a warning and 130, not an error. Any other error says itself (cli/errors.ts messageOf).
    if (err instanceof SweepRefusedError) {
      logRefusal(ctx, err, (b) => `${b.node} is already sweeping ${b.running.join(',')}: a retention run never cancels a sweep`);
      const hints = [
        err.busy.length ? 'wait until the running sweeps end (tsnode status --watch), then run again' : '',
        err.unreachable.some((u) => u.error?.code === 'no_sweep_api') ? NO_SWEEP_API_HINT : '',
        silentNodesHint(err, run.resolved.nodes.length, 'to run on the others (the skipped nodes are listed in the result)'),
        report.coverage.problems.length && !report.coverage.allowed ? '--allow-partial to run on the listed nodes anyway (the missing ones keep their data)' : '',
        err.problems.some((p) => p.message.startsWith('replication is behind'))
          ? 'tsnode status --watch --until-caught-up to wait until replication catches up, or --allow-lag <duration> to apply anyway (a node data reaches after its last step ends late_data)'
          : '',
      ].filter(Boolean);
      throw new UsageError('refusing to apply the retention policy: nothing was sent', hints.length ? hints.join('; ') : undefined);
    }
    if (err instanceof AbortedError || ctx.signal.aborted) {
      ctx.log.warn('interrupted before anything was sent');
      return EXIT.interrupted;
    }
    throw err;
  }
}

/** The result, the catch-up, the journal's end line, the metrics and the last words on stderr. */
function finishRun(
  run: ApplyContext,
  result: RetentionRun,
  managedReport: VerifyReport | null,
  receipt: Awaited<ReturnType<ReceiptHook['after']>>,
  metrics: MetricsRecorder,
): ExitCode {
  const { opts, ctx, plan, runId, report } = run;
  const final = result.state;
  const code = withNodeManaged(result.exitCode, managedReport);
  const notSwept = result.notSwept;
  const { catchUpBase } = run;
  const unfinished = [...final.nodes.map((n) => n.node).filter((n) => stoppedAt(final, n) !== null), ...notSwept.map((m) => m.url)];
  // Ring nodes left out are not in the run file: a resume would not reach them, a run of the policy there does.
  // Runs as printed: unattended (--yes) when this run was, like the resume.
  const ringCatchUp = notSweptCatchUp(plan, notSwept, [...(opts.yes ? ['--yes'] : []), ...catchUpBase.reach]);
  const onlyRing = unfinished.length === notSwept.length;
  const catchUp = unfinished.length ? { nodes: unfinished, command: onlyRing && ringCatchUp ? ringCatchUp : catchUpBase.command, addBack: catchUpBase.addBack } : null;
  const extras = {
    runFile: run.runFile,
    outcome: result.outcome,
    exitCode: code,
    interrupted: result.interrupted,
    nodeSource: run.nodeSource,
    coverage: report.coverage,
    catchUp: catchUp ? { nodes: catchUp.nodes, command: catchUp.command, add_back: catchUp.addBack } : null,
    nodes: result.nodes,
  };
  if (opts.output === 'json') ctx.stdout.write(renderJson({ ...(resultJson(final, extras) as object), node_managed: nodeManagedJson(managedReport) }));
  else if (opts.output === 'csv') ctx.stdout.write(resultCsv(final, Boolean(ctx.stdout.isTTY)));
  else ctx.stdout.write(resultTable(final, ctx.colour, tableWidth(ctx)) + missingFooter(report));
  run.log.append(endEntry(run, result, code, catchUp));
  ctx.log.info(`summary: ${summaryLine(final, notSwept)}`);
  if (receipt) ctx.log.info(`${receiptLine(receipt)} (tsnode history show ${runId})`);
  metrics.outcome = result.outcome;
  metrics.add(
    ...stepFamilies('retention_apply', final),
    ...(receipt ? receiptFamilies('retention_apply', receipt) : []),
    ...(managedReport ? verifyFamilies('retention_apply', managedReport) : []),
  );
  if (result.interrupted) {
    ctx.log.warn('interrupted: no further DELETE was sent; sweeps already started keep running on their nodes');
    ctx.log.info(`to continue with the same cut-offs: run the same command again, or ${catchUpBase.command}`);
  } else if (catchUp && catchUp.nodes.length > notSwept.length) {
    ctx.log.info(`to catch up (${catchUp.nodes.length - notSwept.length} node(s) not finished): ${catchUp.command}`);
  }
  if (ringCatchUp) ctx.log.info(`to apply the policy on the ${notSwept.length} ring node(s) not swept: ${ringCatchUp}`);
  if (catchUp?.addBack.length) ctx.log.info(`  add back: ${catchUp.addBack.join('; ')}`);
  return code;
}

/** The journal's end line: every node's steps, ring nodes --allow-partial left out among them (never finished: history counts them as left). */
function endEntry(run: ApplyContext, result: RetentionRun, code: ExitCode, catchUp: RetentionEndEntry['catchUp']): RetentionEndEntry {
  const final = result.state;
  return {
    kind: 'retention.end',
    run: run.runId,
    attempt: final.attempt,
    outcome: result.outcome,
    exit: code,
    interrupted: result.interrupted,
    nodes: [
      ...summariseRun(final).nodes.map((n) => ({ node: n.node, done: n.done, steps: n.steps, stoppedAt: stoppedAt(final, n.node) })),
      ...result.notSwept.map((m) => ({
        node: m.url,
        done: 0,
        steps: run.plan.steps.length,
        stoppedAt: { step: 1, state: 'not_swept', reason: `ring node ${m.id} not in the node list (--allow-partial)` },
      })),
    ],
    catchUp,
  };
}

/** Refuses (exit 2, nothing sent) when this host's clock and a node's differ by more than --max-clock-skew. */
async function refuseSkewedClock(clients: readonly NodeClient[], opts: RetentionApplyFlags, ctx: CliContext): Promise<void> {
  const samples = await sampleClocks(clients, { concurrency: opts.concurrency, call: { signal: ctx.signal }, now: ctx.now });
  const report = judgeClockSkew(samples, opts.maxClockSkew);
  if (report.verdict === 'unknown') ctx.log.warn("no node's clock could be read (no Date header): the cut-offs come from this host's clock unchecked");
  if (report.verdict !== 'skewed') return;
  for (const s of report.skewed) ctx.log.error(describeSkew(s, opts.maxClockSkew, '--max-clock-skew'));
  throw new UsageError(
    `refusing to apply: this host's clock and ${report.skewed.length} node(s)' differ by more than --max-clock-skew ${describeGap(opts.maxClockSkew)}: nothing was sent`,
    "set this host's clock right (NTP), or the nodes'; --max-clock-skew raises the limit when the difference is known and harmless",
  );
}

/** `--resume <run>` or `--resume` (the latest unfinished run). */
function findRun(dir: string, which: string | true, ctx: CliContext): RunState {
  if (which !== true) {
    if (!/^r-[A-Za-z0-9._-]{1,100}$/.test(which))
      throw new UsageError(`--resume: ${JSON.stringify(which)} is not a run id`, 'run ids look like r-20261122T043258Z-3f2a (tsnode history lists them)');
    return readRunFile(runFilePath(dir, which));
  }
  const open = findSavedRun(dir, (r) => r.outcome !== 'complete', { cheap: rawHasWorkLeft, skip: (p, why) => ctx.log.warn(`${p}: skipped (${why})`) });
  if (!open) throw new UsageError(`--resume: no unfinished run in ${dir}`, 'tsnode history lists the runs; start a new one with a policy');
  return open.state;
}

/** Per node and step, the state it ended in (value 1; the state is a label), for --metrics-file. */
function stepFamilies(command: string, state: RunState): MetricFamily[] {
  return [
    {
      name: 'tsnode_step_state',
      help: 'The state each step of each node ended in, as a label (done, failed, not_needed, ...); value always 1.',
      type: 'gauge',
      samples: state.nodes.flatMap((n) => n.steps.map((st) => ({ labels: { command, node: n.node, step: st.step, state: st.state }, value: 1 }))),
    },
  ];
}

function summaryLine(state: RetentionRun['state'], notSwept: RetentionRun['notSwept']): string {
  const finished = state.nodes.filter((n) => stoppedAt(state, n.node) === null).length;
  // A ring node --allow-partial left out counts among the ring's nodes, never among the finished.
  const of = notSwept.length ? `${state.nodes.length + notSwept.length} ring nodes` : `${state.nodes.length} node(s)`;
  const left = notSwept.length ? `; not swept (not in the node list): ${notSwept.map((m) => `${m.id} (${m.url})`).join(', ')}` : '';
  const stopped = state.nodes
    .map((n) => ({ node: n.node, at: stoppedAt(state, n.node) }))
    .filter((x) => x.at !== null)
    .map((x) => `${x.node} at step ${x.at!.step} (${x.at!.state.replace(/_/g, ' ')})`);
  return `${finished} of ${of} finished every step${stopped.length ? `; stopped: ${stopped.join(', ')}` : ''}${left} (cut-offs pinned at ${isoSeconds(state.plan.now)})`;
}
