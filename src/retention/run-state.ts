/**
 * The state of one `retention apply` run, as data: the plan (pinned cut-offs, exact requests)
 * and, per node and step, where it stands. Pure: transitions return a new state and
 * (de)serialisation works on strings; writing the file (atomically, before every DELETE) is the
 * caller's job.
 *
 * The rules a run follows, all decided by `nextAction`:
 * - per node the steps run strictly in order; a node whose step ends in anything but `done`
 *   runs no further steps in this attempt (the other nodes carry on);
 * - a resume (`resumeRun`, a new attempt) skips steps already `done`, and retries every other
 *   step from the one the node stopped at: a step that may have reached the node (in flight,
 *   started, unconfirmed, lost, timed out, interrupted after sending) is re-checked by polling
 *   before anything is sent again, and sent again once the node is idle; repeating a sweep is
 *   harmless, skipping one is not.
 */
import { createHash } from 'node:crypto';
import { z } from 'zod';
import { formatIssues, type SweepRequest } from '../protocol/index.js';
import { RetentionError } from './errors.js';
import { isoSeconds, planFromJson, planToJson, type PlanJson } from './plan-json.js';
import type { RetentionPlan } from './plan.js';

/**
 * The final states of a sweep on one node (issue 12's vocabulary), as a step can end. `late_data`:
 * the node's last step finished, but on a replicating ring data older than the cut-off may have
 * reached it since (a resume sends that step again).
 */
export const FINAL_STEP_STATES = ['done', 'late_data', 'replaced', 'cancelled', 'failed', 'unconfirmed', 'lost', 'skipped', 'timed_out', 'interrupted', 'started'] as const;
export type FinalStepState = (typeof FINAL_STEP_STATES)[number];
/**
 * `pending`: not tried in any attempt yet. `in_flight`: written just before the DELETE goes out,
 * so a crash leaves the evidence that it may have been sent. `not_needed`: the plan has nothing
 * to send this node at this step. `started`: the DELETE was acknowledged, the end not yet seen.
 */
export type StepState = 'pending' | 'in_flight' | 'not_needed' | FinalStepState;
export const STEP_STATES: readonly StepState[] = ['pending', 'in_flight', 'not_needed', ...FINAL_STEP_STATES];

/** States after which the DELETE may have reached the node and its sweep may even have finished. */
const MAY_HAVE_REACHED: ReadonlySet<StepState> = new Set<StepState>(['in_flight', 'started', 'unconfirmed', 'lost', 'timed_out', 'interrupted']);

export interface StepRecord {
  step: number;
  state: StepState;
  /** One line: why the step is in this state (the node's error, the evidence, ...). */
  reason?: string;
  /** The attempt that set the state (0: untouched since the run began). */
  attempt: number;
  /** Epoch ms when the DELETE was (about to be) sent, in the latest attempt that sent one. */
  sentAt?: number;
  /** Epoch ms when the step reached its state. */
  finishedAt?: number;
}

export interface NodeRun {
  node: string;
  steps: StepRecord[];
}

/**
 * How the run reached its nodes, so its catch-up (and a resume) can do so again: the profile and
 * the node-source flags (`--cacert`, `--redact`, ...; never header values), and what must be given
 * back by hand (`--header`: counted, not shown). Absent in a run file written before version 2.
 */
export interface RunOrigin {
  profile: string | null;
  /** The flags after `--resume <run>` in the catch-up, `--profile` among them. */
  flags: string[];
  addBack: string[];
}

/** The run file version this tsnode writes; it reads this one and every earlier one. */
export const RUN_FILE_VERSION = 2;

export interface RunState {
  version: 1 | 2;
  runId: string;
  /** Epoch ms. */
  createdAt: number;
  /** 1 for the first run; every resume adds one. */
  attempt: number;
  plan: RetentionPlan;
  nodes: NodeRun[];
  origin?: RunOrigin;
}

/** What a run id may be: it names a file in the run directory, so no separators, no leading dot. */
export const RUN_ID = /^[A-Za-z0-9][A-Za-z0-9._-]{0,99}$/;

