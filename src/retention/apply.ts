/**
 * Running a retention plan on its nodes: per node the steps strictly one after another, each one
 * evidence-checked sweep (client/sweep.ts sweepOneNode: one DELETE, never retried, then polls
 * until that node is idle, classified with the rules of issue 12); nodes independent of each
 * other, so a slow node never holds the others back. UI-free: progress goes out as events, the
 * run state goes to `persist` (the caller writes the run file; awaited before every DELETE), and
 * nothing here prints, prompts or exits.
 *
 * Safety rules this module owns:
 * - a node already sweeping anything is refused at preflight, and a step is sent only after a
 *   fresh GET shows the node idle: a policy never cancels anybody's sweep (there is no force);
 * - never two DELETEs in flight on one node: a node's next step starts only when its previous
 *   step's sweep has ended, seen by polling;
 * - a node whose step ends in anything but `done` runs no further steps in this attempt;
 * - a step that may have reached the node in an earlier attempt is re-checked by polling before
 *   anything is sent again (run-state.ts nextAction decides which).
 */
import { randomBytes } from 'node:crypto';
import type { NodeClient } from '../client/node-client.js';
import { systemClock, type Clock } from '../client/clock.js';
import { limiter } from '../client/concurrency.js';
import { SweepNotConfirmedError } from '../client/sweep.js';
import { sweepOneNode } from '../client/sweep-node.js';
import { LAG_NOT_CHECKED, lagCheck, lookForLateData, type ReplicationLagOption } from '../client/sweep-lag.js';
import type { LagReport, NodeLag } from '../client/replication-lag.js';
import { recheckNode, pollUntilIdle } from '../client/sweep-poll.js';
import {
  preflightProblem,
  preflightSweep,
  runPreflightChecks,
  runningTypes,
  SweepRefusedError,
  type Preflight,
  type PreflightCheck,
  type PreflightNode,
} from '../client/sweep-preflight.js';
import type { NodeSweepState, SweepEvent } from '../client/sweep-states.js';
import { describeRunning, runningIsOurs } from '../client/sweep-evidence.js';
import { AbortedError, NodeRequestError } from '../client/errors.js';
import type { DataType, SweepStatus } from '../protocol/index.js';
import { isoSeconds } from './plan-json.js';
import type { RetentionPlan } from './plan.js';
import {
  markOutcome,
  markSending,
  markStarted,
  markWatching,
  newRun,
  lateSteps,
  reviseLastStep,
  nextAction,
  summariseRun,
  type FinalStepState,
  type NextAction,
  type NodeRunSummary,
  type RunOutcome,
  type RunState,
} from './run-state.js';

export type RetentionEvent =
  /** A node moved to another state; `step` is null at preflight. */
  | { kind: 'state'; node: string; step: number | null; state: NodeSweepState; at: number; error?: string; status?: SweepStatus }
  /** A poll answered (every poll): for live progress. */
  | { kind: 'status'; node: string; step: number; at: number; status: SweepStatus }
  /** A step ended on a node: the state, the one-line reason and its times (epoch ms). */
  | {
      kind: 'step_end';
      node: string;
      step: number;
      attempt: number;
      state: Exclude<FinalStepState, 'started'>;
      reason: string;
      sentAt?: number;
      finishedAt: number;
      seconds?: number;
    }
  /** The run state could not be persisted (the run goes on; a resume may repeat steps). */
  | { kind: 'persist_failed'; error: string };

export interface ApplyRetentionOptions {
  /** A saved run of this very plan to continue (run-state.ts resumeRun); default: a new run. */
  state?: RunState;
  /** The id of a new run (default: newRetentionRunId). */
  runId?: string;
  /** Makes the run state durable (the run file). Awaited before every DELETE; a failure there sends nothing. */
  persist?: (state: RunState) => Promise<void>;
  onEvent?: (e: RetentionEvent) => void;
  /** A node sent to in this attempt has ended its steps (nothing more is sent to it); other nodes may still run. */
  onNodeEnd?: (node: string) => void;
  /** Extra preflight rules (ring coverage, node identity): any problem refuses the run, nothing sent. */
  checks?: readonly PreflightCheck[];
  /** Leave out nodes that do not answer the preflight (their step is `skipped`). */
  skipUnreachable?: boolean;
  /** Called after a clean preflight; return false to stop (nothing is sent). */
  confirm?: (p: { preflight: Preflight; state: RunState; send: string[]; skipped: PreflightNode[] }) => boolean | Promise<boolean>;
  /** Requests in flight at once across the cluster, DELETEs and polls (default 32). */
  concurrency?: number;
  intervalMs?: number;
  lostAfterMs?: number;
  pollTimeoutMs?: number;
  /** Longest wait for one step's sweep on one node, from its DELETE (default: none). */
  stepTimeoutMs?: number;
  signal?: AbortSignal;
  clock?: Clock;
  /**
   * A replicating ring (client/sweep-lag.ts), as for a sweep: the preflight refuses while data is
   * in flight towards a node with work left (unless `allowLagSeconds` accepts that much); after the
   * steps, a node whose last step finished while data was still on its way, or whose status counts
   * late records, ends `late_data`. False: lag is not read.
   */
  replicationLag?: ReplicationLagOption;
}

