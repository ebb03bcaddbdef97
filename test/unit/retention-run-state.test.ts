import { describe, expect, it } from 'vitest';
import {
  FINAL_STEP_STATES,
  markOutcome,
  markSending,
  markStarted,
  markWatching,
  newRun,
  nextAction,
  parseRules,
  parseRunState,
  planRetention,
  resumeRun,
  RetentionError,
  lateSteps,
  reviseLastStep,
  runFingerprint,
  serializeRunState,
  runStateToJson,
  summariseRun,
  type FinalStepState,
  type RunState,
} from '../../src/retention/index.js';

const DAY = 86_400;
const NOW_MS = 1_795_321_978_250;
const NOW = 1_795_321_978;
const A = 'http://a:8112';
const B = 'http://b:8112';
const SPANS = [60, 300, 1800];

// Three steps on A; on B the "*" step expands to nothing (B has only the listed spans), so B's step 1 is not needed.
const plan = planRetention(parseRules(['nnt:300=1y', 'nnt:*=30d', 'text=90d']), NOW_MS, [
  { node: A, nnt: SPANS, histogram: [] },
  { node: B, nnt: [300], histogram: [] },
]);
const T0 = NOW_MS + 1_000;

function fresh(): RunState {
  return newRun(plan, { runId: 'r-20261122T043258Z', at: T0 });
}

/** Runs one step on a node the way apply will: persist in_flight, DELETE answered, then the outcome. */
function runStep(s: RunState, node: string, step: number, outcome: Exclude<FinalStepState, 'started'>, reason?: string, at = T0): RunState {
  s = markSending(s, node, step, at);
  s = markStarted(s, node, step, at + 5);
  return markOutcome(s, node, step, outcome, reason, at + 500);
}

describe('a fresh run', () => {
  it('has every step pending, or not_needed where the node has nothing to send', () => {
    const s = fresh();
    expect(s.attempt).toBe(1);
    expect(s.nodes.map((n) => n.steps.map((x) => x.state))).toEqual([
      ['pending', 'pending', 'pending'],
      ['not_needed', 'pending', 'pending'],
    ]);
    expect(nextAction(s, A)).toEqual({ kind: 'send', node: A, step: 1, request: { before: NOW - 30 * DAY, types: ['nnt'], nntRollups: [60, 1800] }, retry: false });
    // B starts at step 2: there is nothing to send it at step 1.
    expect(nextAction(s, B)).toMatchObject({ kind: 'send', step: 2, request: { before: NOW - 90 * DAY, types: ['text'] } });
  });

  it('refuses a run id that cannot be a file name', () => {
    expect(() => newRun(plan, { runId: '../x', at: T0 })).toThrow(TypeError);
  });
});

