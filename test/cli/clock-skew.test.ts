/**
 * Cut-offs are "now minus an age" from this host's clock: with that clock 20 days fast, a 30-day
 * rule would delete 10-day-old data. sweep (with an age) and retention apply compare it with the
 * nodes' (their answers' Date header) first and refuse, naming both times, when they differ by
 * more than --max-clock-skew.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { judgeClockSkew, leastSkewMs } from '../../src/client/clock-skew.js';
import { NodeClient } from '../../src/client/node-client.js';
import { SweepRefusedError } from '../../src/client/sweep-preflight.js';
import { runClusterSweep } from '../../src/run/sweep.js';
import { runInProcess } from '../helpers/in-process.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const DAY = 86_400_000;

describe('judgeClockSkew (pure)', () => {
  it('counts only the gap beyond the answer time and the Date header second', () => {
    // Date has whole seconds: a node read at 10.000 s may be at 10.999 s.
    expect(leastSkewMs({ sentMs: 10_500, receivedMs: 10_600, dateMs: 10_000 })).toBe(0);
    expect(leastSkewMs({ sentMs: 12_000, receivedMs: 12_100, dateMs: 10_000 })).toBe(1001);
    // a slow answer is no skew: the node may have stamped it at any moment in between
    expect(leastSkewMs({ sentMs: 0, receivedMs: 60_000, dateMs: 30_000 })).toBe(0);
    expect(leastSkewMs({ sentMs: 0, receivedMs: 100, dateMs: 5_100 })).toBe(-5_000);
  });

  it('skewed beyond the limit, worst first; unread nodes listed; unknown when none could be read', () => {
    const r = judgeClockSkew(
      [
        { node: 'a', sentMs: 0, receivedMs: 10, dateMs: 0 },
        { node: 'b', sentMs: 20 * DAY, receivedMs: 20 * DAY + 10, dateMs: 0 },
        { node: 'c', sentMs: 0, receivedMs: 10, dateMs: 10 * 60_000 },
        { node: 'd', sentMs: 0, receivedMs: 10, dateMs: null, error: 'refused' },
      ],
      5 * 60_000,
    );
    expect(r.verdict).toBe('skewed');
    expect(r.skewed.map((s) => s.node)).toEqual(['b', 'c']);
    expect(r.unread).toEqual([{ node: 'd', why: 'refused' }]);
    expect(judgeClockSkew([{ node: 'd', sentMs: 0, receivedMs: 1, dateMs: null }], 1000).verdict).toBe('unknown');
    expect(judgeClockSkew([{ node: 'a', sentMs: 0, receivedMs: 1, dateMs: 0 }], 1000).verdict).toBe('ok');
  });
});

describe('a host clock 20 days fast', () => {
  let node: TestNode;
  const env = { XDG_STATE_HOME: '/tmp/tsnode-clock-skew-state', TSNODE_NODES: undefined };
  const fast = (): number => Date.now() + 20 * DAY;
  beforeAll(async () => {
    node = await startNode({ memory: true });
  });
  afterAll(stopAllNodes);

  it('sweep --before 30d is refused, naming both times; nothing was sent', async () => {
    const r = await runInProcess(['sweep', '--nodes', node.url, '--before', '30d', '--yes'], { env, now: fast });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(
      /the local clock reads 20\d\d-\d\d-\d\dT[\d:]+Z while http:\/\/127\.0\.0\.1:\d+'s reads 20\d\d-\d\d-\d\dT[\d:]+Z: 20 days ahead of it, more than --max-clock-skew 5 min/,
    );
    expect(r.stderr).toMatch(/nothing was sent/);
    // the node never saw a sweep: its status has no last sweep
    expect(JSON.stringify(await (await fetch(`${node.url}/sweep_delete`)).json())).not.toMatch(/timestamp/);
  });

  it('sweep with an absolute --before does not depend on the clock; a raised limit lets an age through', async () => {
    const abs = await runInProcess(['sweep', '--nodes', node.url, '--before', '2020-01-01T00:00:00Z', '--yes', '-o', 'json'], { env, now: fast });
    expect(abs.stderr).not.toMatch(/local clock/);
    expect(abs.code).toBe(0);
    const raised = await runInProcess(['sweep', '--nodes', node.url, '--before', '30d', '--yes', '--max-clock-skew', '21d', '-o', 'json'], { env, now: fast });
    expect(raised.code).toBe(0);
  });

  it("the library's runClusterSweep refuses the same with clockSkew (the CLI's --max-clock-skew is this option)", async () => {
    const agent = new Agent();
    try {
      const clients = [new NodeClient(node.url, { dispatcher: agent })];
      const req = { before: Math.floor((fast() - 30 * DAY) / 1000), types: ['nnt' as const] };
      const status = async (): Promise<string> => JSON.stringify(await (await fetch(`${node.url}/sweep_delete`)).json());
      const before = await status();
      const err = await runClusterSweep(clients, req, { clockSkew: { maxSkewMs: 5 * 60_000, now: fast } }).catch((e: unknown) => e);
      expect(err).toBeInstanceOf(SweepRefusedError);
      expect((err as SweepRefusedError).problems.map((p) => p.message).join('\n')).toMatch(/20 days ahead of it, more than maxSkewMs 5 min/);
      // nothing was sent: the node's sweep status is as it was
      expect(await status()).toBe(before);
    } finally {
      await agent.close();
    }
  });

  it('retention apply is refused before planning; with the right clock it goes ahead', async () => {
    const r = await runInProcess(['retention', 'apply', '--nodes', node.url, '--rule', 'text=30d', '--yes'], { env, now: fast });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/the local clock reads .* while http:\/\/127\.0\.0\.1:\d+'s reads .*: 20 days ahead of it/);
    expect(r.stderr).toMatch(/refusing to apply: this host's clock and 1 node\(s\)' differ by more than --max-clock-skew 5 min: nothing was sent/);
    const ok = await runInProcess(['retention', 'apply', '--nodes', node.url, '--rule', 'text=30d', '--yes', '--fresh'], { env });
    expect(ok.stderr).not.toMatch(/local clock/);
    expect(ok.code).toBe(0);
  });
});
