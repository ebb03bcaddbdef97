/**
 * A local ring that rehearses production: a node killed with SIGKILL comes back with `cluster up`
 * on its recorded port and identity, its data intact; `cluster restart <node>` and
 * `cluster restart` start nodes again the same way; `cluster down` then stops everything,
 * restarted nodes included. A foreground `cluster up` takes a restart of one of its nodes for
 * what it is (not a crash) and stops the restarted node too on Ctrl-C.
 */
import { spawn } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import type { ClusterState } from '../../src/cli/local-cluster/state.js';
import { Ring, topologyFromJson } from '../../src/ring/index.js';
import { BIN, NO_USER_CONFIG, runCli } from '../helpers/cli.js';
import { isAlive, killMentioning, processesMentioning } from '../helpers/procs.js';
import { eventually, getJson, putJson } from '../helpers/ring.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-cluster-restart-'));
const T = Math.floor(Date.now() / 1000 / 60) * 60 - 3600;

afterAll(() => {
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

const state = (dir: string): ClusterState => JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;

/** The node's own copy of a metric (no proxying to another owner). */
async function localRead(url: string, id: string, metric: string): Promise<unknown> {
  return (await getJson(`${url}/rollup/${id}/${metric}?start_ts=${T}.000&end_ts=${T + 60}.000&rollup_span=60s&type=average`, { 'X-Snowth-Proxied': '1' })).body;
}

describe('cluster up / restart / down on a recorded cluster', () => {
  it('cluster up starts a killed node on its port with its data; restart <node>, restart, then down stops every process', async () => {
    const dir = join(root, 'ring');
    const up = await runCli(['cluster', 'up', '--count', '3', '--base-port', '0', '--dir', dir, '--detach', '--rollups', '60,300', '-o', 'json'], { timeoutMs: 60_000 });
    expect(up.code, up.stderr).toBe(0);
    const first = state(dir);
    const urls = first.nodes.map((n) => n.url);
    const topology = topologyFromJson(JSON.parse(readFileSync(join(dir, 'topology.json'), 'utf8')));
    const ring = Ring.compile(topology);
    const ids = topology.nodes.map((n) => n.id);

    // A metric node 2 owns, written and replicated to its owners.
    let id = randomUUID();
    while (!ring.ownersOf(id, 'cpu').some((o) => o.id === ids[1])) id = randomUUID();
    expect((await putJson(`${urls[0]}/write/nnt`, [{ id, metric: 'cpu', offset: T, count: 1, value: 7 }])).status).toBe(200);
    await eventually('node 2 holds its copy', async () => JSON.stringify(await localRead(urls[1]!, id, 'cpu')) === JSON.stringify([[T, 7]]));

    const killed = first.nodes[1]!.pid;
    process.kill(killed, 'SIGKILL');
    await eventually('node 2 is gone', () => Promise.resolve(!isAlive(killed)));

    const again = await runCli(['cluster', 'up', '--dir', dir, '-o', 'json'], { timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    expect(again.stderr).toContain('1 of them not running (node 2)');
    const doc = JSON.parse(again.stdout) as { nodes: Array<{ index: number; url: string; id: string; pid: number; outcome: string }> };
    expect(doc.nodes.map((n) => n.outcome)).toEqual(['running', 'started', 'running']);
    expect(doc.nodes.map((n) => n.url)).toEqual(urls);
    expect(doc.nodes.map((n) => n.id)).toEqual(ids);
    // The running nodes were left alone; node 2 is a new process on its old port, with its data and flags.
    const second = state(dir);
    expect(second.nodes[0]!.pid).toBe(first.nodes[0]!.pid);
    expect(second.nodes[2]!.pid).toBe(first.nodes[2]!.pid);
    expect(second.nodes[1]!.pid).not.toBe(killed);
    expect(isAlive(second.nodes[1]!.pid)).toBe(true);
    expect(await localRead(urls[1]!, id, 'cpu')).toEqual([[T, 7]]);
    expect(((await getJson(`${urls[1]}/state`)).body as { identity: string }).identity).toBe(ids[1]);
    expect(readFileSync(`/proc/${second.nodes[1]!.pid}/cmdline`, 'utf8')).toContain('60,300');

    // restart by URL: a new pid on the same port.
    const byUrl = await runCli(['cluster', 'restart', urls[2]!, '--dir', dir, '--grace', '2s', '-o', 'json'], { timeoutMs: 60_000 });
    expect(byUrl.code, byUrl.stderr).toBe(0);
    expect(JSON.parse(byUrl.stdout).nodes).toMatchObject([{ index: 3, url: urls[2], old_pid: first.nodes[2]!.pid, outcome: 'restarted' }]);
    expect(isAlive(first.nodes[2]!.pid)).toBe(false);

    // every node, by id for node 1 first.
    const byId = await runCli(['cluster', 'restart', ids[0]!, '--dir', dir, '--grace', '2s'], { timeoutMs: 60_000 });
    expect(byId.code, byId.stderr).toBe(0);
    const all = await runCli(['cluster', 'restart', '--dir', dir, '--grace', '2s', '-o', 'json'], { timeoutMs: 90_000 });
    expect(all.code, all.stderr).toBe(0);
    expect((JSON.parse(all.stdout) as { nodes: unknown[] }).nodes).toHaveLength(3);
    expect(await localRead(urls[1]!, id, 'cpu')).toEqual([[T, 7]]);
    const restartedPids = state(dir).nodes.map((n) => n.pid);
    for (const pid of restartedPids) expect(isAlive(pid)).toBe(true);

    const down = await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s', '-o', 'json'], { timeoutMs: 60_000 });
    expect(down.code, down.stderr).toBe(0);
    expect((JSON.parse(down.stdout) as { nodes: Array<{ pid: number; outcome: string }> }).nodes).toEqual(
      restartedPids.map((pid, i) => expect.objectContaining({ index: i + 1, pid, outcome: 'stopped' })),
    );
    expect(processesMentioning(dir)).toEqual([]);
  }, 180_000);

  it('restart of an unknown node, or without a recorded cluster, is a usage error; --count that differs is refused', async () => {
    const none = await runCli(['cluster', 'restart', '--dir', join(root, 'nothing')]);
    expect(none.code).toBe(2);
    expect(none.stderr).toMatch(/no cluster recorded in .*nothing/);

    const dir = join(root, 'small');
    const up = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach'], { timeoutMs: 60_000 });
    expect(up.code, up.stderr).toBe(0);
    try {
      const bad = await runCli(['cluster', 'restart', 'nope', '--dir', dir]);
      expect(bad.code).toBe(2);
      expect(bad.stderr).toContain('"nope" is no node of the cluster');
      process.kill(state(dir).nodes[0]!.pid, 'SIGKILL');
      const count = await runCli(['cluster', 'up', '--count', '3', '--dir', dir]);
      expect(count.code).toBe(2);
      expect(count.stderr).toMatch(/--count 3: the cluster recorded in .* has 2 nodes/);
    } finally {
      await runCli(['cluster', 'down', '--dir', dir, '--grace', '1s']);
    }
    expect(processesMentioning(dir)).toEqual([]);
  }, 90_000);

  it('a foreground cluster up takes a restarted node for a restart, and its Ctrl-C stops the restarted process', async () => {
    const dir = join(root, 'fg');
    const env = { ...process.env, ...NO_USER_CONFIG, FORCE_COLOR: '0', NO_COLOR: '1' };
    for (const k of Object.keys(env)) if (env[k as keyof typeof env] === undefined) delete env[k as keyof typeof env];
    const child = spawn(process.execPath, [BIN, 'cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir], { env: env, stdio: ['ignore', 'pipe', 'pipe'] });
    let stderr = '';
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((r) => child.on('close', (code) => r(code)));
    await eventually('the cluster is up', () => Promise.resolve(stderr.includes('Press Ctrl-C')), 60_000);
    const r = await runCli(['cluster', 'restart', '2', '--dir', dir, '--grace', '2s'], { timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const newPid = state(dir).nodes[1]!.pid;
    expect(isAlive(newPid)).toBe(true);
    expect(stderr).not.toMatch(/exited on its own/);
    child.kill('SIGINT');
    expect(await exited).toBe(0);
    expect(stderr).toContain(`(pid ${newPid}) stopped`);
    expect(isAlive(newPid)).toBe(false);
    expect(processesMentioning(dir)).toEqual([]);
  }, 120_000);
});