describe('within one attempt', () => {
  it("runs a node's steps strictly in order and says when it is finished", () => {
    let s = fresh();
    s = markSending(s, A, 1, T0);
    expect(nextAction(s, A)).toEqual({ kind: 'wait', node: A, step: 1, state: 'in_flight' });
    s = markStarted(s, A, 1, T0 + 3);
    expect(nextAction(s, A)).toEqual({ kind: 'wait', node: A, step: 1, state: 'started' });
    s = markOutcome(s, A, 1, 'done', "the node's record says completed", T0 + 400);
    expect(nextAction(s, A)).toMatchObject({ kind: 'send', step: 2 });
    s = runStep(s, A, 2, 'done');
    s = runStep(s, A, 3, 'done');
    expect(nextAction(s, A)).toEqual({ kind: 'finished', node: A });
    expect(s.nodes[0]!.steps[0]).toEqual({ step: 1, state: 'done', attempt: 1, reason: "the node's record says completed", sentAt: T0, finishedAt: T0 + 400 });
  });

  it.each(FINAL_STEP_STATES.filter((x) => x !== 'done' && x !== 'started'))('a step ending %s stops the node there; the other node carries on', (state) => {
    let s = runStep(fresh(), A, 1, 'done');
    s = runStep(s, A, 2, state, `why: ${state}`);
    expect(nextAction(s, A)).toEqual({ kind: 'stop', node: A, step: 2, state, reason: `why: ${state}` });
    expect(nextAction(s, B)).toMatchObject({ kind: 'send', step: 2 });
  });

  it('a node skipped before its step (busy with another sweep) stops without anything sent', () => {
    const s = markOutcome(fresh(), A, 1, 'skipped', 'busy: nnt sweep before 2026-01-01T00:00:00Z running', T0);
    expect(nextAction(s, A)).toMatchObject({ kind: 'stop', step: 1, state: 'skipped' });
    expect(s.nodes[0]!.steps[0]!.sentAt).toBeUndefined();
  });

  it('refuses transitions that would break the order or overwrite evidence', () => {
    const s = fresh();
    expect(() => markOutcome(s, A, 2, 'done', undefined, T0)).toThrow('markOutcome: http://a:8112 step 2 cannot end before step 1 (pending)');
    expect(() => markSending(s, A, 2, T0)).toThrow('markSending: http://a:8112 step 2 is not due (next: send step 1)');
    expect(() => markStarted(s, A, 1, T0)).toThrow('is pending, not in flight');
    const done = runStep(s, A, 1, 'done');
    expect(() => markOutcome(done, A, 1, 'failed', 'x', T0)).toThrow('is already done');
    expect(() => markSending(done, B, 1, T0)).toThrow('is already not_needed');
    expect(() => markSending(s, 'http://z:1', 1, T0)).toThrow('has no node http://z:1');
    expect(() => markSending(s, A, 9, T0)).toThrow('has no step 9');
    const inFlight = markSending(s, A, 1, T0);
    expect(() => markSending(inFlight, A, 1, T0)).toThrow('is not due (next: step 1 is in flight)');
  });

  it('transitions return a new state and leave the old one as it was', () => {
    const s = fresh();
    const before = serializeRunState(s);
    markSending(s, A, 1, T0);
    expect(serializeRunState(s)).toBe(before);
  });
});

describe('resume: a new attempt of the same run', () => {
  /** A at step 2 in `state` (step 1 done), as an earlier attempt left it. */
  function leftAt(state: 'pending' | 'in_flight' | 'started' | Exclude<FinalStepState, 'started' | 'done'>, sent = true): RunState {
    let s = runStep(fresh(), A, 1, 'done');
    if (state === 'pending') return s;
    if (state === 'in_flight') return markSending(s, A, 2, T0 + 1000);
    if (state === 'started') return markStarted(markSending(s, A, 2, T0 + 1000), A, 2, T0 + 1005);
    if (sent) s = markSending(s, A, 2, T0 + 1000);
    return markOutcome(s, A, 2, state, 'earlier', T0 + 2000);
  }

  it.each([
    ['in_flight', 'recheck'],
    ['started', 'recheck'],
    ['unconfirmed', 'recheck'],
    ['lost', 'recheck'],
    ['timed_out', 'recheck'],
    ['interrupted', 'recheck'],
    ['replaced', 'send'],
    ['cancelled', 'send'],
    ['failed', 'send'],
    ['skipped', 'send'],
    ['pending', 'send'],
  ] as const)('a step left %s is %s first, and the done step before it is not repeated', (state, kind) => {
    const s = resumeRun(leftAt(state));
    expect(s.attempt).toBe(2);
    const a = nextAction(s, A);
    expect(a.kind).toBe(kind);
    expect(a).toMatchObject({ step: 2, request: { before: NOW - 90 * DAY, types: ['text'] } });
    if (a.kind === 'recheck') expect(a).toMatchObject({ previous: state, sentAt: T0 + 1000 });
    if (a.kind === 'send') expect(a.retry).toBe(state !== 'pending');
  });

  it('an interrupted step that was never sent is simply sent', () => {
    expect(nextAction(resumeRun(leftAt('interrupted', false)), A)).toMatchObject({ kind: 'send', step: 2, retry: true });
  });

  it('a re-check that finds the earlier sweep completed marks it done without sending, and the run goes on', () => {
    let s = resumeRun(leftAt('lost'));
    s = markOutcome(s, A, 2, 'done', "the node's record: completed after the DELETE", T0 + 60_000);
    expect(s.nodes[0]!.steps[1]).toMatchObject({ state: 'done', attempt: 2, sentAt: T0 + 1000 });
    expect(nextAction(s, A)).toMatchObject({ kind: 'send', step: 3, retry: false });
  });

  it('a re-check that finds the node idle without evidence sends again, and a failure then stops the node in this attempt', () => {
    let s = resumeRun(leftAt('unconfirmed'));
    s = markSending(s, A, 2, T0 + 60_000);
    expect(s.nodes[0]!.steps[1]).toEqual({ step: 2, state: 'in_flight', attempt: 2, sentAt: T0 + 60_000 });
    s = markOutcome(s, A, 2, 'failed', 'node: disk full', T0 + 61_000);
    expect(nextAction(s, A)).toMatchObject({ kind: 'stop', step: 2, state: 'failed' });
    // ... until the next resume.
    expect(nextAction(resumeRun(s), A)).toMatchObject({ kind: 'send', step: 2, retry: true });
  });

  it('a crash between persisting in_flight and the answer survives the file and is re-checked', () => {
    const crashed = markSending(runStep(fresh(), A, 1, 'done'), A, 2, T0 + 1000);
    const loaded = parseRunState(serializeRunState(crashed), 'run.json');
    expect(loaded).toEqual(crashed);
    expect(nextAction(resumeRun(loaded), A)).toMatchObject({ kind: 'recheck', step: 2, previous: 'in_flight', sentAt: T0 + 1000 });
  });

  it('keeps the same pinned cut-offs however late it resumes', () => {
    const loaded = resumeRun(parseRunState(serializeRunState(leftAt('lost')), 'run.json'));
    expect(loaded.plan.steps.map((x) => x.cutoff)).toEqual(plan.steps.map((x) => x.cutoff));
    expect(loaded.plan.nodes[0]!.steps[1]!.http).toEqual(plan.nodes[0]!.steps[1]!.http);
  });
});

