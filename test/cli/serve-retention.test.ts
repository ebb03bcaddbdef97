// `tsnode serve --retention` as a real process on a data dir written before: the check at start
// removes the shards lying past their retention (on the node's real clock), says so on stderr,
// and a second start finds nothing more to remove.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { startNode, stopAllNodes } from '../helpers/nodes.js';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-serve-retention-'));
const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const DAY = 86_400;

afterAll(async () => {
  await stopAllNodes();
  rmSync(dir, { recursive: true, force: true });
});

async function json(url: string): Promise<any> {
  const res = await fetch(url);
  return res.json();
}

async function shards60(url: string): Promise<Array<{ block_floor: number; 'block:ceiling': number }>> {
  const list = (await json(`${url}/list_nntbs_shards`)) as Array<{ period: number; shard: Array<{ block_floor: number; 'block:ceiling': number }> }>;
  return list.find((p) => p.period === 60)!.shard;
}

describe('tsnode serve --retention', () => {
  it('removes the shards past retention at start, logs them, and nothing newer, across restarts', async () => {
    const now = Math.floor(Date.now() / 1000);
    const args = ['--rollups', '60,300', '--histogram-rollups', '60', '--shards', '60=12h,300=2d'];
    const first = await startNode({ dataDir: dir, args });
    const recs = [];
    for (let t = now - 10 * DAY - ((now - 10 * DAY) % 3600); t < now - DAY; t += 3600) recs.push({ metric: 'cpu', id: UUID, offset: t, count: 1, value: 1 });
    const w = await fetch(`${first.url}/write/nnt`, { method: 'POST', body: JSON.stringify(recs), headers: { 'content-type': 'application/json' } });
    expect(w.status).toBe(200);
    await w.text();
    const before = await shards60(first.url);
    expect(before.length).toBeGreaterThan(15);
    await first.stop();

    const retention = ['--retention', 'nnt:60=3d,nnt:300=3d'];
    const startedAfter = Math.floor(Date.now() / 1000) - 3 * DAY;
    const second = await startNode({ dataDir: dir, args: [...args, ...retention] });
    const startedBefore = Math.floor(Date.now() / 1000) - 3 * DAY;
    const after = await shards60(second.url);
    // The node checked between the two clock readings (a shard boundary between them is possible, if unlikely).
    const keptAt = (cutoff: number) => before.filter((s) => s['block:ceiling'] > cutoff);
    expect([keptAt(startedAfter), keptAt(startedBefore)]).toContainEqual(after);
    expect(after.length).toBeLessThan(before.length);
    expect((await json(`${second.url}/state`)).retention).toEqual({ nnt: { '60': 3 * DAY, '300': 3 * DAY }, histogram: {}, histogram_raw: null, raw: 3 * DAY });
    await second.stop();
    // The removals were logged (one line per shard) before the node stopped.
    const removed = second.stderr().match(/retention: removed nnt 60 s shard/g) ?? [];
    expect(removed.length).toBe(before.length - after.length);

    const third = await startNode({ dataDir: dir, args: [...args, ...retention] });
    expect(await shards60(third.url)).toEqual(after);
    await third.stop();
    expect(third.stderr()).not.toMatch(/retention: removed/);
  });
});