/** A fresh run of `plan`: every step pending, or not_needed where the node has nothing to send. */
export function newRun(plan: RetentionPlan, opts: { runId: string; at: number; origin?: RunOrigin }): RunState {
  if (!RUN_ID.test(opts.runId)) throw new TypeError(`newRun: run id ${JSON.stringify(opts.runId)} must be 1-100 of A-Z a-z 0-9 . _ - (starting with a letter or digit)`);
  return {
    version: RUN_FILE_VERSION,
    runId: opts.runId,
    createdAt: opts.at,
    attempt: 1,
    plan,
    ...(opts.origin ? { origin: opts.origin } : {}),
    nodes: plan.nodes.map((n) => ({
      node: n.node,
      steps: n.steps.map((s) => ({ step: s.step, state: s.request ? 'pending' : 'not_needed', attempt: 0 })),
    })),
  };
}

/** Starts another attempt of a run (`--resume`, catch-up): same plan, same cut-offs. */
export function resumeRun(state: RunState): RunState {
  return { ...state, attempt: state.attempt + 1 };
}

/**
 * Identifies "the same policy on the same nodes": the rules (not their file positions or
 * spelling of the source), the node set in any order and the header prefix. A re-run of
 * `apply` finds an interrupted run to continue by it; the clock is deliberately not part of it.
 */
export function runFingerprint(plan: RetentionPlan): string {
  const rules = plan.policy.rules.map((r) => [r.type, r.span, r.ageSeconds]);
  const nodes = plan.nodes.map((n) => n.node).sort();
  return createHash('sha256')
    .update(JSON.stringify({ rules, nodes, prefix: plan.headerPrefix }))
    .digest('hex')
    .slice(0, 16);
}

// ---------------------------------------------------------------- what to do next

export type NextAction =
  /**
   * Send the step's DELETE. First confirm with a fresh GET that the node runs no sweep of any
   * type (a DELETE would cancel it): if it does, record `skipped` and send nothing.
   */
  | { kind: 'send'; node: string; step: number; request: SweepRequest; retry: boolean }
  /**
   * The step may have reached the node before: poll first. Our own sweep still running: watch it
   * to its end and take that outcome. The node's record of its last sweep matching this request,
   * completed after `sentAt`: `done` without sending. Idle without such evidence: send again
   * (as `send`). Another sweep running: record `skipped`, send nothing.
   */
  | { kind: 'recheck'; node: string; step: number; request: SweepRequest; previous: StepState; sentAt: number }
  /** The step is in flight in this attempt: whoever sent it is watching it. */
  | { kind: 'wait'; node: string; step: number; state: 'in_flight' | 'started' }
  /** The node stopped at this step in this attempt; it runs no further steps until a resume. */
  | { kind: 'stop'; node: string; step: number; state: Exclude<FinalStepState, 'done' | 'started'>; reason?: string }
  /** Every step is done (or had nothing to send). */
  | { kind: 'finished'; node: string };

/** What the run should do next on `node`. Pure: the state alone decides. */
export function nextAction(state: RunState, node: string): NextAction {
  const { run, plan } = nodeOf(state, node);
  for (const rec of run.steps) {
    if (rec.state === 'done' || rec.state === 'not_needed') continue;
    const request = plan.steps[rec.step - 1]!.request!;
    const thisAttempt = rec.attempt === state.attempt;
    if (rec.state === 'pending') return { kind: 'send', node, step: rec.step, request, retry: false };
    if (rec.state === 'in_flight' || rec.state === 'started') {
      if (thisAttempt) return { kind: 'wait', node, step: rec.step, state: rec.state };
      return { kind: 'recheck', node, step: rec.step, request, previous: rec.state, sentAt: rec.sentAt ?? state.createdAt };
    }
    if (thisAttempt) return { kind: 'stop', node, step: rec.step, state: rec.state, ...(rec.reason !== undefined ? { reason: rec.reason } : {}) };
    if (MAY_HAVE_REACHED.has(rec.state) && rec.sentAt !== undefined) {
      return { kind: 'recheck', node, step: rec.step, request, previous: rec.state, sentAt: rec.sentAt };
    }
    return { kind: 'send', node, step: rec.step, request, retry: true };
  }
  return { kind: 'finished', node };
}

// ---------------------------------------------------------------- transitions

/** Records that the step's DELETE is about to go out. Persist this before sending. */
export function markSending(state: RunState, node: string, step: number, at: number): RunState {
  return update(state, node, step, 'markSending', (rec) => {
    const action = nextAction(state, node);
    if ((action.kind !== 'send' && action.kind !== 'recheck') || action.step !== step) {
      throw new Error(`markSending: ${node} step ${step} is not due (next: ${describeAction(action)})`);
    }
    return { step: rec.step, state: 'in_flight', attempt: state.attempt, sentAt: at };
  });
}