/** A node's summary, with the lag read after its steps (absent when it was not read). */
export type RetentionNodeResult = NodeRunSummary & { lag?: NodeLag; lateRecords?: number };

export interface RetentionResult {
  state: RunState;
  outcome: RunOutcome;
  nodes: RetentionNodeResult[];
  /** The replication lag read after the steps (absent: not read, or the run was interrupted). */
  lag?: LagReport;
  /** The run's signal aborted: sweeps already started keep running on their nodes. */
  interrupted: boolean;
  preflight: Preflight;
}

/** `r-20261122T043258Z-3f2a`: sortable by time, unique enough for one operator's state dir. */
export function newRetentionRunId(atMs: number): string {
  const stamp = new Date(atMs)
    .toISOString()
    .replace(/\.\d{3}Z$/, 'Z')
    .replace(/[-:]/g, '');
  return `r-${stamp}-${randomBytes(2).toString('hex')}`;
}

/**
 * Applies `plan` on `clients` (one per plan node, matched by URL): preflight, refuse or go on,
 * confirm, then every node's steps. Throws SweepRefusedError / SweepNotConfirmedError before
 * anything is sent; otherwise returns the run state with every node's steps.
 */
export async function applyRetention(clients: readonly NodeClient[], plan: RetentionPlan, opts: ApplyRetentionOptions = {}): Promise<RetentionResult> {
  const run = new ApplyRun(clients, plan, opts);
  // 1. Preflight: only nodes with something left to do are asked.
  const { pre, send } = await run.preflight();
  // 2. Nodes left out at preflight stop at the step they are at.
  await run.leaveOut(pre.unreachable);
  // 3. Every node's steps, nodes side by side sharing one request limiter.
  await Promise.all(send.map((node) => run.guarded(node).then(() => opts.onNodeEnd?.(node))));
  return run.finish(pre);
}

type Ended = Exclude<FinalStepState, 'started'>;
type StepAction = Extract<NextAction, { kind: 'send' | 'recheck' }>;

/** One application of a plan: the run state as it moves, and the steps that move it. */
class ApplyRun {
  state: RunState;
  private readonly clock: Clock;
  private readonly byUrl: Map<string, NodeClient>;
  private readonly persist: ReturnType<typeof serialPersist>;
  private readonly call: { signal?: AbortSignal };
  private readonly gate: ReturnType<typeof limiter>;
  private readonly timing: { intervalMs?: number; lostAfterMs?: number; pollTimeoutMs?: number; signal?: AbortSignal };

  constructor(
    private readonly clients: readonly NodeClient[],
    plan: RetentionPlan,
    private readonly opts: ApplyRetentionOptions,
  ) {
    const clock = (this.clock = opts.clock ?? systemClock);
    if (opts.state && opts.state.plan !== plan) throw new TypeError('applyRetention: the state given is of another plan (pass state.plan as the plan)');
    this.state = opts.state ?? newRun(plan, { runId: opts.runId ?? newRetentionRunId(clock.now()), at: clock.now() });
    this.byUrl = new Map(clients.map((c) => [c.url, c]));
    for (const n of plan.nodes) if (!this.byUrl.has(n.node)) throw new TypeError(`applyRetention: no client for plan node ${n.node}`);
    this.persist = serialPersist(
      () => this.state,
      opts.persist,
      (error) => this.emit({ kind: 'persist_failed', error }),
    );
    this.call = opts.signal ? { signal: opts.signal } : {};
    this.gate = limiter(opts.concurrency ?? 32);
    this.timing = {
      ...(opts.intervalMs !== undefined ? { intervalMs: opts.intervalMs } : {}),
      ...(opts.lostAfterMs !== undefined ? { lostAfterMs: opts.lostAfterMs } : {}),
      ...(opts.pollTimeoutMs !== undefined ? { pollTimeoutMs: opts.pollTimeoutMs } : {}),
      ...(opts.signal ? { signal: opts.signal } : {}),
    };
  }

