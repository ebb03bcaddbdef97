/**
 * A retention apply's receipt looks only at what the run can change: through a recording proxy in
 * front of a real node, the requests of a run with its receipt minus those of the same run with
 * `--no-receipt` are exactly the inventories of the types its policy names (no histogram lists for
 * a numeric-only policy, only the histogram periods a policy names), one `/state` (the after-look:
 * the before-look reuses the preflight's), and no sweep-API probe. The receipt names only those spans.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';

const agent = new Agent();
const DAY = 86_400;
const ID = '00000000-0000-4000-8000-000000000001';
const root = mkdtempSync(join(tmpdir(), 'tsnode-receipt-scope-'));
const env = { XDG_STATE_HOME: join(root, 'state'), TSNODE_CONFIG: join(root, 'none.yaml') };
const FAST = ['--poll-interval', '50ms', '-o', 'json', '--yes', '--fresh'];
let node: TestNode;
let proxy: RecordingProxy;

/** Old numeric and histogram data (400 days back), rewritten before every run. */
async function seed(): Promise<void> {
  const offset = Math.floor((Date.now() / 1000 - 400 * DAY) / DAY) * DAY;
  const c = new NodeClient(node.url, { dispatcher: agent });
  await c.writeNnt([{ metric: 'cpu', id: ID, offset, count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 }]);
  const res = await fetch(`${node.url}/histogram/write`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify([60, 300].map((period) => ({ metric: 'latency', id: ID, offset, period, histogram: 'AAA=' }))),
  });
  expect(res.status).toBeLessThan(300);
}

/** GETs of one run, by path, without the sweep status polls (their number follows timing). */
async function getsOf(rules: string[], extra: string[] = []): Promise<{ gets: Map<string, number>; stdout: string }> {
  await seed();
  proxy.exchanges.length = 0;
  const r = await runCli(['retention', 'apply', ...rules, '--nodes', proxy.url, ...FAST, ...extra], { env, timeoutMs: 60_000 });
  expect(r.code, r.stderr).toBe(0);
  const gets = new Map<string, number>();
  for (const e of proxy.exchanges) if (e.method === 'GET' && !e.url.startsWith('/sweep_delete')) gets.set(e.url, (gets.get(e.url) ?? 0) + 1);
  return { gets, stdout: r.stdout };
}

/** What the receipt added: per path, the requests of the run with it minus those without it. */
async function receiptRequests(rules: string[]): Promise<Record<string, number>> {
  const on = (await getsOf(rules)).gets;
  const off = (await getsOf(rules, ['--no-receipt'])).gets;
  const out: Record<string, number> = {};
  for (const path of new Set([...on.keys(), ...off.keys()])) {
    const d = (on.get(path) ?? 0) - (off.get(path) ?? 0);
    if (d !== 0) out[path] = d;
  }
  return out;
}

async function receiptSpans(run: string): Promise<string[]> {
  const shown = await runCli(['history', 'show', run, '-o', 'json'], { env });
  expect(shown.code, shown.stderr).toBe(0);
  const doc = JSON.parse(shown.stdout) as { receipt: { nodes: Array<{ spans: Array<{ type: string; span: number | string }> }> } };
  return doc.receipt.nodes[0]!.spans.map((s) => `${s.type}:${s.span}`);
}

beforeAll(async () => {
  node = await startNode({ memory: true, histogramRollups: [60, 300] });
  proxy = await startRecordingProxy(node.url);
}, 30_000);

afterAll(async () => {
  await proxy.close();
  await stopAllNodes();
  await agent.close();
  rmSync(root, { recursive: true, force: true });
});

describe('a receipt looks only at what the run touches', () => {
  it('a numeric rule for one span: the nntbs list only (raw records stay), no histogram list, one /state, no sweep probe', async () => {
    expect(await receiptRequests(['--rule', 'nnt:60=30d'])).toEqual({
      '/list_nntbs_shards': 2,
      '/state': 1,
    });
  }, 60_000);

  it('a numeric rule for every span: the raw list too (raw records go with every span)', async () => {
    expect(await receiptRequests(['--rule', 'nnt:*=30d'])).toEqual({
      '/list_nntbs_shards': 2,
      '/raw/list_shards': 2,
      '/state': 1,
    });
  }, 60_000);

  it('a histogram rule: only the period it names, nothing numeric; the raw histograms only with the smallest period', async () => {
    expect(await receiptRequests(['--rule', 'histogram:300=30d'])).toEqual({
      '/histogram/300/list_shards': 2,
      '/state': 1,
    });
    expect(await receiptRequests(['--rule', 'histogram:60=30d'])).toEqual({
      '/histogram/60/list_shards': 2,
      '/histogram_raw/list_shards': 2,
      '/state': 1,
    });
  }, 60_000);

  it('the receipt names only the spans looked at', async () => {
    const { stdout } = await getsOf(['--rule', 'nnt:60=30d']);
    const spans = await receiptSpans((JSON.parse(stdout) as { run_id: string }).run_id);
    expect(spans.length).toBeGreaterThan(0);
    expect(spans.every((s) => s.startsWith('nnt:'))).toBe(true);
    expect(spans).toContain('nnt:60');
    expect(spans).not.toContain('nnt:raw');
  }, 60_000);
});
