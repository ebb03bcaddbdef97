/** `tsnode find` against real nodes: the union with the nodes holding each metric, counts, formats, refusals. */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { deadAddress, startNodes, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startRecordingNode } from '../helpers/recording-node.js';
import { UUID, write } from '../integration/server-helpers.js';

const T0 = 1_700_000_040;
let a: TestNode, b: TestNode, c: TestNode;
let list: string;

const rec = (metric: string) => ({ metric, id: UUID, offset: T0, count: 1, value: 1 });

beforeAll(async () => {
  [a, b, c] = (await startNodes(3, { memory: true })) as [TestNode, TestNode, TestNode];
  await write(a.url, [rec('cpu|ST[host:web1]'), rec('mem|ST[host:web1]')]);
  await write(b.url, [rec('cpu|ST[host:web1]')]);
  await write(c.url, [rec('cpu|ST[host:web2]')]);
  list = [a.url, b.url, c.url].join(',');
}, 30_000);
afterAll(stopAllNodes);

describe('tsnode find', () => {
  it('joins the nodes answers: each metric once, with the nodes holding it', async () => {
    const r = await runCli(['find', 'and(host:web1)', '--nodes', list, '-o', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.metrics).toEqual([
      { uuid: UUID, metric_name: 'cpu|ST[host:web1]', type: 'numeric', nodes: [a.url, b.url] },
      { uuid: UUID, metric_name: 'mem|ST[host:web1]', type: 'numeric', nodes: [a.url] },
    ]);
    expect(out.nodes.map((n: { count: number }) => n.count)).toEqual([2, 1, 0]);
    expect(r.stderr).toMatch(/2 metric\(s\) on 3 of 3 node\(s\)/);
  });

  it('--count: each node and the total', async () => {
    const r = await runCli(['find', 'and(*:*)', '--count', '--nodes', list, '-o', 'json']);
    expect(r.code).toBe(0);
    const out = JSON.parse(r.stdout);
    expect(out.total).toBe(4);
    expect(out.nodes.map((n: { count: number }) => n.count)).toEqual([2, 1, 1]);
    const table = await runCli(['find', 'and(*:*)', '--count', '--nodes', list]);
    expect(table.stdout).toMatch(/total\s*│?\s*4/);
  });

  it('table and csv', async () => {
    const csv = await runCli(['find', 'and(host:web2)', '--nodes', list, '-o', 'csv']);
    expect(csv.stdout).toBe(`metric_name,uuid,type,nodes\r\ncpu|ST[host:web2],${UUID},numeric,${c.url.replace('http://', '')}\r\n`);
    const table = await runCli(['find', 'and(host:web2)', '--nodes', list]);
    expect(table.stdout).toContain('cpu|ST[host:web2]');
  });

  it('another account matches nothing', async () => {
    const r = await runCli(['find', 'and(*:*)', '--account', '2', '--nodes', list, '-o', 'json']);
    expect(JSON.parse(r.stdout).metrics).toEqual([]);
  });

  it('a node that does not answer makes the run partial (exit 3), and says which', async () => {
    const dead = await deadAddress();
    const r = await runCli(['find', 'and(host:web1)', '--nodes', `${a.url},${dead}`, '-o', 'json', '--connect-timeout', '1s', '--retries', '0']);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${dead}: no answer`);
  });

  it('--limit: a node with more says so, exit 3', async () => {
    const r = await runCli(['find', 'and(*:*)', '--limit', '1', '--nodes', a.url, '-o', 'json']);
    expect(r.code).toBe(3);
    expect(JSON.parse(r.stdout).nodes[0]).toMatchObject({ count: 1, incomplete: true });
    expect(r.stderr).toMatch(/listed only the first 1/);
  });

  it('refuses a query that does not parse with its column, before sending anything', async () => {
    const node = await startRecordingNode({ body: '[]' });
    try {
      const r = await runCli(['find', 'and(host:web1', '--nodes', node.url]);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(/query: expected '\)' but found the end of the query at column 14/);
      expect(r.stderr).toContain('  and(host:web1\n');
      expect(r.stderr).toMatch(/\n.* {15}\^/);
      expect(node.requests).toEqual([]);
    } finally {
      await node.close();
    }
  });

  it('sends the query URL-encoded exactly once, with the account and local-only headers', async () => {
    const node = await startRecordingNode({ body: '[]' });
    try {
      const r = await runCli(['find', 'and(__name:"a b%",host:/^w.+/)', '--nodes', node.url, '--account', '7']);
      expect(r.code).toBe(0);
      expect(node.requests[0]!.rawUrl).toBe(`/find/7/tags?query=${encodeURIComponent('and(__name:"a b%",host:/^w.+/)')}`);
      expect(node.requests[0]!.headers['x-snowth-account-id']).toBe('7');
      expect(node.requests[0]!.headers['x-snowth-proxied']).toBe('1');
    } finally {
      await node.close();
    }
  });
});