  emit(e: RetentionEvent): void {
    this.opts.onEvent?.(e);
  }

  /** A sweep's events as the run's: `step` null at preflight (where polls are not reported). */
  sweepEvents(step: number | null): (e: SweepEvent) => void {
    return (e) => {
      if (e.kind === 'status') {
        if (step !== null) this.emit({ kind: 'status', node: e.node, step, at: e.at, status: e.status });
      } else this.emit({ ...e, step });
    };
  }

  /** The preflight of the nodes with work left, its checks and the confirmation; throws to refuse. */
  async preflight(): Promise<{ pre: Preflight; send: string[] }> {
    const { opts, clock } = this;
    const work = this.state.plan.nodes.map((n) => n.node).filter((node) => nextAction(this.state, node).kind !== 'finished');
    const pre = await preflightSweep(
      work.map((u) => this.byUrl.get(u)!),
      { concurrency: opts.concurrency ?? 32, ...(opts.signal ? { signal: opts.signal } : {}), onEvent: this.sweepEvents(null), clock },
    );
    // A node is busy unless what it runs is the very step a re-check is about to look at.
    const busy = pre.busy.filter((b) => {
      const a = nextAction(this.state, b.node);
      return !(a.kind === 'recheck' && b.status && b.running.every((t) => runningIsOurs(a.request, t, b.status![t])));
    });
    const unreachable = opts.skipUnreachable ? [] : pre.unreachable;
    if (busy.length || unreachable.length) throw new SweepRefusedError(busy, unreachable);
    const lagRule =
      opts.replicationLag === false
        ? []
        : [
            lagCheck(this.clients, work, {
              ...(opts.replicationLag?.allowLagSeconds !== undefined ? { allowLagSeconds: opts.replicationLag.allowLagSeconds } : {}),
              ...(opts.replicationLag?.onReport ? { onReport: opts.replicationLag.onReport } : {}),
              concurrency: opts.concurrency ?? 32,
              call: this.call,
            }),
          ];
    await runPreflightChecks(pre, [...(opts.checks ?? []), ...lagRule]);
    const send = pre.nodes.filter((n) => !n.error).map((n) => n.node);
    if (opts.confirm && !(await opts.confirm({ preflight: pre, state: this.state, send, skipped: pre.unreachable }))) throw new SweepNotConfirmedError('retention run');
    return { pre, send };
  }

  /** Nodes left out at preflight: the step each is at ends skipped (or unconfirmed, when a DELETE may have run). */
  async leaveOut(unreachable: readonly PreflightNode[]): Promise<void> {
    const { clock } = this;
    for (const u of unreachable) {
      const a = nextAction(this.state, u.node);
      const why = `${preflightProblem(u.error)} (at preflight)`;
      if (a.kind === 'send') this.state = markOutcome(this.state, u.node, a.step, 'skipped', `not sent: ${why}`, clock.now());
      else if (a.kind === 'recheck') {
        this.state = markOutcome(this.state, u.node, a.step, 'unconfirmed', `not re-checked: ${why}; the DELETE sent at ${isoSeconds(a.sentAt / 1000)} may have run`, clock.now());
      } else continue;
      this.endEvent(u.node, a.step);
    }
    await this.persist.now();
  }

  endEvent(node: string, step: number): void {
    const { clock } = this;
    const rec = this.state.nodes.find((n) => n.node === node)!.steps[step - 1]!;
    const ended = rec.state as Ended;
    this.emit({
      kind: 'step_end',
      node,
      step,
      attempt: this.state.attempt,
      state: ended,
      reason: rec.reason ?? '',
      ...(rec.sentAt !== undefined ? { sentAt: rec.sentAt, seconds: Math.round((rec.finishedAt ?? clock.now()) - rec.sentAt) / 1000 } : {}),
      finishedAt: rec.finishedAt ?? clock.now(),
    });
  }

