/**
 * `tsnode delete` against real nodes: the dry run deletes nothing, a confirmed delete removes
 * exactly the selected metrics on every node in batches and proves them gone, --before keeps newer
 * data, a node down leaves a partial receipt and a catch-up that completes it when run as printed,
 * and a bad query or a missing --yes sends nothing.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { printedArgs, runCli } from '../helpers/cli.js';
import { startNodes, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startRecordingNode } from '../helpers/recording-node.js';
import { call, UUID, write } from '../integration/server-helpers.js';

const T0 = 1_700_000_040;
let nodes: TestNode[];
let list: string;
let journal: string;

const rec = (metric: string, offset = T0) => ({ metric, id: UUID, offset, count: 1, value: 1 });
const WEB1 = ['cpu|ST[host:web1]', 'mem|ST[host:web1]', 'disk|ST[host:web1]'];

/** What a node itself holds for a query (the no-proxy header: its own data only). */
async function own(n: TestNode, query: string): Promise<string[]> {
  const r = await call(n.url, 'GET', `/find/1/tags?query=${encodeURIComponent(query)}`, { headers: { 'x-snowth-proxied': '1' } });
  return (r.json as Array<{ metric_name: string }>).map((m) => m.metric_name).sort();
}

afterAll(stopAllNodes);

describe('tsnode delete', () => {
  beforeEach(async () => {
    nodes = await startNodes(3);
    for (const n of nodes) await write(n.url, [...WEB1.map((m) => rec(m)), rec('cpu|ST[host:web2]'), ...WEB1.map((m) => rec(m, T0 + 600))]);
    list = nodes.map((n) => n.url).join(',');
    journal = join(mkdtempSync(join(tmpdir(), 'tsnode-delete-')), 'journal.jsonl');
  }, 30_000);
  afterEach(stopAllNodes);
  it('--dry-run shows each metric on each node and deletes nothing', async () => {
    const r = await runCli(['delete', 'and(host:web1)', '--full', '--dry-run', '--nodes', list, '-o', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.metrics.map((m: { metric_name: string }) => m.metric_name).sort()).toEqual([...WEB1].sort());
    expect(out.nodes.map((n: { found: number }) => n.found)).toEqual([3, 3, 3]);
    for (const n of nodes) expect(await own(n, 'and(host:web1)')).toEqual([...WEB1].sort());
  });

  it('removes exactly the selected metrics on every node, in batches, proves them gone, and keeps a receipt', async () => {
    const r = await runCli(['delete', 'and(host:web1)', '--full', '--batch', '1', '--yes', '--nodes', list, '--journal', journal, '-o', 'json']);
    expect(r.stderr).toContain('round 3: 3 deleted');
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.nodes.map((n: { state: string; deleted: number; rounds: number; gone: number }) => [n.state, n.deleted, n.rounds, n.gone])).toEqual([
      ['deleted', 3, 3, 3],
      ['deleted', 3, 3, 3],
      ['deleted', 3, 3, 3],
    ]);
    for (const n of nodes) {
      expect(await own(n, 'and(host:web1)')).toEqual([]);
      expect(await own(n, 'and(*:*)')).toEqual(['cpu|ST[host:web2]']);
    }
    const show = await runCli(['history', 'show', out.run, '--journal', journal]);
    expect(show.code).toBe(0);
    expect(show.stdout).toMatch(/cpu\|ST\[host:web1\].*found.*gone/);
    expect(show.stdout.match(/ gone /g)?.length).toBe(9);
  });

  it('--before keeps the newer data', async () => {
    const r = await runCli(['delete', 'and(host:web1)', '--before', String(T0 + 60), '--types', 'nnt', '--yes', '--nodes', list, '-o', 'json']);
    expect(r.code).toBe(0);
    const p = new URLSearchParams({ start_ts: `${T0}.000`, end_ts: `${T0 + 660}.000`, rollup_span: '60s', get_engine: 'recalc', type: 'count' });
    for (const n of nodes) {
      const rows = (await call(n.url, 'GET', `/rollup/${UUID}/${encodeURIComponent(WEB1[0]!)}?${p.toString()}`)).json as Array<[number, number | null]>;
      expect(rows.filter(([, v]) => v !== null).map(([t]) => t)).toEqual([T0 + 600]);
      expect(await own(n, 'and(host:web1)')).toEqual([...WEB1].sort());
    }
  });

  it('a node down leaves a partial receipt and a catch-up that completes the delete when run as printed', async () => {
    await nodes[2]!.kill();
    const r = await runCli([
      'delete',
      'and(host:web1)',
      '--full',
      '--yes',
      '--skip-unreachable',
      '--connect-timeout',
      '1s',
      '--retries',
      '0',
      '--nodes',
      list,
      '--journal',
      journal,
      '-o',
      'json',
    ]);
    expect(r.code).toBe(3);
    const out = JSON.parse(r.stdout);
    expect(out.nodes.map((n: { state: string }) => n.state)).toEqual(['deleted', 'deleted', 'skipped']);
    expect(out.catch_up).toContain(`--nodes ${nodes[2]!.url}`);
    expect(out.catch_up).toContain('--yes');
    const back = await nodes[2]!.restart();
    expect(back.url).toBe(nodes[2]!.url);
    expect(await own(back, 'and(host:web1)')).toEqual([...WEB1].sort());
    const again = await runCli([...printedArgs(out.catch_up as string), '-o', 'json']);
    expect(again.code).toBe(0);
    expect(await own(back, 'and(host:web1)')).toEqual([]);
    expect(await own(back, 'and(*:*)')).toEqual(['cpu|ST[host:web2]']);
  });

  it('--metric deletes one exact metric', async () => {
    const r = await runCli(['delete', '--metric', UUID, 'mem|ST[host:web1]', '--yes', '--nodes', list, '-o', 'json']);
    expect(r.code).toBe(0);
    for (const n of nodes) expect(await own(n, 'and(host:web1)')).toEqual(['cpu|ST[host:web1]', 'disk|ST[host:web1]']);
  });

  it("--metric with --before whose query also selects another metric: refused in the delete's words, nothing deleted", async () => {
    // The exact query of mem|ST[host:web1] also matches a metric with one more tag; a time-bounded delete cannot tell them apart.
    await write(nodes[0]!.url, [rec('mem|ST[env:prod,host:web1]')]);
    const r = await runCli(['delete', '--metric', UUID, 'mem|ST[host:web1]', '--before', '2025-01-01T00:00:00Z', '--yes', '--nodes', list]);
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain(
      `error: refusing to delete: the query for mem|ST[host:web1] also selects 1 other metric on ${nodes[0]!.url} (e.g. mem|ST[env:prod,host:web1]); nothing was deleted`,
    );
    expect(r.stderr).toContain('hint: use a tag query that selects only what should go, and check it with tsnode find');
    for (const n of nodes) expect(await own(n, 'and(host:web1)')).toContain('mem|ST[host:web1]');
  });
});

