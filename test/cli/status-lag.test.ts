/**
 * `tsnode status` shows each node's replication lag (`/state` max_peer_lag) on a real replicating
 * ring (write_copies 2) while one node's replication towards another is paused: a number above
 * zero for the node whose data is held back, and null (not 0) for a node without /state, which
 * still shows its sweep status.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { eventually, getJson, lagRing, putJson, startRing, type TestRing } from '../helpers/ring.js';
import { startStubNode, type StubNode } from '../helpers/stub-node.js';

let ring: TestRing;
let stub: StubNode;
const NOW = Math.floor(Date.now() / 1000);
const T = NOW - (NOW % 60) - 7200;

beforeAll(async () => {
  [ring, stub] = await Promise.all([startRing(3, 2), startStubNode()]);
}, 60_000);
afterAll(async () => {
  await Promise.all([stopAllNodes(), stub.close()]);
});

const { seriesOwnedBy, pause } = lagRing(() => ring, T);

describe('status: replication lag per node', () => {
  it('lag_seconds > 0 for the node whose peer holds its data; null for a node without /state', async () => {
    const [a, b] = [0, 1];
    const s = seriesOwnedBy(a, b);
    await pause(a, b, true);
    expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T, count: 1, value: 5 }])).status).toBe(200);
    const lagOf = async (i: number): Promise<number> => ((await getJson(`${ring.nodes[i]!.url}/state`)).body as { max_peer_lag: number }).max_peer_lag;
    await eventually('b reports its lag in /state', async () => (await lagOf(b)) > 0, 30_000);

    const nodes = ['--nodes', [...ring.nodes.map((n) => n.url), stub.url].join(','), '--retries', '0'];
    const r = await runCli(['status', ...nodes, '-o', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout) as { nodes: Array<{ node: string; ok: boolean; state: string; lag_seconds: number | null }> };
    const byNode = new Map(doc.nodes.map((n) => [n.node, n]));
    expect(byNode.get(ring.nodes[b]!.url)!.lag_seconds).toBeGreaterThan(0);
    expect(byNode.get(stub.url)).toMatchObject({ ok: true, state: 'idle', lag_seconds: null });
    for (const n of doc.nodes) expect(n.lag_seconds === null || typeof n.lag_seconds === 'number').toBe(true);

    const table = await runCli(['status', ...nodes]);
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(new RegExp(`│ ${ring.nodes[b]!.url} +│ idle +│ \\d+(\\.\\d)?s +│`));
    expect(table.stdout).toMatch(new RegExp(`│ ${stub.url} +│ idle +│ - +│`));

    const csv = await runCli(['status', ...nodes, '-o', 'csv']);
    expect(csv.code, csv.stderr).toBe(0);
    const [head, ...rows] = csv.stdout.trim().split(/\r?\n/);
    const col = head!.split(',').indexOf('lag_seconds');
    expect(col).toBeGreaterThan(0);
    const lagCells = (url: string): string[] => rows.filter((l) => l.startsWith(`${url},`)).map((l) => l.split(',')[col]!);
    expect(lagCells(stub.url)).toEqual(['', '', '']);
    expect(lagCells(ring.nodes[b]!.url).every((c) => Number(c) > 0)).toBe(true);
    await pause(a, b, false);
  }, 60_000);
});
