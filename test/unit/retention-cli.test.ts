import { mkdtempSync, readFileSync, statSync, writeFileSync } from 'node:fs';
import { hostname, tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { assembleRuns, filterRuns } from '../../src/cli/commands/history/runs.js';
import { resumeCommand, retentionExitCode } from '../../src/cli/commands/retention/apply-action.js';
import { describeKept, describeRequest, resultTable } from '../../src/cli/commands/retention/render.js';
import { findSavedRun, listRuns, lockRun, rawHasWorkLeft, readRunFile, runDir, runFilePath, writeRunFile } from '../../src/cli/commands/retention/run-files.js';
import type { JournalEntry } from '../../src/cli/journal.js';
import { markOutcome, markSending, newRun, parseRules, planRetention, runFingerprint, serializeRunState } from '../../src/retention/index.js';

const A = 'http://a:8112';
const B = 'http://b:8112';
const NOW_MS = 1_795_321_978_000;
const plan = planRetention(parseRules(['nnt:60=30d', 'text=90d']), NOW_MS, [
  { node: A, nnt: [60, 300] },
  { node: B, nnt: [60, 300] },
]);

function start(run: string, attempt: number, at: string, fingerprint = 'fp1'): JournalEntry {
  return {
    kind: 'retention.start',
    run,
    at,
    attempt,
    by: 'op@h',
    policySource: 'p.yaml',
    policy: {},
    fingerprint,
    now: 1_795_321_978,
    steps: [
      { step: 1, cutoff: 1_792_729_978, types: ['nnt'], rules: ['nnt:60=30d'] },
      { step: 2, cutoff: 1_787_545_978, types: ['text'], rules: ['text=90d'] },
    ],
    headerPrefix: 'X-Service',
    nodeSource: '--nodes',
    nodes: [A, B],
    runFile: '/s/r.json',
    coverage: null,
  };
}
const step = (run: string, attempt: number, node: string, n: number, state: string): JournalEntry => ({
  kind: 'retention.step',
  run,
  at: '2026-01-01T00:00:01.000Z',
  attempt,
  node,
  step: n,
  state,
  reason: `r ${state}`,
});
function end(run: string, attempt: number, at: string, nodes: Array<[string, null | [number, string]]>, outcome: string): JournalEntry {
  return {
    kind: 'retention.end',
    run,
    at,
    attempt,
    outcome,
    exit: 0,
    interrupted: false,
    nodes: nodes.map(([node, stop]) => ({ node, done: 2, steps: 2, stoppedAt: stop ? { step: stop[0], state: stop[1], reason: 'why' } : null })),
    catchUp: nodes.some(([, s]) => s) ? { nodes: nodes.filter(([, s]) => s).map(([n]) => n), command: `tsnode retention apply --resume ${run}`, addBack: [] } : null,
  };
}

describe('history: retention runs', () => {
  it('one row per run across its attempts; each node finished or where it stopped; the catch-up is --resume', () => {
    const runs = assembleRuns([
      start('r-1', 1, '2026-01-01T00:00:00.000Z'),
      step('r-1', 1, A, 1, 'done'),
      step('r-1', 1, A, 2, 'done'),
      step('r-1', 1, B, 1, 'done'),
      step('r-1', 1, B, 2, 'lost'),
      end(
        'r-1',
        1,
        '2026-01-01T00:01:00.000Z',
        [
          [A, null],
          [B, [2, 'lost']],
        ],
        'partial',
      ),
    ]);
    expect(runs).toHaveLength(1);
    const r = runs[0]!;
    expect(r).toMatchObject({
      run: 'r-1',
      kind: 'retention',
      outcome: true,
      started: '2026-01-01T00:00:00.000Z',
      finished: '2026-01-01T00:01:00.000Z',
      types: ['nnt', 'text'],
      pending: [B],
    });
    expect(r.nodes).toEqual([
      { node: A, state: 'finished', reason: 'every step done (2 sent)' },
      { node: B, state: 'lost', reason: 'step 2: why' },
    ]);
    expect(r.catchUp).toEqual({ nodes: [B], command: 'tsnode retention apply --resume r-1', addBack: [] });
    expect(r.retention).toMatchObject({ attempt: 1, outcome: 'partial', policySource: 'p.yaml' });

    // the resume: attempt 2 finishes B; still one row, nothing left
    const resumed = assembleRuns([
      start('r-1', 1, '2026-01-01T00:00:00.000Z'),
      end(
        'r-1',
        1,
        '2026-01-01T00:01:00.000Z',
        [
          [A, null],
          [B, [2, 'lost']],
        ],
        'partial',
      ),
      start('r-1', 2, '2026-01-02T00:00:00.000Z'),
      step('r-1', 2, B, 2, 'done'),
      end(
        'r-1',
        2,
        '2026-01-02T00:01:00.000Z',
        [
          [A, null],
          [B, null],
        ],
        'complete',
      ),
    ]);
    expect(resumed).toHaveLength(1);
    expect(resumed[0]).toMatchObject({
      started: '2026-01-01T00:00:00.000Z',
      finished: '2026-01-02T00:01:00.000Z',
      pending: [],
      catchUp: null,
      retention: { attempt: 2, outcome: 'complete' },
    });
  });

  it('an attempt without its end line has no outcome recorded, says the last journaled step, and is continued with --resume', () => {
    const runs = assembleRuns([start('r-2', 1, '2026-01-01T00:00:00.000Z'), step('r-2', 1, A, 1, 'done'), step('r-2', 1, B, 1, 'done'), step('r-2', 1, B, 2, 'done')]);
    expect(runs[0]).toMatchObject({ outcome: false, pending: [A, B], catchUp: { nodes: [A, B], command: 'tsnode retention apply --resume r-2' } });
    expect(runs[0]!.nodes[0]!.reason).toBe('no outcome recorded (tsnode was stopped, or is still running); last journaled: step 1 done');
    expect(runs[0]!.nodes[1]!.reason).toMatch(/last journaled: step 2 done$/);
  });

  it('a later run of the same policy on the same nodes catches up the nodes it finished; another policy does not', () => {
    const runs = assembleRuns([
      start('r-3', 1, '2026-01-01T00:00:00.000Z'),
      end(
        'r-3',
        1,
        '2026-01-01T00:01:00.000Z',
        [
          [A, null],
          [B, [1, 'failed']],
        ],
        'partial',
      ),
      start('r-4', 1, '2026-01-02T00:00:00.000Z', 'other'),
      end(
        'r-4',
        1,
        '2026-01-02T00:01:00.000Z',
        [
          [A, null],
          [B, null],
        ],
        'complete',
      ),
      start('r-5', 1, '2026-01-03T00:00:00.000Z'),
      end(
        'r-5',
        1,
        '2026-01-03T00:01:00.000Z',
        [
          [A, null],
          [B, null],
        ],
        'complete',
      ),
    ]);
    expect(runs[0]).toMatchObject({ run: 'r-3', pending: [], catchUp: null });
    expect(runs[0]!.nodes[1]!.caughtUpBy).toBe('r-5');
    expect(filterRuns(runs, { node: 'localhost:1' })).toEqual([]);
    expect(filterRuns(runs, { node: B }).map((r) => r.run)).toEqual(['r-3', 'r-4', 'r-5']);
  });
});

describe('run files', () => {
  it('are written atomically, mode 0600 in a 0700 directory, and read back to the same state', async () => {
    const dir = join(mkdtempSync(join(tmpdir(), 'tsnode-runs-')), 'state', 'tsnode', 'retention');
    let s = newRun(plan, { runId: 'r-20261122T043258Z-3f2a', at: NOW_MS });
    s = markSending(s, A, 1, NOW_MS + 10);
    const path = runFilePath(dir, s.runId);
    await writeRunFile(path, s);
    expect(statSync(path).mode & 0o777).toBe(0o600);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    expect(readRunFile(path)).toEqual(s);
    const later = markOutcome(s, A, 1, 'lost', 'no answer', NOW_MS + 20);
    await writeRunFile(path, later);
    expect(readRunFile(path)).toEqual(later);
    expect(listRuns(dir).map((r) => [r.state.runId, r.outcome])).toEqual([[s.runId, 'running']]);
  });

  it('a damaged run file is an error naming the file; listRuns skips it', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-runs-'));
    writeFileSync(join(dir, 'r-bad.json'), '{"kind":"tsnode_retention_run","version":1');
    expect(() => readRunFile(join(dir, 'r-bad.json'))).toThrow(/r-bad\.json: not JSON/);
    const skipped: string[] = [];
    expect(listRuns(dir, (p) => skipped.push(p))).toEqual([]);
    expect(skipped).toEqual([join(dir, 'r-bad.json')]);
  });

  it('are searched newest first, reading no further than the run wanted', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-runs-'));
    // an old damaged file, then three runs: old finished, newer unfinished, newest finished
    writeFileSync(join(dir, 'r-20200101T000000Z-0000.json'), 'not json');
    const finished = (id: string) => {
      let s = newRun(plan, { runId: id, at: NOW_MS });
      for (const n of [A, B]) for (const k of [1, 2]) s = markOutcome(markSending(s, n, k, NOW_MS), n, k, 'done', 'ok', NOW_MS + 1);
      return s;
    };
    writeFileSync(join(dir, 'r-20260101T000000Z-aaaa.json'), serializeRunState(finished('r-20260101T000000Z-aaaa')));
    writeFileSync(join(dir, 'r-20260102T000000Z-bbbb.json'), serializeRunState(newRun(plan, { runId: 'r-20260102T000000Z-bbbb', at: NOW_MS })));
    writeFileSync(join(dir, 'r-20260103T000000Z-cccc.json'), serializeRunState(finished('r-20260103T000000Z-cccc')));
    const skipped: string[] = [];
    const fp = runFingerprint(plan);
    expect(findSavedRun(dir, (r) => r.fingerprint === fp, { skip: (p) => skipped.push(p) })?.state.runId).toBe('r-20260103T000000Z-cccc');
    expect(findSavedRun(dir, (r) => r.outcome !== 'complete', { cheap: rawHasWorkLeft, skip: (p) => skipped.push(p) })?.state.runId).toBe('r-20260102T000000Z-bbbb');
    expect(skipped).toEqual([]); // the damaged file is older than both: never read
    expect(findSavedRun(dir, () => false, { skip: (p) => skipped.push(p) })).toBeUndefined();
    expect(skipped).toEqual([join(dir, 'r-20200101T000000Z-0000.json')]);
  });

  it('lives under $XDG_STATE_HOME/tsnode/retention', () => {
    expect(runDir({ XDG_STATE_HOME: '/s', HOME: '/h' })).toBe('/s/tsnode/retention');
    expect(runDir({ HOME: '/h' })).toBe('/h/.local/state/tsnode/retention');
  });

  it('a lock keeps a second process off a run; a lock left by a process that is gone is taken over', () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-lock-'));
    const lock = lockRun(dir, 'r-1', () => {});
    expect(() => lockRun(dir, 'r-1', () => {})).toThrow(new RegExp(`run r-1 is being applied by process ${process.pid} on ${hostname()}`));
    lock.release();
    const again = lockRun(dir, 'r-1', () => {});
    again.release();
    // a pid that cannot be alive
    writeFileSync(join(dir, 'r-2.lock'), JSON.stringify({ pid: 2 ** 22 + 12345, host: hostname() }));
    const warned: string[] = [];
    const taken = lockRun(dir, 'r-2', (m) => warned.push(m));
    expect(warned[0]).toMatch(/which no longer runs: taking the lock over/);
    expect(JSON.parse(readFileSync(join(dir, 'r-2.lock'), 'utf8')).pid).toBe(process.pid);
    taken.release();
  });
});