/** Records that the node acknowledged the DELETE (`[]`): its sweep started. */
export function markStarted(state: RunState, node: string, step: number, at: number): RunState {
  return update(state, node, step, 'markStarted', (rec) => {
    if (rec.state !== 'in_flight' || rec.attempt !== state.attempt) throw new Error(`markStarted: ${node} step ${step} is ${rec.state}, not in flight`);
    return { ...rec, state: 'started', finishedAt: at };
  });
}

/**
 * Records that a re-check found the step's sweep, sent in an earlier attempt, still running on the
 * node: this attempt watches it to its end (nothing is sent; `sentAt` stays the earlier one).
 */
export function markWatching(state: RunState, node: string, step: number, at: number): RunState {
  return update(state, node, step, 'markWatching', (rec) => {
    const action = nextAction(state, node);
    if (action.kind !== 'recheck' || action.step !== step) throw new Error(`markWatching: ${node} step ${step} is not due for a re-check (next: ${describeAction(action)})`);
    return { step: rec.step, state: 'started', attempt: state.attempt, sentAt: rec.sentAt ?? action.sentAt, finishedAt: at };
  });
}

/**
 * Records how a step ended, with the one-line reason the evidence gives. Only the step the node
 * is at can end; a `done` step is never overwritten.
 */
export function markOutcome(state: RunState, node: string, step: number, outcome: Exclude<FinalStepState, 'started'>, reason: string | undefined, at: number): RunState {
  return update(state, node, step, 'markOutcome', (rec, run) => {
    const blocking = run.steps.find((s) => s.step < step && s.state !== 'done' && s.state !== 'not_needed');
    if (blocking) throw new Error(`markOutcome: ${node} step ${step} cannot end before step ${blocking.step} (${blocking.state})`);
    return {
      step: rec.step,
      state: outcome,
      attempt: state.attempt,
      ...(reason !== undefined ? { reason } : {}),
      ...(rec.sentAt !== undefined ? { sentAt: rec.sentAt } : {}),
      finishedAt: at,
    };
  });
}

/**
 * After a node's last step: the look at replication (client/sweep-lag.ts) turns that `done` step
 * into `late_data`, or adds to its reason that replication could not be checked. Only the last
 * step with something to send, and only when it is `done` in this attempt.
 *
 * `late_data` reopens every earlier `done` step of the node too: the records that reached it late
 * can be older than any step's cut-off (the ones an earlier step deletes among them), so the
 * catch-up (a resume) sends every step again, not only the last.
 */
export function reviseLastStep(state: RunState, node: string, outcome: 'done' | 'late_data', reason: string, at: number): RunState {
  const { run } = nodeOf(state, node);
  const last = [...run.steps].reverse().find((s) => s.state !== 'not_needed');
  if (!last || last.state !== 'done' || last.attempt !== state.attempt) throw new Error(`reviseLastStep: ${node} has no last step done in this attempt`);
  const revise = (s: StepRecord): StepRecord => {
    if (s === last) return { ...last, state: outcome, reason, ...(outcome === 'late_data' ? { finishedAt: at } : {}) };
    if (outcome !== 'late_data' || s.state !== 'done') return s;
    return { ...s, state: 'late_data', attempt: state.attempt, reason: `${reason} (records older than this step's cut-off may be among them)`, finishedAt: at };
  };
  return { ...state, nodes: state.nodes.map((n) => (n === run ? { ...n, steps: n.steps.map(revise) } : n)) };
}

/** The steps of `node` that ended `late_data` in this attempt (reviseLastStep), in order. */
export function lateSteps(state: RunState, node: string): number[] {
  return nodeOf(state, node)
    .run.steps.filter((s) => s.state === 'late_data' && s.attempt === state.attempt)
    .map((s) => s.step);
}

function update(state: RunState, node: string, step: number, what: string, change: (rec: StepRecord, run: NodeRun) => StepRecord): RunState {
  const { run } = nodeOf(state, node);
  const rec = run.steps.find((s) => s.step === step);
  if (!rec) throw new Error(`${what}: ${node} has no step ${step}`);
  if (rec.state === 'done' || rec.state === 'not_needed') throw new Error(`${what}: ${node} step ${step} is already ${rec.state}`);
  const next = change(rec, run);
  return { ...state, nodes: state.nodes.map((n) => (n === run ? { ...n, steps: n.steps.map((s) => (s === rec ? next : s)) } : n)) };
}