  async end(node: string, step: number, outcome: Ended, reason: string): Promise<void> {
    const { clock } = this;
    this.state = markOutcome(this.state, node, step, outcome, reason, clock.now());
    if (outcome !== 'done') this.emit({ kind: 'state', node, step, state: outcome, at: clock.now(), error: reason });
    this.endEvent(node, step);
    // Not awaited: only the write before a DELETE must be on disk before going on (that one is
    // strict); the others follow within a moment, and the last one is awaited at the end.
    this.persist.later();
  }

  /** A node's loop that throws (a bug, not a node's answer) ends that node's step, never the others'. */
  async guarded(node: string): Promise<void> {
    try {
      await this.runNode(node);
    } catch (err) {
      const a = nextAction(this.state, node);
      const why = `internal error: ${err instanceof Error ? err.message : String(err)}`;
      if (a.kind === 'wait') await this.end(node, a.step, 'unconfirmed', `${why}; the DELETE may have been sent`);
      else if (a.kind === 'send' || a.kind === 'recheck') await this.end(node, a.step, 'skipped', `not sent: ${why}`);
    }
  }

  /** One node's steps, one after another, until one ends in anything but done. */
  async runNode(node: string): Promise<void> {
    const { clock } = this;
    // The poll that ended the previous step, when it showed every type idle: a look at the node
    // made a moment ago, as good as another GET before the next DELETE (and one request less).
    let freshIdle: { status: SweepStatus; at: number } | undefined;
    for (;;) {
      const a = nextAction(this.state, node);
      if (a.kind === 'finished' || a.kind === 'stop') return;
      if (a.kind === 'wait') throw new Error(`applyRetention: ${node} step ${a.step} is ${a.state} in this attempt, yet nobody watches it`);
      if (this.opts.signal?.aborted) {
        await this.end(
          node,
          a.step,
          'interrupted',
          a.kind === 'recheck' ? `not re-checked: interrupted; the DELETE sent at ${isoSeconds(a.sentAt / 1000)} may have run` : 'not sent: interrupted before this step',
        );
        return;
      }
      let idle: SweepStatus | undefined = freshIdle && clock.now() - freshIdle.at <= FRESH_MS ? freshIdle.status : undefined;
      freshIdle = undefined;
      let resend: string | undefined;
      if (a.kind === 'recheck') {
        const r = await this.recheckStep(node, a);
        if (r === 'stop') return;
        if (r === 'next') continue;
        idle = r.idle;
        resend = r.resend;
      }
      const sent = await this.sendStep(node, a, idle, resend);
      if (sent === 'stop') return;
      freshIdle = sent.freshIdle;
    }
  }

  /**
   * A step whose DELETE may have reached the node in an earlier attempt: looked at before anything
   * is sent again. 'stop' the node's steps end here, 'next' the step is done, else the node is idle
   * with no evidence of the step and it is sent again.
   */
  private async recheckStep(node: string, a: Extract<StepAction, { kind: 'recheck' }>): Promise<'stop' | 'next' | { idle: SweepStatus; resend: string }> {
    const { clock, opts } = this;
    const client = this.byUrl.get(node)!;
    this.emit({ kind: 'state', node, step: a.step, state: 'checking', at: clock.now() });
    let r;
    try {
      r = await recheckNode(client, a.request, a.sentAt, { gate: this.gate, ...this.timing });
    } catch (err) {
      if (!(err instanceof AbortedError)) throw err;
      await this.end(node, a.step, 'interrupted', `not re-checked: interrupted; the DELETE sent at ${isoSeconds(a.sentAt / 1000)} may have run`);
      return 'stop';
    }
    const sent = `sent at ${isoSeconds(a.sentAt / 1000)}, ${a.previous.replace('_', ' ')} then`;
    if (r.kind === 'no_status') {
      await this.end(node, a.step, r.failure === 'no_answer' ? 'lost' : 'unconfirmed', `re-check got no status (${r.error}); the DELETE ${sent} may have run`);
      return 'stop';
    }
    if (r.kind === 'other_sweep') {
      await this.end(node, a.step, 'skipped', `not sent again: the node runs another sweep (${r.other}); a policy never cancels one`);
      return 'stop';
    }
    if (r.kind === 'completed') {
      await this.end(node, a.step, 'done', `${r.reason} (${sent})`);
      return 'next';
    }
    if (r.kind === 'ours_running') {
      this.state = markWatching(this.state, node, a.step, clock.now());
      this.persist.later();
      this.emit({ kind: 'state', node, step: a.step, state: 'running', at: clock.now(), status: r.status });
      const w = await pollUntilIdle(client, {
        gate: this.gate,
        request: a.request,
        baseline: r.status,
        clock,
        onEvent: this.sweepEvents(a.step),
        ...this.timing,
        ...(opts.stepTimeoutMs !== undefined ? { deadline: clock.now() + opts.stepTimeoutMs } : {}),
      });
      const outcome = w.state === 'idle' ? 'unconfirmed' : w.state;
      await this.end(node, a.step, outcome, `${w.reason} (the DELETE was ${sent}; found still running on resume)`);
      return outcome === 'done' ? 'next' : 'stop';
    }
    return { idle: r.status, resend: `sent again: ${r.reason}` };
  }

