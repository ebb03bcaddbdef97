/**
 * `tsnode retention verify` through the built CLI against real reference nodes (and a stub node
 * playing a store that lists no inventories: an older store, which a reference node is not).
 */
import { mkdtempSync, readFileSync, readdirSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { promtoolCheck } from '../helpers/promtool.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';

const stubs: StubNode[] = [];
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
});

async function oldStore(): Promise<StubNode> {
  const s = await startStubNode({
    answer: (req, res) => {
      if ((req.url ?? '').split('?')[0] !== '/state') return false;
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ identity: 'b1a2c3d4-0000-4000-8000-00000000000a', nnt: { rollups: [60, 300] } }));
      return true;
    },
  });
  stubs.push(s);
  return s;
}

describe('retention verify', () => {
  it('refuses without a policy (exit 2), sending nothing', async () => {
    const s = await oldStore();
    const r = await runCli(['retention', 'verify', '--nodes', s.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/no policy/);
    expect(s.requests).toEqual([]);
  });

  it('a store that lists no inventories cannot be verified: every check says why, exit 1, and nothing but GETs is sent', async () => {
    const s = await oldStore();
    const r = await runCli(['retention', 'verify', '--rule', 'nnt:60=30d', '--rule', 'text=90d', '--nodes', s.url, '-o', 'json']);
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { outcome: string; nodes: Array<{ node: string; checks: Array<Record<string, unknown>> }> };
    expect(doc.outcome).toBe('unverified');
    expect(doc.nodes[0]!.checks).toEqual([
      expect.objectContaining({ type: 'nnt', span: 60, verdict: 'cannot_verify', managed_by: 'sweep', reason: expect.stringMatching(/list_nntbs_shards answered 404/) }),
      expect.objectContaining({ type: 'text', span: null, verdict: 'cannot_verify', reason: expect.stringMatching(/no text shards/) }),
    ]);
    expect(doc.nodes[0]!.checks[0]).not.toHaveProperty('excess_seconds');
    expect(new Set(s.requests.map((q) => q.method))).toEqual(new Set(['GET']));
  });

  it('-o csv has one row per node, type and span with the fixed verdict words', async () => {
    const s = await oldStore();
    const r = await runCli(['retention', 'verify', '--rule', 'nnt:60=30d', '--nodes', s.url, '-o', 'csv']);
    const lines = r.stdout.trim().split('\n');
    expect(lines[0]).toMatch(/^node,managed_by,type,span,cutoff,oldest,/);
    expect(lines).toHaveLength(2);
    expect(lines[1]).toContain(',cannot_verify,');
  });
});

describe('retention verify --metrics-file', () => {
  it('writes the outcome and every check in a format the real promtool accepts, leaving no temp file', async () => {
    const s = await oldStore();
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-metrics-'));
    const file = join(dir, 'verify.prom');
    const r = await runCli(['retention', 'verify', '--rule', 'nnt:60=30d', '--nodes', s.url, '--metrics-file', file]);
    expect(r.code).toBe(1);
    const text = readFileSync(file, 'utf8');
    expect(promtoolCheck(text)).toEqual({ ok: true, output: '' });
    expect(text).toContain('tsnode_last_run_exit_code{command="retention_verify"} 1');
    expect(text).toContain('tsnode_last_run_outcome{command="retention_verify",outcome="unverified"} 1');
    expect(text).toContain(`tsnode_retention_verdict{command="retention_verify",node="${s.url}",type="nnt",span="60",verdict="cannot_verify"} 1`);
    expect(readdirSync(dir)).toEqual(['verify.prom']);
  });

  it('a refused run (exit 2) writes it too, as refused', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-metrics-'));
    const file = join(dir, 'verify.prom');
    const r = await runCli(['retention', 'verify', '--rule', 'nnt:60=30x', '--nodes', 'http://127.0.0.1:1', '--metrics-file', file]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/30x/);
    const text = readFileSync(file, 'utf8');
    expect(promtoolCheck(text).ok).toBe(true);
    expect(text).toContain('tsnode_last_run_exit_code{command="retention_verify"} 2');
    expect(text).toContain('outcome="refused"');
  });

  it('a metrics path in a directory that does not exist is refused before anything is sent', async () => {
    const s = await oldStore();
    const r = await runCli(['retention', 'verify', '--rule', 'nnt:60=30d', '--nodes', s.url, '--metrics-file', '/nonexistent-dir-tsnode/x.prom']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--metrics-file: .*does not exist/);
    expect(s.requests).toEqual([]);
  });
});
