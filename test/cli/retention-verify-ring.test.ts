/**
 * Issue 27's acceptance for verify on a real local ring (`cluster up`, three sweep-era reference
 * nodes holding old data): before `retention apply`, verify finds over-retention per node and
 * span (checked against the inventories read here directly); after an apply that leaves one node
 * out (--allow-partial, exit 3), the two applied nodes are compliant and the one left out stays
 * over_retained and is named; verifying a partial list names the ring nodes missing from it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { HistogramRecord, NntRecord } from '../../src/protocol/index.js';
import { runCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { killMentioning } from '../helpers/procs.js';
import { promtoolCheck } from '../helpers/promtool.js';

const agent = new Agent();
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent });
const DAY = 86_400;
const NOW_S = Math.floor(Date.now() / 1000);
const at = (days: number): number => Math.floor((NOW_S - days * DAY) / DAY) * DAY;
const uuid = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;
// Ages in days. The oldest must leave a whole shard of every span past the 1y cut-off on any day
// the test runs: the widest default shard (span 10800) is 190.5 days, so 365 + 191 < 600. (At 400
// days the test passed or failed with the date: on some days that point's shard straddled the
// cut-off, which an inventory cannot show as over-retained.)
const AGES = [10, 45, 600];
const POLICY = ['--rule', 'nnt:60=30d', '--rule', 'nnt:*=1y', '--rule', 'histogram:60=30d'];

const root = mkdtempSync(join(tmpdir(), 'tsnode-verify-ring-'));
const dir = join(root, 'cluster');
let urls: string[] = [];

interface Check {
  type: string;
  span: number | string | null;
  cutoff: number | null;
  oldest: number | null;
  verdict: string;
  reason: string;
  managed_by: string;
  excess_seconds?: number;
  shards_past_cutoff?: number;
}
interface Doc {
  outcome: string;
  coverage: { verdict: string; missing: Array<{ url: string }> } | null;
  nodes: Array<{ node: string; managed_by: string; checks: Check[] }>;
}

async function seed(url: string): Promise<void> {
  const nnt: NntRecord[] = [];
  const hist: HistogramRecord[] = [];
  for (let i = 0; i < 3; i++) {
    for (const d of AGES) {
      nnt.push({ metric: 'cpu', id: uuid(i), offset: at(d), count: 1, value: d, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 });
      hist.push({ metric: 'latency', id: uuid(i), offset: at(d), period: 60, histogram: 'AAA=' });
    }
  }
  await client(url).writeNnt(nnt);
  await client(url).writeHistogram(hist);
}

async function verify(nodes: string[]): Promise<{ code: number | null; doc: Doc; stderr: string }> {
  const r = await runCli(['retention', 'verify', ...POLICY, '--nodes', nodes.join(','), '-o', 'json'], { timeoutMs: 30_000 });
  return { code: r.code, doc: JSON.parse(r.stdout) as Doc, stderr: r.stderr };
}

beforeAll(async () => {
  const up = await runCli(['cluster', 'up', '--count', '3', '--base-port', '0', '--dir', dir, '--detach', '--no-replication', '-o', 'json'], { timeoutMs: 60_000 });
  expect(up.code, up.stderr).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
  for (const u of urls) await seed(u);
}, 90_000);

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
  await stopAllNodes();
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
  await agent.close();
});

describe('retention verify on a sweep-era ring', () => {
  it('before apply: over_retained per node and span, exactly the shards the inventories show past the cut-off; exit 3', async () => {
    const { code, doc, stderr } = await verify(urls);
    expect(code, stderr).toBe(3);
    expect(doc.outcome).toBe('not_compliant');
    expect(doc.coverage?.verdict).toBe('covered');
    for (const n of doc.nodes) {
      expect(n.managed_by).toBe('sweep');
      const shards = await client(n.node).nntShards();
      for (const span of [60, 300, 1800, 10800]) {
        const c = n.checks.find((x) => x.type === 'nnt' && x.span === span)!;
        expect(c.verdict, `${n.node} nnt ${span}`).toBe('over_retained');
        const past = shards.get(span)!.filter((s) => s.end <= c.cutoff!);
        expect(c.shards_past_cutoff).toBe(past.length);
        expect(c.oldest).toBe(Math.min(...shards.get(span)!.map((s) => s.start)));
        expect(c.excess_seconds).toBe(c.cutoff! - c.oldest!);
      }
      const h = n.checks.find((x) => x.type === 'histogram' && x.span === 60)!;
      expect(h.verdict).toBe('over_retained');
      expect(n.checks.find((x) => x.span === 'raw' && x.type === 'nnt')!.verdict).toBe('over_retained');
    }
  }, 60_000);

  it('a partial list names the ring nodes it misses and exits non-zero', async () => {
    const { code, doc, stderr } = await verify(urls.slice(0, 2));
    expect(code).toBe(3);
    expect(doc.coverage?.missing.map((m) => m.url)).toEqual([urls[2]]);
    expect(stderr).toContain(`not verified: 1 ring node(s) not in the list: ${urls[2]}`);
  }, 30_000);

  it('after apply on two nodes (--allow-partial): those are compliant, the one left out stays over_retained and is named; the receipt lists exactly the shards removed', async () => {
    const before = await Promise.all(urls.slice(0, 2).map((u) => client(u).nntShards()));
    const apply = await runCli(
      ['retention', 'apply', ...POLICY, '--nodes', urls.slice(0, 2).join(','), '--allow-partial', '--yes', '--poll-interval', '100ms', '--metrics-file', join(root, 'apply.prom')],
      {
        timeoutMs: 60_000,
        env: { XDG_STATE_HOME: join(root, 'state') },
      },
    );
    // The ring node left out is not swept: the run is partial (exit 3) and names it.
    expect(apply.code, apply.stderr).toBe(3);
    expect(apply.stderr).toContain(urls[2]);
    expect(apply.stderr).toMatch(/receipt: \d+ shard\(s\) removed on 2 node\(s\)/);
    const after = await Promise.all(urls.slice(0, 2).map((u) => client(u).nntShards()));
    const prom = readFileSync(join(root, 'apply.prom'), 'utf8');
    expect(promtoolCheck(prom)).toEqual({ ok: true, output: '' });
    expect(prom).toContain('tsnode_last_run_outcome{command="retention_apply",outcome="complete"} 1');
    expect(prom).toContain(`tsnode_step_state{command="retention_apply",node="${urls[0]}",step="1",state="done"} 1`);
    expect(prom).toMatch(new RegExp(`tsnode_shards_removed\\{command="retention_apply",node="${urls[0]}",type="nnt",span="60"\\} [1-9]`));
    const env = { XDG_STATE_HOME: join(root, 'state') };
    const list = JSON.parse((await runCli(['history', '-o', 'json'], { env })).stdout) as { runs: Array<{ run: string; kind: string; receipt_summary: string | null }> };
    const run = list.runs.find((r) => r.kind === 'retention')!;
    expect(run.receipt_summary).toMatch(/shard\(s\) removed/);
    const shown = await runCli(['history', 'show', run.run, '-o', 'json'], { env });
    expect(shown.code, shown.stderr).toBe(0);
    const receipt = (JSON.parse(shown.stdout) as { receipt: { nodes: Array<{ node: string; spans: Array<Record<string, unknown>> }> } }).receipt;
    expect(receipt.nodes.map((n) => n.node)).toEqual(urls.slice(0, 2));
    receipt.nodes.forEach((n, i) => {
      for (const span of [60, 300, 1800, 10800]) {
        const b = before[i]!.get(span) ?? [];
        const a = new Set((after[i]!.get(span) ?? []).map((x) => `${x.start}:${x.end}`));
        const removed = b.filter((x) => !a.has(`${x.start}:${x.end}`));
        expect(removed.length).toBeGreaterThan(0);
        const sp = n.spans.find((x) => x.type === 'nnt' && x.span === span)!;
        expect(sp).toMatchObject({
          shards_before: b.length,
          shards_after: after[i]!.get(span)!.length,
          shards_removed: removed.length,
          oldest_before: Math.min(...b.map((x) => x.start)),
        });
        for (const k of ['oldest_after', 'free_mb_before', 'free_mb_after']) expect(sp).toHaveProperty(k);
      }
    });
    const table = await runCli(['history', 'show', run.run], { env });
    expect(table.stdout).toMatch(/^receipt[^:]*: \d+ shard\(s\) removed/m);
    expect(table.stdout).toContain(urls[0]);
    const { code, doc } = await verify(urls);
    expect(code).toBe(3);
    for (const n of doc.nodes.slice(0, 2)) {
      for (const c of n.checks) expect(`${n.node} ${c.type} ${c.span} ${c.verdict}`).toBe(`${n.node} ${c.type} ${c.span} compliant`);
    }
    const left = doc.nodes[2]!;
    expect(left.node).toBe(urls[2]);
    expect(left.checks.find((c) => c.type === 'nnt' && c.span === 60)!.verdict).toBe('over_retained');
    const verifyTable = await runCli(['retention', 'verify', ...POLICY, '--nodes', urls.join(',')]);
    expect(verifyTable.stdout).toContain(urls[2]);
    expect(verifyTable.stdout).toMatch(/over_retained/);
  }, 90_000);
});