function nodeOf(state: RunState, node: string): { run: NodeRun; plan: RetentionPlan['nodes'][number] } {
  const i = state.nodes.findIndex((n) => n.node === node);
  if (i < 0) throw new Error(`run ${state.runId} has no node ${node}`);
  return { run: state.nodes[i]!, plan: state.plan.nodes[i]! };
}

export function describeAction(a: NextAction): string {
  switch (a.kind) {
    case 'send':
      return `send step ${a.step}${a.retry ? ' again' : ''}`;
    case 'recheck':
      return `re-check step ${a.step} (was ${a.previous}) before sending`;
    case 'wait':
      return `step ${a.step} is ${a.state.replace('_', ' ')}`;
    case 'stop':
      return `stopped at step ${a.step}: ${a.state}${a.reason ? ` (${a.reason})` : ''}`;
    case 'finished':
      return 'finished';
  }
}

// ---------------------------------------------------------------- summary

export interface NodeRunSummary {
  node: string;
  /** Steps with something to send, and how many of them are done. */
  steps: number;
  done: number;
  next: NextAction;
}

/**
 * `complete`: every node finished. `failed`: no step is done anywhere. `partial`: some are.
 * `interrupted`: a node stopped at an interrupted step in this attempt. `running`: some node still
 * has work or a step in flight. (cli/ maps these to exit codes 0, 1, 3, 130.)
 */
export type RunOutcome = 'complete' | 'partial' | 'failed' | 'interrupted' | 'running';

export function summariseRun(state: RunState): { outcome: RunOutcome; nodes: NodeRunSummary[] } {
  const nodes = state.nodes.map((n) => ({
    node: n.node,
    steps: n.steps.filter((s) => s.state !== 'not_needed').length,
    done: n.steps.filter((s) => s.state === 'done').length,
    next: nextAction(state, n.node),
  }));
  let outcome: RunOutcome;
  if (nodes.some((n) => n.next.kind === 'send' || n.next.kind === 'recheck' || n.next.kind === 'wait')) outcome = 'running';
  else if (nodes.some((n) => n.next.kind === 'stop' && n.next.state === 'interrupted')) outcome = 'interrupted';
  else if (nodes.every((n) => n.next.kind === 'finished')) outcome = 'complete';
  // A node that ended late_data finished its steps: partial, never failed.
  else if (nodes.some((n) => n.done > 0 || (n.next.kind === 'stop' && n.next.state === 'late_data'))) outcome = 'partial';
  else outcome = 'failed';
  return { outcome, nodes };
}

// ---------------------------------------------------------------- (de)serialisation

export interface StepRecordJson {
  step: number;
  state: StepState;
  reason: string | null;
  attempt: number;
  sent_at: number | null;
  sent_at_iso: string | null;
  finished_at: number | null;
  finished_at_iso: string | null;
}

export interface RunStateJson {
  kind: 'tsnode_retention_run';
  version: 1 | 2;
  run_id: string;
  /** Digests of the plan's fields (planDigests): a resume refuses a file whose plan no longer matches them. */
  plan_fingerprint?: Record<string, string>;
  created_at: number;
  created_at_iso: string;
  attempt: number;
  /** Version 2: the profile and node-source flags of the run (RunOrigin). */
  origin?: { profile: string | null; flags: string[]; add_back: string[] };
  plan: PlanJson;
  nodes: { node: string; steps: StepRecordJson[] }[];
}

const seconds = (ms: number): number => ms / 1000;

export function runStateToJson(state: RunState, opts: { plan?: boolean } = {}): RunStateJson {
  return {
    kind: 'tsnode_retention_run',
    version: RUN_FILE_VERSION,
    run_id: state.runId,
    created_at: seconds(state.createdAt),
    created_at_iso: isoSeconds(seconds(state.createdAt)),
    attempt: state.attempt,
    ...(state.origin ? { origin: { profile: state.origin.profile, flags: [...state.origin.flags], add_back: [...state.origin.addBack] } } : {}),
    plan_fingerprint: fingerprintOf(state.plan),
    // (serializeRunState leaves it out and puts in the plan's cached text)
    plan: opts.plan === false ? (undefined as unknown as PlanJson) : planToJson(state.plan),
    nodes: state.nodes.map((n) => ({
      node: n.node,
      steps: n.steps.map((s) => ({
        step: s.step,
        state: s.state,
        reason: s.reason ?? null,
        attempt: s.attempt,
        sent_at: s.sentAt !== undefined ? seconds(s.sentAt) : null,
        sent_at_iso: s.sentAt !== undefined ? isoSeconds(seconds(s.sentAt)) : null,
        finished_at: s.finishedAt !== undefined ? seconds(s.finishedAt) : null,
        finished_at_iso: s.finishedAt !== undefined ? isoSeconds(seconds(s.finishedAt)) : null,
      })),
    })),
  };
}

