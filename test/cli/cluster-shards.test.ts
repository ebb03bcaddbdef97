// `cluster up` passes the shard and retention flags to every node, and --node-flags to one node:
// a mixed ring of a sweep-era node and a node-managed one without a sweep API.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { runCli } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-cluster-shards-'));

afterAll(() => {
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

async function get(url: string): Promise<{ status: number; json: any }> {
  const res = await fetch(url);
  const text = await res.text();
  return { status: res.status, json: text.startsWith('{') || text.startsWith('[') ? JSON.parse(text) : text };
}

describe('cluster up: shard and retention flags', () => {
  it('passes them to every node, and --node-flags to one, for a mixed ring', async () => {
    const dir = join(root, 'mixed');
    const up = await runCli([
      'cluster',
      'up',
      '--count',
      '2',
      '--base-port',
      '0',
      '--dir',
      dir,
      '--detach',
      '-o',
      'json',
      '--shards',
      '60=2d',
      '--retention',
      'nnt:300=104w',
      '--retention-interval',
      '10m',
      '--node-flags',
      '2:--no-sweep-api --retention nnt:60=1d',
    ]);
    expect(up.code, up.stderr).toBe(0);
    const [one, two] = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
    try {
      expect((await get(`${one}/sweep_delete`)).status).toBe(200);
      expect((await get(`${one}/state`)).json.retention).toEqual({ nnt: { '300': 104 * 604_800 }, histogram: {}, histogram_raw: null, raw: null });
      // Node 2's flags come after the ring-wide ones: its --retention replaces them.
      expect((await get(`${two}/sweep_delete`)).status).toBe(404);
      expect((await get(`${two}/state`)).json.retention).toEqual({ nnt: { '60': 86_400 }, histogram: {}, histogram_raw: null, raw: 86_400 });
      for (const url of [one, two]) expect((await get(`${url}/list_nntbs_shards`)).json[0]).toEqual({ period: 60, shard: [] });
    } finally {
      const down = await runCli(['cluster', 'down', '--dir', dir]);
      expect(down.code).toBe(0);
    }
  });

  it('refuses a --node-flags naming another flag or node, before starting anything', async () => {
    const dir = join(root, 'refused');
    const bad = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach', '--node-flags', '2:--port 9']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/--node-flags.*"--port" is not a flag cluster up passes to a node/);
    const far = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach', '--node-flags', '3:--no-sweep-api']);
    expect(far.code).toBe(2);
    expect(far.stderr).toMatch(/not <node>:<flags> for one of the 2 node/);
  });
});
