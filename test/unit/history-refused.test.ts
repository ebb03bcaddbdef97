import { describe, expect, it } from 'vitest';
import { assembleRuns } from '../../src/cli/commands/history/runs.js';
import type { JournalEntry } from '../../src/run/records.js';

const refused = (run: string, command: string, extra: Record<string, unknown> = {}): JournalEntry => ({
  kind: 'run.refused',
  run,
  at: '2026-11-26T01:00:00.000Z',
  command,
  by: 'op@host',
  codes: ['unreachable'],
  reason: 'refused (unreachable): http://b:1 gave no status: connection refused',
  problems: ['http://b:1 gave no status: connection refused'],
  nodes: ['http://a:1', 'http://b:1'],
  nodeSource: '--nodes a,b',
  ...extra,
});

describe('history over run.refused records', () => {
  it('a refused retention run is refused with no node left and no catch-up, and the runs after it still settle', () => {
    const runs = assembleRuns([
      refused('r-1', 'retention apply', { policySource: 'p.yaml', fingerprint: 'fp' }),
      { kind: 'retention.start', run: 'r-2', at: '2026-11-26T02:00:00.000Z', attempt: 1, fingerprint: 'fp2', nodes: ['http://a:1', 'http://c:1'], steps: [] },
      {
        kind: 'retention.end',
        run: 'r-2',
        at: '2026-11-26T02:01:00.000Z',
        attempt: 1,
        outcome: 'complete',
        exit: 3,
        nodes: [
          { node: 'http://a:1', done: 1, steps: 1, stoppedAt: null },
          { node: 'http://c:1', done: 0, steps: 1, stoppedAt: { step: 1, state: 'not_swept', reason: 'ring node c not in the node list (--allow-partial)' } },
        ],
        catchUp: { nodes: ['http://c:1'], command: 'tsnode retention apply --rule nnt:60=30d --nodes http://c:1 --allow-partial', addBack: [] },
      },
    ]);
    expect(runs[0]).toMatchObject({ kind: 'retention', exit: 2, refused: { codes: ['unreachable'], runAgain: null }, pending: [], catchUp: null });
    expect(runs[0]!.nodes.map((n) => n.state)).toEqual(['refused', 'refused']);
    // (a refused run must not stop the settling of the runs after it)
    expect(runs[1]).toMatchObject({ pending: ['http://c:1'], catchUp: { nodes: ['http://c:1'] } });
  });

  it('a refused sweep carries what it would have deleted and a run-again command, no node left; a refused cancel is a cancel', () => {
    const sweep = {
      by: 'op@host',
      before: 1700000000,
      types: ['nnt'],
      nntRollups: 'all',
      histogramRollups: null,
      headerPrefix: 'X-Service',
      nodeSource: '--nodes a,b',
      carry: [],
      addBack: [],
    };
    const runs = assembleRuns([refused('s1', 'sweep', { sweep }), refused('c1', 'sweep cancel')]);
    expect(runs[0]).toMatchObject({ kind: 'sweep', before: 1700000000, pending: [], catchUp: null });
    expect(runs[0]!.refused?.runAgain?.command).toBe('tsnode sweep --before 1700000000 --types nnt --nodes http://a:1,http://b:1');
    expect(runs[1]).toMatchObject({ kind: 'cancel', pending: [], catchUp: null, refused: { codes: ['unreachable'], runAgain: null } });
  });

  it('offers no run-again command where the same run would only be refused again (coverage, spans, identity)', () => {
    const sweep = { before: 1700000000, types: ['nnt'], nntRollups: 'all', histogramRollups: null, headerPrefix: 'X-Service', carry: [], addBack: [] };
    for (const codes of [['coverage'], ['spans'], ['identity'], ['unreachable', 'coverage']]) {
      const [run] = assembleRuns([refused('s1', 'sweep', { sweep, codes })]);
      expect(run).toMatchObject({ pending: [], catchUp: null, refused: { codes, runAgain: null } });
    }
  });
});
