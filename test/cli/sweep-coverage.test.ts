/**
 * Issue 15's coverage check on a real five-node ring (`tsnode cluster up --write-copies 2`): a
 * sweep, a sweep cancel or a retention run given four of the five nodes is refused naming the
 * fifth, with nothing sent; --allow-partial goes ahead and lists the missing node in the result
 * and the journal; one node under two URLs (same identity) is refused; --seed covers the ring.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { SweepStatus } from '../../src/protocol/index.js';
import { topologyFromJson, type Topology } from '../../src/ring/index.js';
import { runCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { killMentioning } from '../helpers/procs.js';
import { startRecordingProxy } from '../helpers/recording-proxy.js';

const agent = new Agent();
const status = (url: string): Promise<SweepStatus> => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } }).sweepStatus();

const root = mkdtempSync(join(tmpdir(), 'tsnode-coverage-test-'));
const dir = join(root, 'ring');
const env = { XDG_STATE_HOME: join(root, 'state'), HOME: root };
const JOURNAL = join(root, 'state', 'tsnode', 'sweeps.jsonl');
const BEFORE = String(Math.floor(Date.now() / 1000) - 400 * 86_400);
let urls: string[];
let topology: Topology;

beforeAll(async () => {
  const up = await runCli(['cluster', 'up', '--count', '5', '--write-copies', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json'], { timeoutMs: 60_000 });
  expect(up.code, up.stderr).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
  topology = topologyFromJson(JSON.parse(readFileSync(join(dir, 'topology.json'), 'utf8')));
}, 90_000);

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
  await stopAllNodes();
  await agent.close();
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

/** Whether a node has ever been swept (the reference node keeps a record of its last sweep). */
const swept = async (url: string): Promise<boolean> => (await status(url)).nnt.last !== undefined;

