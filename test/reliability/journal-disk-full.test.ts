import { execFileSync } from 'node:child_process';
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, describe, expect, it } from 'vitest';
import { stopAllNodes } from '../helpers/nodes.js';
import { eventually, getJson, putJson, startRing } from '../helpers/ring.js';

// A full disk under the replication journals, for real: node 0's --journal-dir on a 1 MiB tmpfs,
// replay towards node 1 paused so the journal only grows. Writes must be refused with 507 once a
// journal append fails (nothing acknowledged that is not journaled), and every acknowledged record
// must reach node 1 once it is resumed.
function mountSmallDisk(): { dir: string; unmount(): void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-journal-full-'));
  try {
    if (process.getuid?.() !== 0) throw new Error(`mounting needs root (running as uid ${process.getuid?.()})`);
    execFileSync('mount', ['-t', 'tmpfs', '-o', 'size=1m,mode=0700', 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const e = err as { stderr?: Buffer; message: string };
    return `cannot mount a 1 MiB tmpfs: ${e.stderr?.toString().trim() || e.message}`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const disk = mountSmallDisk();
if (typeof disk === 'string') console.log(`journal-disk-full: SKIPPED: ${disk}`);

afterAll(async () => {
  await stopAllNodes();
  if (typeof disk !== 'string') disk.unmount();
});

const T0 = Math.floor(Date.now() / 1000 / 60) * 60 - 86_400;

describe.skipIf(typeof disk === 'string')('a full disk under the journals', () => {
  it('refuses with 507 once a journal append fails; every acknowledged record is delivered once resumed', async () => {
    const dir = (disk as { dir: string }).dir;
    const ring = await startRing(2, 2, { perNode: [['--journal-dir', dir], []] });
    const [a, b] = ring.nodes as [(typeof ring.nodes)[0], (typeof ring.nodes)[0]];
    expect((await putJson(`${a.url}/replication/pause/${ring.ids[1]}`, null)).status).toBe(200);
    const id = randomUUID();
    let acked = 0;
    let refused: { status: number; body: unknown } | undefined;
    for (let batch = 0; batch < 400 && !refused; batch++) {
      const records = Array.from({ length: 50 }, (_, k) => ({ id, metric: 'full', offset: T0 + (batch * 50 + k) * 60, count: 1, value: batch * 50 + k }));
      const r = await putJson(`${a.url}/write/nnt`, records);
      if (r.status === 200) acked += 50;
      else refused = r;
    }
    expect(refused?.status).toBe(507);
    expect(refused?.body).toMatchObject({ code: 'disk_full' });
    expect(acked).toBeGreaterThan(0);
    const peer = async (): Promise<{ pending: number }> => ((await getJson(`${a.url}/replication/json`)).body as { peers: Array<{ pending: number }> }).peers[0]!;
    expect((await peer()).pending).toBe(acked);
    expect((await putJson(`${a.url}/replication/resume/${ring.ids[1]}`, null)).status).toBe(200);
    await eventually('the backlog is delivered', async () => (await peer()).pending === 0, 30_000);
    const rows = (await getJson(`${b.url}/rollup/${id}/full?start_ts=${T0}.000&end_ts=${T0 + acked * 60}.000&rollup_span=60s&type=count`, { 'X-Snowth-Proxied': '1' }))
      .body as Array<[number, number | null]>;
    expect(rows.filter((r) => r[1] === 1)).toHaveLength(acked);
    console.log(`journal-disk-full: ${acked} records acknowledged before the 507, all delivered`);
  }, 60_000);
});