/** A plan never changes within a run: its JSON text is made once (a run file is rewritten many times). */
const planText = new WeakMap<RetentionPlan, string>();
const PLAN_MARK = '"<plan>"'; // (not a run id: those are [A-Za-z0-9._-])

/** The state file's text: one JSON document, pretty-printed for the operator who opens it. */
export function serializeRunState(state: RunState): string {
  let plan = planText.get(state.plan);
  if (plan === undefined) {
    // Indented as the value of a top-level key.
    plan = JSON.stringify(planToJson(state.plan), null, 2).replace(/\n/g, '\n  ');
    planText.set(state.plan, plan);
  }
  const json = runStateToJson(state, { plan: false });
  const text = JSON.stringify({ ...json, plan: '<plan>', nodes: json.nodes }, null, 2);
  return `${text.replace(PLAN_MARK, () => plan)}\n`;
}

const planDigestCache = new WeakMap<RetentionPlan, Record<string, string>>();

/** The plan's fingerprint, made once per plan (a run file is rewritten before every DELETE). */
function fingerprintOf(plan: RetentionPlan): Record<string, string> {
  let digests = planDigestCache.get(plan);
  if (digests === undefined) {
    digests = planDigests(planToJson(plan));
    planDigestCache.set(plan, digests);
  }
  return digests;
}

/** JSON with object keys sorted: the same value gives the same text whatever order a file has its keys in. */
function canonical(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonical).join(',')}]`;
  if (v && typeof v === 'object') {
    const o = v as Record<string, unknown>;
    return `{${Object.keys(o)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${canonical(o[k])}`)
      .join(',')}}`;
  }
  return JSON.stringify(v) ?? 'null';
}

const digest = (v: unknown): string => createHash('sha256').update(canonical(v)).digest('hex').slice(0, 16);

/**
 * The run file's fingerprint over its pinned plan: a digest per field, two levels deep
 * (`now`, `policy`, `steps[0].cutoff`, `nodes[2].steps`, ...), so a plan edited by hand (a cut-off
 * moved, the age text left alone) is refused naming the field that changed. It catches edits and
 * damage, not an attacker who can recompute it: the run file is the user's own (mode 0600).
 */
export function planDigests(plan: unknown): Record<string, string> {
  const out: Record<string, string> = {};
  if (!plan || typeof plan !== 'object' || Array.isArray(plan)) return { plan: digest(plan) };
  for (const [key, value] of Object.entries(plan as Record<string, unknown>)) {
    if (Array.isArray(value) && value.every((x) => x && typeof x === 'object' && !Array.isArray(x))) {
      out[`${key}.length`] = digest(value.length);
      value.forEach((item, i) => {
        for (const [k, v] of Object.entries(item as Record<string, unknown>)) out[`${key}[${i}].${k}`] = digest(v);
      });
    } else out[key] = digest(value);
  }
  return out;
}

/** The first field whose digest differs from the fingerprint (a field added or removed counts), or null. */
export function editedPlanField(plan: unknown, fingerprint: Readonly<Record<string, string>>): string | null {
  const now = planDigests(plan);
  const keys = [...new Set([...Object.keys(fingerprint), ...Object.keys(now)])];
  // Lengths first: an element added or removed is named as such, not as its first field.
  keys.sort((a, b) => Number(!a.endsWith('.length')) - Number(!b.endsWith('.length')));
  return keys.find((k) => fingerprint[k] !== now[k]) ?? null;
}

const epochSeconds = z.number().nonnegative();
const stepSchema = z.strictObject({
  step: z.number().int().positive(),
  state: z.enum(STEP_STATES as [StepState, ...StepState[]]),
  reason: z.string().nullable(),
  attempt: z.number().int().nonnegative(),
  sent_at: epochSeconds.nullable(),
  sent_at_iso: z.string().nullable(),
  finished_at: epochSeconds.nullable(),
  finished_at_iso: z.string().nullable(),
});
const runSchema = z.strictObject({
  kind: z.literal('tsnode_retention_run'),
  version: z.union([z.literal(1), z.literal(2)]),
  run_id: z.string().regex(RUN_ID, 'a run id is 1-100 of A-Z a-z 0-9 . _ - (starting with a letter or digit)'),
  plan_fingerprint: z.record(z.string(), z.string()).optional(),
  created_at: epochSeconds,
  created_at_iso: z.string(),
  attempt: z.number().int().positive(),
  origin: z.strictObject({ profile: z.string().nullable(), flags: z.array(z.string()), add_back: z.array(z.string()) }).optional(),
  plan: z.unknown(),
  nodes: z.array(z.strictObject({ node: z.string().min(1), steps: z.array(stepSchema) })),
});

