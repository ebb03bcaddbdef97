/**
 * A sweep's receipt and metrics file on a real reference node: the shards it removed (compared
 * with the inventories read here before and after), journaled and shown by `history show`, and a
 * metrics file the real promtool accepts. A sweep that does not wait makes no receipt.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { promtoolCheck } from '../helpers/promtool.js';

const agent = new Agent();
const DAY = 86_400;
const NOW_S = Math.floor(Date.now() / 1000);
const at = (days: number): number => Math.floor((NOW_S - days * DAY) / DAY) * DAY;
const root = mkdtempSync(join(tmpdir(), 'tsnode-sweep-receipt-'));
const env = { XDG_STATE_HOME: join(root, 'state') };
let node: TestNode;

beforeAll(async () => {
  node = await startNode({ memory: true });
  const records: NntRecord[] = [10, 40, 50, 60].map((d) => ({
    metric: 'cpu',
    id: '00000000-0000-4000-8000-000000000001',
    offset: at(d),
    count: 1,
    value: d,
    derivative: 0,
    counter: 0,
    stddev: 0,
    derivative_stddev: 0,
    counter_stddev: 0,
  }));
  await new NodeClient(node.url, { dispatcher: agent }).writeNnt(records);
}, 30_000);

afterAll(async () => {
  await stopAllNodes();
  await agent.close();
  rmSync(root, { recursive: true, force: true });
});

describe('sweep receipts', () => {
  it('journals exactly the shards removed, shown by history show, with a valid metrics file', async () => {
    const c = new NodeClient(node.url, { dispatcher: agent });
    const before = await c.nntShards();
    const prom = join(root, 'sweep.prom');
    const r = await runCli(['sweep', '--before', '30d', '--nodes', node.url, '--yes', '--poll-interval', '100ms', '--metrics-file', prom], { env, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(0);
    const after = await c.nntShards();
    const m = /receipt: (\d+) shard\(s\) removed on 1 node\(s\).*\(tsnode history show ([0-9a-f]+)\)/.exec(r.stderr);
    expect(m, r.stderr).not.toBeNull();
    const shown = await runCli(['history', 'show', m![2]!, '-o', 'json'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    const spans = (JSON.parse(shown.stdout) as { receipt: { nodes: Array<{ node: string; spans: Array<Record<string, unknown>> }> } }).receipt.nodes[0]!.spans;
    let total = 0;
    for (const [period, list] of before) {
      const still = new Set((after.get(period) ?? []).map((s) => `${s.start}:${s.end}`));
      const removed = list.filter((s) => !still.has(`${s.start}:${s.end}`)).length;
      total += removed;
      expect(spans.find((s) => s.type === 'nnt' && s.span === period)).toMatchObject({ shards_before: list.length, shards_removed: removed });
    }
    expect(before.get(60)!.length - after.get(60)!.length).toBeGreaterThan(0);
    const nntTotal = spans.filter((s) => s.type === 'nnt' && typeof s.span === 'number').reduce((n, s) => n + (s.shards_removed as number), 0);
    expect(nntTotal).toBe(total);
    const text = readFileSync(prom, 'utf8');
    expect(promtoolCheck(text)).toEqual({ ok: true, output: '' });
    expect(text).toContain(`tsnode_node_state{command="sweep",node="${node.url}",state="done"} 1`);
    expect(text).toContain(`tsnode_shards_removed{command="sweep",node="${node.url}",type="nnt",span="60"}`);
    const list = await runCli(['history'], { env });
    expect(list.stdout).toMatch(/shard\(s\) removed/);
  }, 60_000);

  it('a refused sweep (exit 2) still writes its metrics file', async () => {
    const prom = join(root, 'refused.prom');
    const r = await runCli(['sweep', '--before', '30d', '--nodes', node.url, '--metrics-file', prom], { env });
    expect(r.code).toBe(2);
    const text = readFileSync(prom, 'utf8');
    expect(promtoolCheck(text).ok).toBe(true);
    expect(text).toContain('tsnode_last_run_exit_code{command="sweep"} 2');
    expect(text).toContain('tsnode_last_run_outcome{command="sweep",outcome="refused"} 1');
  });
});