describe('summariseRun', () => {
  it.each([
    ['nothing sent yet', (s: RunState) => s, 'running'],
    ['every node finished', (s: RunState) => runStep(runStep(runStep(runStep(runStep(s, A, 1, 'done'), A, 2, 'done'), A, 3, 'done'), B, 2, 'done'), B, 3, 'done'), 'complete'],
    ['one stopped after some steps were done', (s: RunState) => runStep(runStep(runStep(runStep(s, A, 1, 'done'), A, 2, 'done'), A, 3, 'done'), B, 2, 'lost'), 'partial'],
    ['both stopped at their first step', (s: RunState) => runStep(runStep(s, A, 1, 'failed'), B, 2, 'unconfirmed'), 'failed'],
    ['interrupted', (s: RunState) => runStep(runStep(s, A, 1, 'interrupted'), B, 2, 'done'), 'running'],
    ['interrupted on every node', (s: RunState) => runStep(runStep(s, A, 1, 'interrupted'), B, 2, 'interrupted'), 'interrupted'],
  ])('%s: %s', (_what, build, outcome) => {
    expect(summariseRun(build(fresh())).outcome).toBe(outcome);
  });

  it('counts the steps each node has to send and has done', () => {
    const s = runStep(runStep(fresh(), A, 1, 'done'), B, 2, 'replaced', 'another sweep: nnt before 1700000000');
    expect(summariseRun(s).nodes.map((n) => [n.node, n.done, n.steps, n.next.kind])).toEqual([
      [A, 1, 3, 'send'],
      [B, 0, 2, 'stop'],
    ]);
  });
});