/** Reads a state file's text back; `where` (its path) prefixes every error. */
export function parseRunState(text: string, where: string): RunState {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (err) {
    throw bad(where, `not JSON: ${err instanceof Error ? err.message : String(err)}`);
  }
  const version = typeof value === 'object' && value !== null && (value as { kind?: unknown }).kind === 'tsnode_retention_run' ? (value as { version?: unknown }).version : 1;
  if (version !== 1 && version !== 2) {
    const newer = typeof version === 'number' && version > RUN_FILE_VERSION;
    throw new RetentionError(
      'invalid_run_state',
      `${where}: run file version ${JSON.stringify(version)} is not one this tsnode reads (1 to ${RUN_FILE_VERSION})${newer ? ': it was written by a newer tsnode' : ''} (nothing was sent)`,
      newer ? 'resume it with the tsnode that started the run (or a newer one)' : 'the saved run is damaged; start a fresh run (a new plan covers everything the old one would)',
    );
  }
  const parsed = runSchema.safeParse(value);
  if (!parsed.success) throw bad(where, formatIssues(parsed.error.issues));
  const j = parsed.data;
  // The plan's own consistency first (its messages are the more precise), then the fingerprint.
  const plan = planFromJson(j.plan, where);
  if (j.plan_fingerprint) {
    const field = editedPlanField(j.plan, j.plan_fingerprint);
    if (field !== null) {
      throw new RetentionError(
        'edited_run_state',
        `${where}: plan.${field} does not match the run's fingerprint: the pinned plan was edited after the run began (nothing was sent)`,
        'a run continues only with the plan it began with; to change cut-offs or rules, start a new run (tsnode retention apply --fresh with the policy)',
      );
    }
  }
  if (j.nodes.length !== plan.nodes.length) throw bad(where, `nodes lists ${j.nodes.length} node(s), the plan ${plan.nodes.length}`);
  const ms = (s: number | null): number | undefined => (s === null ? undefined : Math.round(s * 1000));
  const nodes: NodeRun[] = j.nodes.map((n, ni) => {
    const p = plan.nodes[ni]!;
    if (n.node !== p.node) throw bad(where, `nodes[${ni}] is ${n.node}, the plan's node there is ${p.node}`);
    if (n.steps.length !== p.steps.length) throw bad(where, `nodes[${ni}] (${n.node}) has ${n.steps.length} steps, the plan ${p.steps.length}`);
    return {
      node: n.node,
      steps: n.steps.map((s, si) => {
        const path = `nodes[${ni}].steps[${si}]`;
        if (s.step !== si + 1) throw bad(where, `${path}.step is ${s.step}, expected ${si + 1}`);
        if ((s.state === 'not_needed') !== (p.steps[si]!.request === null))
          throw bad(where, `${path} is ${s.state} but the plan ${p.steps[si]!.request ? 'has' : 'has no'} request there`);
        if (s.attempt > j.attempt) throw bad(where, `${path}.attempt ${s.attempt} is after the run's attempt ${j.attempt}`);
        const rec: StepRecord = { step: s.step, state: s.state, attempt: s.attempt };
        if (s.reason !== null) rec.reason = s.reason;
        const sent = ms(s.sent_at);
        if (sent !== undefined) rec.sentAt = sent;
        const fin = ms(s.finished_at);
        if (fin !== undefined) rec.finishedAt = fin;
        return rec;
      }),
    };
  });
  const origin = j.origin ? { origin: { profile: j.origin.profile, flags: j.origin.flags, addBack: j.origin.add_back } } : {};
  return { version: j.version, runId: j.run_id, createdAt: Math.round(j.created_at * 1000), attempt: j.attempt, plan, nodes, ...origin };
}

function bad(where: string, problem: string): RetentionError {
  return new RetentionError('invalid_run_state', `${where}: ${problem}`, 'the saved run is damaged; start a fresh run (a new plan covers everything the old one would)');
}
