/**
 * A pause of replication survives a restart of the pausing node (real `tsnode serve` processes,
 * the node killed with SIGKILL): still paused after it, its journal still grows, and once resumed
 * the peer gets everything; a node restarted after the resume replays again.
 */
import { randomUUID } from 'node:crypto';
import { existsSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { eventually, getJson, putJson, startRing } from '../helpers/ring.js';

const dirs: string[] = [];
afterAll(async () => {
  await stopAllNodes();
  for (const d of dirs) rmSync(d, { recursive: true, force: true });
});

const T = Math.floor(Date.now() / 1000 / 60) * 60 - 3600;

interface PeerEntry {
  id: string;
  pending: number;
  paused: boolean;
}

const peerOf = async (node: TestNode): Promise<PeerEntry> => ((await getJson(`${node.url}/replication/json`)).body as { peers: PeerEntry[] }).peers[0]!;

describe('a paused peer across a restart', () => {
  it('stays paused after a kill -9 and restart, keeps journaling, and gets everything once resumed', async () => {
    const ring = await startRing(2, 2);
    let a = ring.nodes[0]!;
    const b = ring.nodes[1]!;
    dirs.push(a.dataDir); // restarted on it, so no longer removed by its own stop
    const peer = ring.ids[1]!;
    const id = randomUUID();
    const write = async (node: TestNode, k: number): Promise<void> => {
      expect((await putJson(`${node.url}/write/nnt`, [{ id, metric: 'held', offset: T + 60 * k, count: 1, value: k }])).status).toBe(200);
    };
    const peerValues = async (): Promise<Array<number | null>> =>
      (
        (await getJson(`${b.url}/rollup/${id}/held?start_ts=${T}.000&end_ts=${T + 180}.000&rollup_span=60s&type=average`, { 'X-Snowth-Proxied': '1' })).body as Array<
          [number, number | null]
        >
      ).map((r) => r[1]);

    const paused = await putJson(`${a.url}/replication/pause/${peer}`, null);
    expect(paused).toMatchObject({ status: 200, body: { id: peer, paused: true } });
    const marker = join(a.dataDir, 'replication', peer, 'paused.json');
    expect(existsSync(marker)).toBe(true);
    await write(a, 0);
    expect(await peerOf(a)).toMatchObject({ pending: 1, paused: true });

    await a.kill();
    a = await a.restart();
    expect(a.stderr()).toContain('stays paused');
    expect(await peerOf(a)).toMatchObject({ id: peer, pending: 1, paused: true });
    await write(a, 1);
    expect(await peerOf(a)).toMatchObject({ pending: 2, paused: true });
    expect(await peerValues()).toEqual([null, null, null]);

    const resumed = await putJson(`${a.url}/replication/resume/${peer}`, null);
    expect(resumed).toMatchObject({ status: 200, body: { paused: false } });
    expect(existsSync(marker)).toBe(false);
    await eventually('the backlog reaches the peer', async () => (await peerOf(a)).pending === 0 && (await peerValues()).join() === '0,1,');

    // Resumed for good: a node restarted now replays at once.
    await a.stop();
    a = await a.restart();
    expect(await peerOf(a)).toMatchObject({ paused: false });
    await write(a, 2);
    await eventually('a write after the restart reaches the peer', async () => (await peerValues()).join() === '0,1,2');
  }, 60_000);
});