  /**
   * Sends one step when the node is idle (a fresh look first, unless `idle` is one: a DELETE would
   * cancel whatever the node runs now), the run file written before, and waits for its evidence.
   */
  private async sendStep(
    node: string,
    a: StepAction,
    idle: SweepStatus | undefined,
    resend: string | undefined,
  ): Promise<'stop' | { freshIdle?: { status: SweepStatus; at: number } }> {
    const { clock, opts } = this;
    const client = this.byUrl.get(node)!;
    if (!idle) {
      this.emit({ kind: 'state', node, step: a.step, state: 'checking', at: clock.now() });
      try {
        idle = await this.gate(() => client.sweepStatus({ probe: true, ...(opts.signal ? { signal: opts.signal } : {}) }));
      } catch (err) {
        if (opts.signal?.aborted) {
          await this.end(node, a.step, 'interrupted', 'not sent: interrupted before this step');
          return 'stop';
        }
        const e = err instanceof NodeRequestError ? err : undefined;
        await this.end(node, a.step, 'skipped', `not sent: no status before the DELETE (${preflightProblem(e)})`);
        return 'stop';
      }
    }
    if (runningTypes(idle).length) {
      await this.end(node, a.step, 'skipped', `not sent: the node runs another sweep (${describeRunning(idle)}); a policy never cancels one`);
      return 'stop';
    }
    let sendFailed: string | undefined;
    const r = await sweepOneNode(client, a.request, {
      gate: this.gate,
      baseline: idle,
      clock,
      onEvent: this.sweepEvents(a.step),
      ...this.timing,
      ...(opts.stepTimeoutMs !== undefined ? { deadline: clock.now() + opts.stepTimeoutMs } : {}),
      beforeSend: async (at) => {
        this.state = markSending(this.state, node, a.step, at);
        try {
          await this.persist.now({ strict: true });
        } catch (err) {
          sendFailed = err instanceof Error ? err.message : String(err);
          throw err;
        }
      },
      onStarted: (at) => {
        this.state = markStarted(this.state, node, a.step, at);
        this.persist.later();
      },
    }).catch((err: unknown) => {
      if (sendFailed === undefined) throw err;
      return undefined;
    });
    if (!r) {
      await this.end(node, a.step, 'skipped', `not sent: the run state could not be saved before the DELETE (${sendFailed})`);
      return 'stop';
    }
    const state_ = r.state as Ended;
    await this.end(node, a.step, state_, resend && state_ === 'done' ? `${r.reason} (${resend})` : r.reason);
    if (state_ !== 'done') return 'stop';
    return r.status && runningTypes(r.status).length === 0 ? { freshIdle: { status: r.status, at: clock.now() } } : {};
  }

  /** After the steps: the lag look (late_data), the last write, the result. */
  async finish(pre: Preflight): Promise<RetentionResult> {
    const { clock, opts } = this;
    let lag: Awaited<ReturnType<typeof lookAfterSteps>> | undefined;
    if (opts.replicationLag !== false && !opts.signal?.aborted) {
      lag = await lookAfterSteps(this.state, this.clients, { concurrency: opts.concurrency ?? 32, call: this.call }, clock);
      this.state = lag.state;
      this.persist.later();
      for (const node of lag.late) {
        for (const step of lateSteps(this.state, node)) {
          this.emit({ kind: 'state', node, step, state: 'late_data', at: clock.now(), error: this.state.nodes.find((n) => n.node === node)!.steps[step - 1]!.reason ?? '' });
          this.endEvent(node, step);
        }
      }
    }
    await this.persist.flush();
    const summary = summariseRun(this.state);
    const nodes = summary.nodes.map((n): RetentionNodeResult => {
      const l = lag?.report.nodes.find((x) => x.node === n.node);
      const late = lag?.lateRecords.get(n.node);
      return { ...n, ...(l ? { lag: l } : {}), ...(late !== undefined ? { lateRecords: late } : {}) };
    });
    return { state: this.state, outcome: summary.outcome, nodes, ...(lag ? { lag: lag.report } : {}), interrupted: Boolean(opts.signal?.aborted), preflight: pre };
  }
}