describe('a node list that misses a ring node', () => {
  it('sweep with four of five nodes is refused naming the fifth (exit 2, nothing sent)', async () => {
    const fifth = topology.nodes[4]!;
    const r = await runCli(['sweep', '--before', BEFORE, '--nodes', urls.slice(0, 4).join(','), '--yes'], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`1 of 5 ring nodes are not in the list: ${fifth.id} (${urls[4]})`);
    expect(r.stderr).toContain('refusing to sweep: nothing was sent');
    expect(r.stderr).toMatch(/hint: .*--allow-partial to sweep the listed nodes anyway/);
    for (const u of urls) expect(await swept(u)).toBe(false);
  });

  it('sweep cancel and retention apply with four of five are refused the same way', async () => {
    const cancel = await runCli(['sweep', 'cancel', '--nodes', urls.slice(1).join(','), '--yes'], { env });
    expect(cancel.code).toBe(2);
    expect(cancel.stderr).toContain(`1 of 5 ring nodes are not in the list: ${topology.nodes[0]!.id} (${urls[0]})`);
    expect(cancel.stderr).toContain('refusing to cancel: nothing was sent');
    const apply = await runCli(['retention', 'apply', '--rule', 'nnt:60=300d', '--nodes', urls.slice(0, 4).join(','), '--yes'], { env });
    expect(apply.code).toBe(2);
    expect(apply.stderr).toContain(`1 of 5 ring nodes are not in the list: ${topology.nodes[4]!.id} (${urls[4]})`);
    expect(apply.stderr).toContain('refusing to apply the retention policy: nothing was sent');
    for (const u of urls) expect(await swept(u)).toBe(false);
    // each refusal leaves its trace, with the reason
    const refused = readFileSync(JOURNAL, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.kind === 'run.refused');
    expect(refused.slice(-2).map((l) => [l.command, l.codes])).toEqual([
      ['sweep cancel', ['coverage']],
      ['retention apply', ['coverage']],
    ]);
  });

  it('--allow-partial goes ahead on the listed nodes, never calls the missing one finished: exit 3, listed, left, in the catch-up', async () => {
    const fifth = topology.nodes[4]!;
    const r = await runCli(['sweep', '--before', BEFORE, '--nodes', urls.slice(0, 4).join(','), '--yes', '--allow-partial', '--output', 'json', '--poll-interval', '100ms'], {
      env,
    });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`summary: 4 done (4 of 5 ring nodes; not swept: ${fifth.id} (${urls[4]}))`);
    expect(r.stderr).toMatch(new RegExp(`to catch up \\(1 node\\(s\\) not done\\): tsnode sweep .*--nodes ${urls[4]!.replace(/[.]/g, '\\.')} --allow-partial`));
    const doc = JSON.parse(r.stdout);
    expect(doc.summary.done).toBe(4);
    expect(doc.exit_code).toBe(3);
    expect(doc.catch_up.nodes).toEqual([urls[4]]);
    expect(doc.coverage).toMatchObject({ verdict: 'missing', missing: [{ id: fifth.id, url: urls[4] }], allowed_partial: true });
    expect(r.stderr).toMatch(/warning: 1 of 5 ring nodes are not in the list: .* \(going ahead: --allow-partial\)/);
    for (const u of urls.slice(0, 4)) expect(await swept(u)).toBe(true);
    expect(await swept(urls[4]!)).toBe(false);
    const lines = readFileSync(JOURNAL, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    const end = lines.filter((l) => l.kind === 'sweep.end').at(-1);
    expect(end.coverage).toMatchObject({ verdict: 'missing', missing: [{ id: fifth.id, url: urls[4] }], allowed: true });
    expect(end.exit).toBe(3);
    expect(end.nodes.find((n: { node: string }) => n.node === urls[4])).toMatchObject({ state: 'not_swept' });
    const h = await runCli(['history', '-o', 'json'], { env });
    const run = (JSON.parse(h.stdout) as { runs: Array<{ run: string; pending: string[] }> }).runs.find((x) => x.run === end.run)!;
    expect(run.pending).toEqual([urls[4]]);

    // the table says it under the result
    const t = await runCli(['sweep', '--before', BEFORE, '--nodes', urls.slice(0, 4).join(','), '--yes', '--allow-partial', '--poll-interval', '100ms'], { env });
    expect(t.code).toBe(3);
    expect(t.stdout).toContain(`ring nodes not in the list, not swept (--allow-partial): ${fifth.id} (${urls[4]})`);
  });

  it('retention apply --allow-partial: "4 of 5 ring nodes", the fifth listed as not swept, exit 3, left in history, named by a catch-up', async () => {
    const fifth = topology.nodes[4]!;
    const r = await runCli(['retention', 'apply', '--rule', 'nnt:60=300d', '--nodes', urls.slice(0, 4).join(','), '--yes', '--allow-partial', '--poll-interval', '100ms'], { env });
    expect(r.code, r.stderr).toBe(3);
    expect(r.stderr).toContain(`summary: 4 of 5 ring nodes finished every step; not swept (not in the node list): ${fifth.id} (${urls[4]})`);
    expect(r.stdout).toContain(`ring nodes not in the list, not swept (--allow-partial): ${fifth.id} (${urls[4]})`);
    expect(r.stderr).toContain(`to apply the policy on the 1 ring node(s) not swept: tsnode retention apply --rule nnt:60=300d --nodes ${urls[4]} --allow-partial --yes`);
    expect(await swept(urls[4]!)).toBe(false);
    const end = readFileSync(JOURNAL, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.kind === 'retention.end')
      .at(-1);
    expect(end).toMatchObject({ outcome: 'complete', exit: 3, catchUp: { nodes: [urls[4]] } });
    const h = await runCli(['history', '-o', 'json'], { env });
    const run = (JSON.parse(h.stdout) as { runs: Array<{ run: string; pending: string[] }> }).runs.find((x) => x.run === end.run)!;
    expect(run.pending).toEqual([urls[4]]);

    // The catch-up runs as printed (no terminal: --yes carried) and sweeps the node left out.
    const printed = /not swept: (tsnode retention apply .*)$/m.exec(r.stderr)![1]!;
    const caught = await runCli([...printed.replace(/^tsnode /, '').split(' '), '-o', 'json', '--poll-interval', '100ms'], { env });
    expect(caught.stderr).not.toContain('not on a terminal');
    expect((JSON.parse(caught.stdout) as { nodes: Array<{ node: string; finished: boolean }> }).nodes).toEqual([expect.objectContaining({ node: urls[4], finished: true })]);
    expect(await swept(urls[4]!)).toBe(true);
  });

  it('--seed lists the whole ring: covered', async () => {
    const r = await runCli(['sweep', '--before', BEFORE, '--seed', urls[2]!, '--yes', '--output', 'json', '--poll-interval', '100ms'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).coverage).toMatchObject({ verdict: 'covered', missing: [] });
    expect(r.stderr).toMatch(/coverage: every node of ring [0-9a-f]{12} is listed/);
    const plan = await runCli(['retention', 'plan', '--rule', 'nnt:60=30d', '--seed', urls[2]!, '-o', 'json'], { env });
    expect(plan.code, plan.stderr).toBe(0);
    expect(JSON.parse(plan.stdout)).toMatchObject({ node_source: `--seed ${urls[2]}`, coverage: { verdict: 'covered' } });
    expect(JSON.parse(plan.stdout).nodes).toHaveLength(5);
  });

  it('one node under two URLs (the same identity) is refused, always', async () => {
    const proxy = await startRecordingProxy(urls[0]!);
    try {
      const r = await runCli(['sweep', '--before', BEFORE, '--nodes', `${urls.join(',')},${proxy.url}`, '--yes', '--allow-partial'], { env });
      expect(r.code).toBe(2);
      expect(r.stderr).toContain(`${urls[0]} and ${proxy.url} answer as the same node (identity ${topology.nodes[0]!.id})`);
      expect(proxy.exchanges.filter((e) => e.method === 'DELETE')).toEqual([]);
    } finally {
      await proxy.close();
    }
  });
});