describe('reviseLastStep: replication looked at after the last step', () => {
  const single = planRetention(parseRules(['text=90d']), NOW_MS, [{ node: A, nnt: [], histogram: [] }]);
  const done = (): RunState => runStep(newRun(single, { runId: 'r-1', at: T0 }), A, 1, 'done', 'the node reports the sweep completed');

  it('late_data: the node stopped (partial, never failed), and a resume sends that step again', () => {
    const s = reviseLastStep(done(), A, 'late_data', 'a peer still held data for it', T0 + 900);
    expect(s.nodes[0]!.steps[0]).toMatchObject({ state: 'late_data', reason: 'a peer still held data for it', finishedAt: T0 + 900 });
    expect(summariseRun(s).outcome).toBe('partial');
    expect(nextAction(s, A)).toMatchObject({ kind: 'stop', step: 1, state: 'late_data' });
    expect(nextAction(resumeRun(s), A)).toMatchObject({ kind: 'send', step: 1, retry: true });
  });

  it('late_data reopens the earlier done steps: the catch-up (a resume) sends every step again', () => {
    const two = planRetention(parseRules(['nnt:*=30d', 'text=90d']), NOW_MS, [{ node: A, nnt: [60], histogram: [] }]);
    let s = runStep(newRun(two, { runId: 'r-1', at: T0 }), A, 1, 'done', 'completed');
    s = runStep(s, A, 2, 'done', 'completed');
    s = reviseLastStep(s, A, 'late_data', 'a peer still held data for it', T0 + 900);
    expect(s.nodes[0]!.steps.map((x) => x.state)).toEqual(['late_data', 'late_data']);
    expect(s.nodes[0]!.steps[0]!.reason).toContain('a peer still held data for it');
    expect(lateSteps(s, A)).toEqual([1, 2]);
    expect(summariseRun(s).outcome).toBe('partial');
    const resumed = resumeRun(s);
    expect(nextAction(resumed, A)).toMatchObject({ kind: 'send', step: 1, retry: true });
    expect(nextAction(runStep(resumed, A, 1, 'done', 'completed'), A)).toMatchObject({ kind: 'send', step: 2, retry: true });
  });

  it('done with a new reason stays finished', () => {
    const s = reviseLastStep(done(), A, 'done', 'completed; replication could not be checked', T0 + 900);
    expect(s.nodes[0]!.steps[0]!.reason).toBe('completed; replication could not be checked');
    expect(summariseRun(s).outcome).toBe('complete');
  });

  it('refuses a step that is not done in this attempt', () => {
    expect(() => reviseLastStep(newRun(single, { runId: 'r-1', at: T0 }), A, 'late_data', 'x', T0)).toThrow(/no last step done/);
    expect(() => reviseLastStep(resumeRun(done()), A, 'late_data', 'x', T0)).toThrow(/no last step done/);
  });
});