describe('tsnode delete refusals send nothing', () => {
  it('a query that does not parse: exit 2 with its column', async () => {
    const node = await startRecordingNode({ body: '[]' });
    try {
      const r = await runCli(['delete', 'and(host:web1,', '--full', '--yes', '--nodes', node.url]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/query: .* at column 15/);
      expect(node.requests).toEqual([]);
    } finally {
      await node.close();
    }
  });

  it('off a terminal without --yes: exit 2', async () => {
    const node = await startRecordingNode({ body: '[]' });
    try {
      const r = await runCli(['delete', 'and(host:web1)', '--full', '--nodes', node.url]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/pass --yes/);
      expect(node.requests).toEqual([]);
    } finally {
      await node.close();
    }
  });

  it('neither --full nor --before: exit 2', async () => {
    const r = await runCli(['delete', 'and(host:web1)', '--yes', '--nodes', 'http://127.0.0.1:1']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--full .* or --before/);
  });
});

describe('tsnode history show of a delete', () => {
  it('a delete stopped before its receipt (the CLI killed): its round lines say what went', async () => {
    const file = join(mkdtempSync(join(tmpdir(), 'tsnode-delete-')), 'journal.jsonl');
    const at = '2026-11-26T06:00:00.000Z';
    const round = (node: string, metric: string) => ({ at, kind: 'delete.round', run: 'r1', node, round: 1, deleted: [{ uuid: UUID, metric_name: metric }], total: 1 });
    const lines = [
      { at, kind: 'delete.start', run: 'r1', by: 'me@host', query: 'and(host:web1)', nodes: ['http://a:1', 'http://b:1'] },
      round('http://a:1', 'cpu|ST[host:web1]'),
      round('http://b:1', 'cpu|ST[host:web1]'),
      { ...round('http://a:1', 'mem|ST[host:web1]'), round: 2, total: 2 },
    ];
    writeFileSync(file, lines.map((l) => JSON.stringify(l)).join('\n') + '\n');
    const r = await runCli(['history', 'show', 'r1', '--journal', file]);
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('no outcome recorded: the delete was stopped before its receipt was written; its delete.round lines name 3 metric copies deleted on 2 node(s)');
    expect(r.stdout).toContain('"kind":"delete.round"');
  });
});