describe('the resume command and exit codes', () => {
  it('names the run and the flags that reach the nodes the same way, never a header value', () => {
    const c = resumeCommand(
      'r-1',
      { cacert: 'ca.pem', cert: undefined, key: undefined, insecure: true, redact: ['X-T'], header: ['Authorization: Bearer s3cr3t'], journal: 'j.jsonl' },
      { profile: 'prod', cwd: '/w', env: { TSNODE_HEADERS: 'Cookie: x' } },
    );
    expect(c.command).toBe('tsnode retention apply --resume r-1 --profile prod --cacert /w/ca.pem --insecure --redact X-T --journal /w/j.jsonl');
    expect(JSON.stringify(c)).not.toMatch(/s3cr3t|Cookie: x/);
    expect(c.addBack).toEqual(['--header (1 given; values not shown)', 'TSNODE_HEADERS (read from the environment again when set)']);
  });

  it('carries --yes when the run had it (a catch-up runs as printed)', () => {
    const opts = { cacert: undefined, cert: undefined, key: undefined, insecure: false, redact: [], header: [], journal: undefined };
    const ctx = { profile: undefined, cwd: '/w', env: {} };
    expect(resumeCommand('r-1', { ...opts, yes: true }, ctx).command).toBe('tsnode retention apply --resume r-1 --yes');
    expect(resumeCommand('r-1', opts, ctx).command).toBe('tsnode retention apply --resume r-1');
  });

  it('maps outcomes as sweep does: complete 0, partial 3, failed 1, interrupted 130', () => {
    expect(['complete', 'partial', 'failed', 'interrupted'].map((o) => retentionExitCode(o as never))).toEqual([0, 3, 1, 130]);
  });

  it('describes requests and what is kept in words', () => {
    expect(describeRequest({ before: 1, types: ['nnt', 'histogram', 'text'], nntRollups: [60] })).toBe('nnt spans 60; histogram every span; text');
    expect(describeRequest({ before: 1, types: ['nnt'] })).toBe('nnt every span (and the raw records)');
    expect(describeKept(plan.nodes[0]!.kept)).toBe('nnt spans 300 and the nnt raw records; all histogram (no rule)');
  });
});

describe('retention apply: the result table on a terminal', () => {
  it('wraps a long reason inside its cell so the table fits the width (issue 25)', () => {
    let state = newRun(plan, { runId: 'r-20261122T043258Z-aa', at: NOW_MS });
    state = markSending(state, A, 1, NOW_MS);
    const reason = 'unreachable: connect ECONNREFUSED 127.0.0.1:8112 (the node did not answer within 3 s; its sweep may or may not have started)';
    state = markOutcome(state, A, 1, 'failed', reason, NOW_MS + 1000);
    const wide = resultTable(state, false);
    expect(Math.max(...wide.split('\n').map((l) => l.length))).toBeGreaterThan(100);
    const fitted = resultTable(state, false, 80);
    const lines = fitted.trimEnd().split('\n');
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(80);
    // every word of the reason is still there, wrapped inside the last column
    const reasonText = lines.map((l) => l.split('│').at(-2)?.trim() ?? '').join(' ');
    for (const word of reason.split(' ')) expect(reasonText).toContain(word);
    expect(fitted).toContain(A);
  });
});