describe('the state file', () => {
  it('is JSON with snake_case keys and times as epoch seconds plus ISO', () => {
    const j = JSON.parse(serializeRunState(markSending(fresh(), A, 1, 1_795_321_979_500)));
    expect(j).toMatchObject({
      kind: 'tsnode_retention_run',
      version: 2,
      run_id: 'r-20261122T043258Z',
      attempt: 1,
      created_at: 1_795_321_979.25,
      created_at_iso: '2026-11-22T04:32:59.250Z',
    });
    expect(j.nodes[0].steps[0]).toEqual({
      step: 1,
      state: 'in_flight',
      reason: null,
      attempt: 1,
      sent_at: 1_795_321_979.5,
      sent_at_iso: '2026-11-22T04:32:59.500Z',
      finished_at: null,
      finished_at_iso: null,
    });
    expect(j.plan.steps.map((x: { cutoff: number }) => x.cutoff)).toEqual(plan.steps.map((x) => x.cutoff));
  });

  it('round-trips every state', () => {
    let s = runStep(fresh(), A, 1, 'done', 'ok');
    s = runStep(s, B, 2, 'timed_out', 'no end within 1h');
    s = resumeRun(s);
    expect(parseRunState(serializeRunState(s), 'run.json')).toEqual(s);
  });

  it('records how the run reached its nodes (version 2), and still reads a version 1 file without it', () => {
    const origin = { profile: 'night', flags: ['--profile', 'night', '--redact', 'X-Team'], addBack: ['--header (1 given; values not shown)'] };
    const s = newRun(plan, { runId: 'r-1', at: T0, origin });
    const j = JSON.parse(serializeRunState(s));
    expect(j.origin).toEqual({ profile: 'night', flags: ['--profile', 'night', '--redact', 'X-Team'], add_back: ['--header (1 given; values not shown)'] });
    expect(parseRunState(serializeRunState(s), 'run.json').origin).toEqual(origin);
    delete j.origin;
    j.version = 1;
    const old = parseRunState(JSON.stringify(j), 'run.json');
    expect(old.origin).toBeUndefined();
    expect(old.version).toBe(1);
    expect(summariseRun(old).outcome).toBe(summariseRun(s).outcome);
  });

  const damaged: [string, (j: any) => void, string][] = [
    ['not JSON', () => undefined, 'run.json: not JSON'],
    ['another kind of file', (j) => (j.kind = 'sweep'), 'run.json: kind'],
    ['a newer version', (j) => (j.version = 3), 'run.json: run file version 3 is not one this tsnode reads (1 to 2): it was written by a newer tsnode'],
    ['an unknown state', (j) => (j.nodes[0].steps[0].state = 'finished'), 'nodes[0].steps[0].state'],
    ['a node renamed', (j) => (j.nodes[1].node = 'http://c:8112'), "run.json: nodes[1] is http://c:8112, the plan's node there is http://b:8112"],
    ['a node dropped', (j) => j.nodes.pop(), 'run.json: nodes lists 1 node(s), the plan 2'],
    ['a step from the future', (j) => (j.nodes[0].steps[0].attempt = 5), "nodes[0].steps[0].attempt 5 is after the run's attempt 1"],
    ['a needed step marked not_needed', (j) => (j.nodes[0].steps[0].state = 'not_needed'), 'nodes[0].steps[0] is not_needed but the plan has request there'],
    ['a tampered cut-off', (j) => (j.plan.nodes[0].steps[0].request.headers['X-Service-Delete-Time'] = String(NOW)), 'plan.nodes[0].steps[0].request does not match its step'],
  ];
  it.each(damaged)('refuses %s, naming the file', (what, damage, message) => {
    const j = JSON.parse(serializeRunState(fresh()));
    damage(j);
    const text = what === 'not JSON' ? '{"kind": "tsnode_retention_run",' : JSON.stringify(j);
    let err: unknown;
    try {
      parseRunState(text, 'run.json');
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(RetentionError);
    expect((err as RetentionError).code).toBe('invalid_run_state');
    expect((err as Error).message).toContain(message);
  });
});

describe('runFingerprint', () => {
  it('is the same for the same rules and nodes, whatever the clock, the spelling or the node order', () => {
    const later = planRetention(parseRules(['text=2160h', 'nnt:*=720h', 'nnt:300=1y']), NOW_MS + 86_400_000, [
      { node: B, nnt: [300], histogram: [] },
      { node: A, nnt: SPANS, histogram: [] },
    ]);
    expect(runFingerprint(later)).toBe(runFingerprint(plan));
  });

  it('differs when a rule, the node set or the prefix differs', () => {
    const nodes = [
      { node: A, nnt: SPANS, histogram: [] },
      { node: B, nnt: [300], histogram: [] },
    ];
    const fp = runFingerprint(plan);
    expect(runFingerprint(planRetention(parseRules(['nnt:300=1y', 'nnt:*=31d', 'text=90d']), NOW_MS, nodes))).not.toBe(fp);
    expect(runFingerprint(planRetention(parseRules(['nnt:300=1y', 'nnt:*=30d', 'text=90d']), NOW_MS, nodes.slice(0, 1)))).not.toBe(fp);
    expect(runFingerprint(planRetention(parseRules(['nnt:300=1y', 'nnt:*=30d', 'text=90d']), NOW_MS, nodes, { headerPrefix: 'X-Snowth' }))).not.toBe(fp);
  });
});

describe('markWatching: a re-check found the step still running on the node', () => {
  it('takes the step into this attempt as started, keeping the earlier send time; only a step due for a re-check', () => {
    let s = fresh();
    s = markSending(s, A, 1, T0);
    s = resumeRun(s);
    expect(nextAction(s, A)).toMatchObject({ kind: 'recheck', step: 1, previous: 'in_flight', sentAt: T0 });
    s = markWatching(s, A, 1, T0 + 9_000);
    expect(s.nodes[0]!.steps[0]).toEqual({ step: 1, state: 'started', attempt: 2, sentAt: T0, finishedAt: T0 + 9_000 });
    expect(nextAction(s, A)).toEqual({ kind: 'wait', node: A, step: 1, state: 'started' });
    s = markOutcome(s, A, 1, 'done', 'watched to its end', T0 + 10_000);
    expect(s.nodes[0]!.steps[0]).toMatchObject({ state: 'done', attempt: 2, sentAt: T0 });
    expect(() => markWatching(fresh(), A, 1, T0)).toThrow(/not due for a re-check/);
  });
});

describe('the run file text', () => {
  it('is the run state JSON, pretty-printed, with the plan made once and reused', () => {
    let s = fresh();
    expect(serializeRunState(s)).toBe(`${JSON.stringify(runStateToJson(s), null, 2)}\n`);
    s = markSending(s, A, 1, T0);
    expect(serializeRunState(s)).toBe(`${JSON.stringify(runStateToJson(s), null, 2)}\n`);
    expect(parseRunState(serializeRunState(s), 'run.json')).toEqual(s);
  });
});