/**
 * After the steps: the nodes whose last step finished in this attempt are looked at again
 * (client/sweep-lag.ts lookForLateData, the sweep's look): data still on its way, or late records,
 * turn that step into `late_data`; a store reporting no lag keeps `done`, the reason saying so.
 */
async function lookAfterSteps(state: RunState, ring: readonly NodeClient[], opts: { concurrency: number; call: { signal?: AbortSignal } }, clock: Clock) {
  const finished = new Map<string, SweepStatus | undefined>();
  for (const n of state.nodes) {
    const last = [...n.steps].reverse().find((s) => s.state !== 'not_needed');
    if (last?.state === 'done' && last.attempt === state.attempt && nextAction(state, n.node).kind === 'finished') finished.set(n.node, undefined);
  }
  const types = [...new Set(state.plan.nodes.flatMap((n) => n.steps.flatMap((s) => s.request?.types ?? [])))] as DataType[];
  const { looks, report } = await lookForLateData(finished, ring, types, opts);
  const lateRecords = new Map<string, number>();
  /** The nodes whose steps became late_data. */
  const late = new Set<string>();
  for (const [node, look] of looks) {
    lateRecords.set(node, look.lateRecords);
    const last = [...state.nodes.find((n) => n.node === node)!.steps].reverse().find((s) => s.state !== 'not_needed')!;
    if (look.late) {
      state = reviseLastStep(state, node, 'late_data', look.late, clock.now());
      late.add(node);
    } else if (!report.checked) state = reviseLastStep(state, node, 'done', `${last.reason ?? 'done'}; ${LAG_NOT_CHECKED}`, clock.now());
  }
  return { state, report, lateRecords, late };
}

/**
 * Persists the latest state, one write at a time. `now` resolves once a write that includes every
 * transition made before the call has finished (several callers share one write); with `strict`
 * (before a DELETE: not written, not sent) a failure throws, otherwise it is reported once and
 * swallowed. A write starts GATHER_MS after it is asked for, so transitions of other nodes made
 * meanwhile go into the same write. `later` only marks the state dirty and writes it within LATER_MS (the transitions after
 * a DELETE are evidence worth keeping, not a precondition: on a hundred nodes, writing each one at
 * once would rewrite the run file hundreds of times a second); `flush` writes what is pending.
 */
const LATER_MS = 250;
/** A write waits this long for more transitions to include (on a hundred nodes, a write per node would be a hundred). */
const GATHER_MS = 10;
/** How old the poll that ended a step may be to stand for the idle check before the next DELETE. */
const FRESH_MS = 1_000;

function serialPersist(current: () => RunState, write: ((s: RunState) => Promise<void>) | undefined, onFailure: (error: string) => void) {
  let version = 0;
  let written = 0;
  let running: Promise<void> | null = null;
  let warned = false;
  let timer: ReturnType<typeof setTimeout> | undefined;
  const cycle = async (): Promise<void> => {
    try {
      // Let the other nodes reaching a step at about the same moment join this write.
      await new Promise((resolve) => setTimeout(resolve, GATHER_MS));
      const v = version;
      await write!(current());
      written = Math.max(written, v);
    } finally {
      running = null;
    }
  };
  const now = async (o: { strict?: boolean } = {}): Promise<void> => {
    if (!write) return;
    const target = ++version;
    try {
      while (written < target) {
        if (running) {
          await running.catch(() => undefined);
          continue;
        }
        running = cycle();
        await running;
      }
    } catch (err) {
      const message = err instanceof Error ? err.message : String(err);
      if (o.strict) throw err;
      if (!warned) onFailure(message);
      warned = true;
    }
  };
  return {
    now,
    later(): void {
      if (!write) return;
      version++;
      timer ??= setTimeout(() => {
        timer = undefined;
        void now();
      }, LATER_MS);
    },
    async flush(): Promise<void> {
      if (timer) clearTimeout(timer);
      timer = undefined;
      if (written < version || running) await now();
    },
  };
}
