/**
 * A mixed local ring (issue 27): two sweep-era reference nodes and one node-managed node
 * (`--no-sweep-api --retention nnt:60=30d`). `retention plan` says which is which; `apply` sends
 * the node-managed node nothing (state `node_managed`) and verifies it instead; a policy that keeps
 * 60 s data longer than that node's config is dangerous `drift`, and both verify and apply exit 3.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { runCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { killMentioning } from '../helpers/procs.js';

const agent = new Agent();
const DAY = 86_400;
const NOW_S = Math.floor(Date.now() / 1000);
const at = (days: number): number => Math.floor((NOW_S - days * DAY) / DAY) * DAY;
const root = mkdtempSync(join(tmpdir(), 'tsnode-node-managed-'));
const dir = join(root, 'cluster');
const env = { XDG_STATE_HOME: join(root, 'state') };
let urls: string[] = [];
let list = '';

interface Check {
  type: string;
  span: number | string | null;
  verdict: string;
  reason: string;
  dangerous?: boolean;
}

async function verify(rule: string): Promise<{ code: number | null; nodes: Array<{ node: string; managed_by: string; checks: Check[] }> }> {
  const r = await runCli(['retention', 'verify', '--rule', rule, '--nodes', list, '-o', 'json'], { timeoutMs: 30_000 });
  return { code: r.code, nodes: (JSON.parse(r.stdout) as { nodes: Array<{ node: string; managed_by: string; checks: Check[] }> }).nodes };
}

beforeAll(async () => {
  const up = await runCli(
    [
      'cluster',
      'up',
      '--count',
      '3',
      '--base-port',
      '0',
      '--dir',
      dir,
      '--detach',
      '--no-replication',
      '-o',
      'json',
      '--node-flags',
      '3:--no-sweep-api --retention nnt:60=30d --retention-interval 1s',
    ],
    { timeoutMs: 60_000 },
  );
  expect(up.code, up.stderr).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
  list = urls.join(',');
  const records: NntRecord[] = [5, 45].map((d) => ({
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
  for (const u of urls) await new NodeClient(u, { dispatcher: agent }).writeNnt(records);
}, 90_000);

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
  await stopAllNodes();
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
  await agent.close();
});

describe('a ring of sweep-era and node-managed nodes', () => {
  it('retention plan says which nodes sweep and which manage their own retention', async () => {
    const r = await runCli(['retention', 'plan', '--rule', 'nnt:60=30d', '--nodes', list, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { nodes: Array<{ node: string; retention: string }> };
    expect(doc.nodes.map((n) => n.retention)).toEqual(['sweep', 'sweep', 'node']);
    expect(r.stderr).toContain(`${urls[2]}: no sweep API`);
  }, 30_000);

  it('apply sends the node-managed node nothing, verifies it, and every node is compliant afterwards', async () => {
    // The node-managed node removes its 45-day shard by itself within a second or two.
    const deadline = Date.now() + 20_000;
    let managed: Check | undefined;
    while (Date.now() < deadline) {
      managed = (await verify('nnt:60=30d')).nodes[2]!.checks.find((c) => c.type === 'nnt' && c.span === 60);
      if (managed?.verdict === 'compliant') break;
      await new Promise((r) => setTimeout(r, 500));
    }
    expect(managed?.verdict, managed?.reason).toBe('compliant');
    const before = await verify('nnt:60=30d');
    expect(before.code).toBe(3);
    expect(before.nodes.slice(0, 2).map((n) => n.checks.find((c) => c.span === 60)!.verdict)).toEqual(['over_retained', 'over_retained']);

    const apply = await runCli(['retention', 'apply', '--rule', 'nnt:60=30d', '--nodes', list, '--yes', '--poll-interval', '100ms', '-o', 'json'], { env, timeoutMs: 60_000 });
    expect(apply.code, apply.stderr).toBe(0);
    const doc = JSON.parse(apply.stdout) as { nodes: Array<{ node: string }>; node_managed: Array<{ node: string; state: string; checks: Check[] }> };
    expect(doc.nodes.map((n) => n.node)).toEqual(urls.slice(0, 2));
    expect(doc.node_managed.map((n) => [n.node, n.state])).toEqual([[urls[2], 'node_managed']]);
    expect(doc.node_managed[0]!.checks.every((c) => c.verdict === 'compliant')).toBe(true);
    const after = await verify('nnt:60=30d');
    expect(after.code).toBe(0);
  }, 90_000);

  it('a node whose config keeps 60 s data shorter than the policy is dangerous drift: verify and apply exit 3', async () => {
    const v = await verify('nnt:60=90d');
    expect(v.code).toBe(3);
    const c = v.nodes[2]!.checks.find((x) => x.type === 'nnt' && x.span === 60)!;
    expect(c).toMatchObject({ verdict: 'drift', dangerous: true });
    expect(c.reason).toMatch(/30d is shorter than the policy's 90d/);
    const apply = await runCli(['retention', 'apply', '--rule', 'nnt:60=90d', '--nodes', list, '--yes', '--poll-interval', '100ms'], { env, timeoutMs: 60_000 });
    expect(apply.code, apply.stderr).toBe(3);
    expect(apply.stderr).toMatch(new RegExp(`${urls[2]}: node_managed \\(nothing sent\\): nnt 60 drift \\(DANGEROUS\\)`));
  }, 90_000);
});
