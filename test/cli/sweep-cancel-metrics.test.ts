/**
 * `sweep cancel --metrics-file`: the outcome of a cancel on a real node with a sweep running, per
 * node state, checked by the real promtool; a refused cancel (nothing sent) writes its file too.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { runCli } from '../helpers/cli.js';
import { deadAddress, startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { promtoolCheck } from '../helpers/promtool.js';

const agent = new Agent();
const root = mkdtempSync(join(tmpdir(), 'tsnode-cancel-metrics-'));
const env = { XDG_STATE_HOME: join(root, 'state') };
let node: TestNode;

beforeAll(async () => {
  // Slow sweeps (a pause per metric), so one is still running when the cancel comes.
  node = await startNode({ memory: true, sweepPaceMs: 500 });
  const records: NntRecord[] = Array.from({ length: 40 }, (_, i) => ({
    metric: `m${i}`,
    id: '00000000-0000-4000-8000-000000000001',
    offset: 1_599_999_960,
    count: 1,
    value: i,
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

describe('sweep cancel --metrics-file', () => {
  it('writes each node state (cancelling, failed) and the outcome, accepted by promtool', async () => {
    const started = await runCli(['sweep', '--before', '1700000000', '--nodes', node.url, '--yes', '--no-wait'], { env });
    expect(started.code, started.stderr).toBe(0);
    const dead = await deadAddress();
    const prom = join(root, 'cancel.prom');
    const r = await runCli(['sweep', 'cancel', '--nodes', `${node.url},${dead}`, '--yes', '--metrics-file', prom, '--allow-partial'], { env, timeoutMs: 30_000 });
    expect(r.code, r.stderr).toBe(3);
    const text = readFileSync(prom, 'utf8');
    expect(promtoolCheck(text)).toEqual({ ok: true, output: '' });
    expect(text).toContain(`tsnode_node_state{command="sweep cancel",node="${node.url}",state="cancelling"} 1`);
    expect(text).toMatch(/tsnode_node_state\{command="sweep cancel",node="[^"]+",state="failed"\} 1/);
    expect(text).toContain('tsnode_last_run_exit_code{command="sweep cancel"} 3');
    expect(text).toContain('tsnode_last_run_outcome{command="sweep cancel",outcome="partial"} 1');
  }, 60_000);

  it('a refused cancel (no --yes off a terminal: exit 2, nothing sent) still writes its file', async () => {
    const prom = join(root, 'refused.prom');
    const r = await runCli(['sweep', 'cancel', '--nodes', node.url, '--metrics-file', prom], { env });
    expect(r.code).toBe(2);
    const text = readFileSync(prom, 'utf8');
    expect(promtoolCheck(text).ok).toBe(true);
    expect(text).toContain('tsnode_last_run_exit_code{command="sweep cancel"} 2');
    expect(text).toContain('tsnode_last_run_outcome{command="sweep cancel",outcome="refused"} 1');
    expect(text).not.toContain('tsnode_node_state');
  });

  it('a metrics file in a directory that does not exist is refused before anything is sent', async () => {
    const r = await runCli(['sweep', 'cancel', '--nodes', node.url, '--yes', '--metrics-file', join(root, 'nope', 'x.prom')], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--metrics-file');
  });
});
