/**
 * When a retention apply's receipt looks: each node's after-look comes once THAT node's last step
 * has ended, while a slower node still sweeps (not after every node has finished), and the receipt
 * stays exact: per span, the shards listed here before the run and gone after it. Two real nodes,
 * one sweeping instantly, one pacing its sweep so its steps take seconds.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { ShardRange } from '../../src/protocol/index.js';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const agent = new Agent();
const DAY = 86_400;
const ID = '00000000-0000-4000-8000-000000000001';
const NOW_S = Math.floor(Date.now() / 1000);
const at = (days: number): number => Math.floor((NOW_S - days * DAY) / DAY) * DAY;
const root = mkdtempSync(join(tmpdir(), 'tsnode-receipt-timing-'));
const env = { XDG_STATE_HOME: join(root, 'state'), TSNODE_CONFIG: join(root, 'none.yaml') };
/** The slow node walks its one series of each type this long per step. */
const SLOW_PACE_MS = 1_500;
let fast: TestNode;
let slow: TestNode;

/** Numeric data 400, 200, 100 and 10 days old, histograms 400 and 10 days old: several shards, the newest kept. */
async function seed(url: string): Promise<void> {
  const nnt = [400, 200, 100, 10].map((d) => ({
    metric: 'cpu',
    id: ID,
    offset: at(d),
    count: 1,
    value: d,
    derivative: 0,
    counter: 0,
    stddev: 0,
    derivative_stddev: 0,
    counter_stddev: 0,
  }));
  await new NodeClient(url, { dispatcher: agent }).writeNnt(nnt);
  const res = await fetch(`${url}/histogram/write`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([400, 10].map((d) => ({ metric: 'latency', id: ID, offset: at(d), period: 60, histogram: 'AAA=' }))),
  });
  expect(res.status).toBeLessThan(300);
}

/** The lists the run can change (nnt 60 and histogram 60), read here. */
async function inventory(url: string): Promise<{ nnt: ShardRange[]; histogram: ShardRange[] }> {
  const c = new NodeClient(url, { dispatcher: agent });
  return { nnt: (await c.nntShards()).get(60) ?? [], histogram: await c.startEndShards({ kind: 'histogram', period: 60 }) };
}

const gone = (before: ShardRange[], after: ShardRange[]): number => {
  const still = new Set(after.map((s) => `${s.start}:${s.end}`));
  return before.filter((s) => !still.has(`${s.start}:${s.end}`)).length;
};

beforeAll(async () => {
  [fast, slow] = await Promise.all([startNode({ memory: true, sweepPaceMs: 0 }), startNode({ memory: true, sweepPaceMs: SLOW_PACE_MS })]);
  await Promise.all([seed(fast.url), seed(slow.url)]);
}, 30_000);

afterAll(async () => {
  await stopAllNodes();
  await agent.close();
  rmSync(root, { recursive: true, force: true });
});

describe('receipt looks per node', () => {
  it('looks at a node after its own last step, while another node still runs; the receipt is exact', async () => {
    const urls = [fast.url, slow.url];
    const before = await Promise.all(urls.map(inventory));
    const r = await runCli(
      ['retention', 'apply', '--rule', 'nnt:60=30d', '--rule', 'histogram:60=1y', '--nodes', urls.join(','), '--yes', '-o', 'json', '--poll-interval', '50ms'],
      { env, timeoutMs: 60_000 },
    );
    expect(r.code, r.stderr).toBe(0);
    const after = await Promise.all(urls.map(inventory));
    const runId = (JSON.parse(r.stdout) as { run_id: string }).run_id;

    // The steps' times, from the journal.
    const lines = readFileSync(join(env.XDG_STATE_HOME, 'tsnode', 'sweeps.jsonl'), 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>)
      .filter((l) => l.run === runId);
    const steps = (node: string) => lines.filter((l) => l.kind === 'retention.step' && l.node === node);
    const firstSent = (node: string) => Math.min(...steps(node).map((s) => Date.parse(s.sentAt as string)));
    const lastEnd = (node: string) => Math.max(...steps(node).map((s) => Date.parse(s.finishedAt as string)));
    for (const u of urls) expect(steps(u).map((s) => s.state)).toEqual(['done', 'done']);

    const shown = await runCli(['history', 'show', runId, '-o', 'json'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    type Span = { type: string; span: number | string; shards_before: number; shards_after: number; shards_removed: number };
    const receipt = (JSON.parse(shown.stdout) as { receipt: { nodes: Array<{ node: string; before_at: string; after_at: string; spans: Span[] }> } }).receipt;
    const of = (u: string) => receipt.nodes.find((n) => n.node === u)!;
    expect(receipt.nodes.map((n) => n.node)).toEqual(urls);

    for (const u of urls) {
      expect(Date.parse(of(u).before_at)).toBeLessThanOrEqual(firstSent(u));
      expect(Date.parse(of(u).after_at)).toBeGreaterThanOrEqual(lastEnd(u));
    }
    // The fast node was looked at while the slow one was still at its steps (its pace alone keeps it busy for seconds).
    expect(lastEnd(slow.url) - lastEnd(fast.url)).toBeGreaterThan(SLOW_PACE_MS);
    expect(Date.parse(of(fast.url).after_at)).toBeLessThan(lastEnd(slow.url));

    urls.forEach((u, i) => {
      const spans = of(u).spans;
      const nnt = spans.find((s) => s.type === 'nnt' && s.span === 60);
      const hist = spans.find((s) => s.type === 'histogram' && s.span === 60);
      expect(nnt).toMatchObject({ shards_before: before[i]!.nnt.length, shards_after: after[i]!.nnt.length, shards_removed: gone(before[i]!.nnt, after[i]!.nnt) });
      expect(hist).toMatchObject({
        shards_before: before[i]!.histogram.length,
        shards_after: after[i]!.histogram.length,
        shards_removed: gone(before[i]!.histogram, after[i]!.histogram),
      });
      expect(nnt!.shards_removed).toBeGreaterThan(0);
      expect(hist!.shards_removed).toBeGreaterThan(0);
    });
  }, 60_000);
});
