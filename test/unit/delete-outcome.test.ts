/**
 * The delete run's outcome rules (src/run/delete-outcome.ts): what a receipt says about each metric
 * when nothing proves it gone, the states of an interrupted run, the exit codes, the catch-up.
 */
import { describe, expect, it } from 'vitest';
import type { NodeDeletion, NodeLook } from '../../src/client/tag-delete.js';
import { DEFAULT_BATCH } from '../../src/cli/commands/delete/options.js';
import { DEFAULT_TAG_ADVISORY_LIMIT } from '../../src/protocol/index.js';
import { deleteCatchUp, deleteExitCode, judgeNodes, type DeleteSpec, type NodeOutcome } from '../../src/run/delete-outcome.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const N1 = 'http://n1:8112';
const N2 = 'http://n2:8112';
const spec: DeleteSpec = {
  requests: [{ query: 'and(host:web1)', account: 1, scope: { kind: 'full' } }],
  metric: null,
  query: 'and(host:web1)',
  account: 1,
  batch: 10_000,
  maxRounds: 1000,
  listLimit: 100_000,
  concurrency: 32,
};
const look = (node: string, names: string[], extra: Partial<NodeLook> = {}): NodeLook => ({
  node,
  metrics: names.map((metric) => ({ uuid: U, metric, status: 'found' as const, result: 'found' })),
  incomplete: false,
  ...extra,
});
const loop = (node: string, names: string[], end: NodeDeletion['end'] = 'complete', error?: string): NodeDeletion => ({
  node,
  deleted: names.map((metric) => ({ uuid: U, metric })),
  rounds: Math.max(1, names.length),
  end,
  other: [],
  ...(error ? { error } : {}),
});
const afters = (o: NodeOutcome): string[] => o.metrics.map((m) => `${m.metric_name}:${m.after}`);

describe('judgeNodes', () => {
  it('a node killed between batches: partial, and its receipt says deleted (said, unproven) and unknown, never gone', () => {
    const [o] = judgeNodes([N1], spec, {
      before: [[look(N1, ['a', 'b', 'c'])]],
      skipped: [],
      deletions: [[loop(N1, ['a'], 'failed', 'connection refused')]],
      after: [[look(N1, [], { error: 'connection refused' })]],
    });
    expect(o!.state).toBe('partial');
    expect(afters(o!)).toEqual(['a:deleted', 'b:unknown', 'c:unknown']);
    expect(o!.reason).toMatch(/failed: connection refused; unconfirmed: the after-look failed/);
  });

  it('an interrupted run makes no after-look: the node interrupted mid-loop, a finished one unconfirmed; exit 130', () => {
    const out = judgeNodes([N1, N2], spec, {
      before: [[look(N1, ['a', 'b']), look(N2, ['a'])]],
      skipped: [],
      deletions: [[loop(N1, ['a'], 'interrupted'), loop(N2, ['a'])]],
      after: undefined,
    });
    expect(out.map((o) => o.state)).toEqual(['interrupted', 'unconfirmed']);
    expect(out[0]!.reason).toBe('interrupted after 1 deleted of 2 found; not looked at again');
    expect(afters(out[0]!)).toEqual(['a:deleted', 'b:unknown']);
    expect(deleteExitCode(out, true)).toBe(130);
  });

  it('a metric the after-look lists again with data reappeared: partial', () => {
    const [o] = judgeNodes([N1], spec, { before: [[look(N1, ['a', 'b'])]], skipped: [], deletions: [[loop(N1, ['a', 'b'])]], after: [[look(N1, ['b'])]] });
    expect(o!.state).toBe('partial');
    expect(afters(o!)).toEqual(['a:gone', 'b:reappeared']);
  });
});

describe('deleteExitCode', () => {
  const o = (state: NodeOutcome['state']): NodeOutcome => ({ node: N1, state, reason: '', found: 0, deleted: 0, rounds: 0, gone: 0, reappeared: [], remaining: [], metrics: [] });
  it.each([
    [['deleted', 'nothing'], 0],
    [['nothing', 'nothing'], 0],
    [['deleted', 'failed'], 3],
    [['deleted', 'skipped'], 3],
    [['partial'], 3],
    [['nothing', 'failed'], 1],
    [['unconfirmed'], 1],
  ] as const)('%j -> %i', (states, code) => {
    expect(deleteExitCode(states.map(o), false)).toBe(code);
  });
});

describe('deleteCatchUp', () => {
  it('names the nodes left, the resolved scope, the batch when not the default, --allow-partial on a ring, and the carried flags', () => {
    const timed: DeleteSpec = {
      ...spec,
      batch: 2,
      account: 7,
      requests: ['nnt', 'text'].map((type) => ({ query: spec.query, account: 7, scope: { kind: 'before' as const, type: type as 'nnt' | 'text', before: 1_700_000_000 } })),
    };
    const c = deleteCatchUp(timed, [N2], 3, { hash: 'abc', allowed: false }, { carry: ['--journal', '/tmp/j.jsonl', '--yes'], addBack: ['--header (1 given; values not shown)'] });
    expect(c?.command).toBe(`tsnode delete 'and(host:web1)' --before 1700000000 --types nnt,text --account 7 --batch 2 --nodes ${N2} --allow-partial --journal /tmp/j.jsonl --yes`);
    expect(c?.addBack).toEqual(['--header (1 given; values not shown)']);
    expect(deleteCatchUp(spec, [N2], 3, { hash: null, allowed: false })?.command).toBe(`tsnode delete 'and(host:web1)' --full --nodes ${N2}`);
    expect(deleteCatchUp(spec, [], 3, null)).toBeUndefined();
  });

  it("--batch's default is the store's default advisory limit, which a catch-up leaves out", () => {
    expect(DEFAULT_BATCH).toBe(DEFAULT_TAG_ADVISORY_LIMIT);
  });
});
