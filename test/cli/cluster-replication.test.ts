/**
 * `tsnode cluster pause|resume <node>` on a real `cluster up` ring (replicating by default), and
 * the lag column of `tsnode nodes`: a paused node builds a backlog on its peers, shows a lag, and
 * gets everything once resumed.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { randomUUID } from 'node:crypto';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ring, topologyFromJson } from '../../src/ring/index.js';
import { runCli } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';
import { eventually, getJson, putJson } from '../helpers/ring.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-cluster-repl-'));
const dir = join(root, 'ring');
let urls: string[];
let ids: string[];
let ring: Ring;
const T = Math.floor(Date.now() / 1000 / 60) * 60 - 3600;

beforeAll(async () => {
  const up = await runCli(['cluster', 'up', '--count', '3', '--write-copies', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json'], { timeoutMs: 60_000 });
  expect(up.code, up.stderr).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
  const topology = topologyFromJson(JSON.parse(readFileSync(join(dir, 'topology.json'), 'utf8')));
  ids = topology.nodes.map((n) => n.id);
  ring = Ring.compile(topology);
}, 90_000);

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

describe('cluster pause / resume', () => {
  it('pausing a node builds a backlog for it on its peers, shown as lag by `nodes`; resuming delivers it', async () => {
    const id = randomUUID();
    const metric = 'paused.cpu';
    const [primary, second] = ring.ownersOf(id, metric).map((n) => ids.indexOf(n.id)) as [number, number];
    const paused = await runCli(['cluster', 'pause', urls[second]!, '--dir', dir, '-o', 'json']);
    expect(paused.code, paused.stderr).toBe(0);
    const doc = JSON.parse(paused.stdout);
    expect(doc).toMatchObject({ action: 'pause', target: { id: ids[second], url: urls[second] } });
    expect(doc.nodes).toHaveLength(2);
    expect(doc.nodes.every((n: { ok: boolean }) => n.ok)).toBe(true);

    expect((await putJson(`${urls[primary]}/write/nnt`, [{ id, metric, offset: T, count: 1, value: 11 }])).status).toBe(200);
    const peer = async (): Promise<{ pending: number; paused: boolean }> =>
      ((await getJson(`${urls[primary]}/replication/json`)).body as { peers: Array<{ id: string; pending: number; paused: boolean }> }).peers.find((p) => p.id === ids[second])!;
    expect(await peer()).toMatchObject({ pending: 1, paused: true });
    // Recorded beside each other node's journal for it, so a restart keeps it (ring-pause-restart.test.ts).
    const markers = [0, 1, 2].filter((i) => i !== second).map((i) => join(dir, `node-${i + 1}`, 'replication', ids[second]!, 'paused.json'));
    expect(markers.map((m) => existsSync(m))).toEqual([true, true]);

    await eventually('`nodes` shows the paused node behind', async () => {
      const r = await runCli(['nodes', '--seed', urls[0]!, '-o', 'json']);
      const nodes = JSON.parse(r.stdout).nodes as Array<{ url: string; lag_seconds: number | null }>;
      return nodes.every((n) => typeof n.lag_seconds === 'number') && nodes.find((n) => n.url === urls[second])!.lag_seconds! > 0;
    });
    const table = await runCli(['nodes', '--seed', urls[0]!], { env: { COLUMNS: '200' } });
    expect(table.stdout).toMatch(/│ lag +│/);

    const resumed = await runCli(['cluster', 'resume', ids[second]!, '--dir', dir]);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(resumed.stderr).toContain(`resumed replication towards ${urls[second]}`);
    expect(markers.map((m) => existsSync(m))).toEqual([false, false]);
    await eventually('the backlog is delivered', async () => (await peer()).pending === 0);
    const got = await getJson(`${urls[second]}/rollup/${id}/${metric}?start_ts=${T}.000&end_ts=${T + 60}.000&rollup_span=60s&type=average`, { 'X-Snowth-Proxied': '1' });
    expect(got.body).toEqual([[T, 11]]);
  }, 60_000);

  it('an unknown node is a usage error naming the nodes', async () => {
    const r = await runCli(['cluster', 'pause', 'nope', '--dir', dir]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('"nope" is no node of the cluster');
    expect(r.stderr).toContain(urls[0]!);
    expect(r.stdout).toBe('');
  });
});
