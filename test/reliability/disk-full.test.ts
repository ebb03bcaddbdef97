import { afterAll, describe, expect, it, vi } from 'vitest';
import { execFileSync } from 'node:child_process';
import { closeSync, mkdirSync, mkdtempSync, openSync, rmSync, statfsSync, writeSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

// A full disk, for real: the node's data dir on a small tmpfs. The node must stop acknowledging
// (507 disk_full) instead of logging what it cannot store, keep serving reads and sweeps, start
// again on the still-full disk, and accept writes once a sweep made room; nothing acknowledged
// and not swept may be lost.
const SIZE_MB = Number(process.env.TSNODE_DISKFULL_MB ?? 32);
const RESERVE = 4 * 1024 * 1024;
const UUID = 'd15cf011-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const SERIES = 20;
const BATCH = 2000;
const T0 = 1_600_000_020 - (1_600_000_020 % 60);

/** Mounts a tmpfs of `mb` MiB, or says why it cannot (the only reason this test may skip). */
function mountSmallDisk(mb: number): { dir: string; unmount(): void } | string {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-diskfull-'));
  try {
    if (process.getuid?.() !== 0) throw new Error(`mounting needs root (running as uid ${process.getuid?.()})`);
    execFileSync('mount', ['-t', 'tmpfs', '-o', `size=${mb}m,mode=0700`, 'tmpfs', dir], { stdio: 'pipe' });
  } catch (err) {
    rmSync(dir, { recursive: true, force: true });
    const e = err as { stderr?: Buffer; message: string };
    return `cannot mount a ${mb} MiB tmpfs: ${e.stderr?.toString().trim() || e.message}`;
  }
  return {
    dir,
    unmount: () => {
      execFileSync('umount', [dir]);
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

const disk = mountSmallDisk(SIZE_MB);
if (typeof disk === 'string') console.log(`disk-full: SKIPPED: ${disk}`);

afterAll(async () => {
  await stopAllNodes();
  if (typeof disk !== 'string') disk.unmount();
});

async function post(url: string, body: unknown): Promise<{ status: number; json: any }> {
  const res = await request(`${url}/write/nnt`, { method: 'POST', body: JSON.stringify(body) });
  return { status: res.statusCode, json: await res.body.json() };
}
async function get(url: string, path: string): Promise<{ status: number; json: any }> {
  const res = await request(`${url}${path}`);
  return { status: res.statusCode, json: await res.body.json() };
}
const batch = (b: number) =>
  Array.from({ length: BATCH }, (_, k) => {
    const i = b * BATCH + k;
    return { metric: `full.m${i % SERIES}`, id: UUID, offset: T0 + Math.floor(i / SERIES) * 60, count: 1, value: i };
  });
/** Writes zeros to `file` until the file system has no room left. */
function fillUp(file: string): void {
  const fd = openSync(file, 'w');
  try {
    for (const chunk of [Buffer.alloc(1 << 20), Buffer.alloc(4096)]) {
      for (;;) {
        try {
          writeSync(fd, chunk);
        } catch {
          break;
        }
      }
    }
  } finally {
    closeSync(fd);
  }
}
/** Which record index a (series, ts) holds. */
const indexOf = (s: number, ts: number) => ((ts - T0) / 60) * SERIES + s;

async function counts(url: string, s: number, from: number, to: number): Promise<Array<[number, number | null]>> {
  const r = await get(url, `/rollup/${UUID}/full.m${s}?start_ts=${from}.000&end_ts=${to}.000&rollup_span=60s&type=average&get_engine=nnt`);
  expect(r.status).toBe(200);
  return r.json;
}
async function sweep(url: string, before: number): Promise<void> {
  const res = await request(`${url}/sweep_delete`, { method: 'DELETE', headers: { 'X-Service-Delete-Time': String(before) } });
  expect(res.statusCode, await res.body.text()).toBe(200);
  await expect.poll(async () => (await get(url, '/sweep_delete')).json.nnt.running, { timeout: 60_000, message: 'the sweep to finish' }).toBe('false');
}

describe.skipIf(typeof disk === 'string')('disk full', () => {
  it(`on a ${SIZE_MB} MiB disk: 507 disk_full instead of acknowledging, reads and sweeps go on, a restart on the full disk works, writes resume after a sweep`, async () => {
    const { dir } = disk as { dir: string };
    const data = join(dir, 'data');
    mkdirSync(data);
    let node: TestNode = await startNode({ dataDir: data, rollups: [60, 300, 1800], args: ['--disk-reserve', String(RESERVE)] });
    const acked = new Set<number>();
    let b = 0;
    let refused: { status: number; json: any } | undefined;
    // Fill it up. A 507 while the node still applies its log is back-pressure: retried. The disk
    // is full once a 507 lasts and less than the reserve is free on it twice over (the node takes
    // writes again only once it can write its reserve back with as much again free).
    let early507 = 0;
    const free = (): number => {
      const st = statfsSync(dir);
      return st.bavail * st.bsize;
    };
    for (; b < 5000 && refused === undefined; b++) {
      let tries = 0;
      const r = await vi.waitFor(
        async () => {
          const r = await post(node.url, batch(b));
          // Accepted, or an answer other than disk_full (checked below, at once): no retry.
          if (r.status !== 507 || r.json.code !== 'disk_full') return r;
          if (++tries > 10 && free() < 2 * RESERVE) return r;
          early507++;
          throw new Error(`507 for a minute with ${free()} bytes free: the node never took writes again`);
        },
        { timeout: 60_000, interval: 200 },
      );
      if (r.status === 200) {
        for (let k = 0; k < BATCH; k++) acked.add(b * BATCH + k);
        continue;
      }
      expect(r.status, JSON.stringify(r.json)).toBe(507);
      expect(r.json.code).toBe('disk_full');
      refused = r;
    }
    b--;
    expect(refused?.status, 'the disk never filled up').toBe(507);
    const filledWith = acked.size;
    const freeWhenFull = free();
    // Status and reads still answer.
    expect((await get(node.url, '/sweep_delete')).status).toBe(200);
    const lastTs = T0 + Math.floor((filledWith - 1) / SERIES) * 60;
    const mid = T0 + Math.floor(filledWith / SERIES / 2) * 60;
    expect((await counts(node.url, 0, T0, T0 + 600)).every(([, v]) => v !== null)).toBe(true);

    // Stop it, fill what its stop freed (another program filling the disk), and start again.
    await node.stop();
    fillUp(join(dir, 'filler'));
    const freeAtRestart = free();
    expect(freeAtRestart).toBeLessThan(64 * 1024);
    node = await node.restart();
    expect((await get(node.url, '/sweep_delete')).status).toBe(200);
    const onFull = await post(node.url, batch(b + 2));
    expect(onFull.status).toBe(507);
    // The answer says what writes wait for: room for the reserve twice over, and how much is free
    // now. The restarted node gives space back (its reserve, its WAL) on its own timer, so by the
    // time it answers there may already be room, not yet noticed by the tick that resumes writes:
    // then the message must say the room is there, not that it must be made.
    expect(onFull.json.needed_free_bytes).toBe(2 * RESERVE);
    const freeNow = onFull.json.free_bytes as number;
    expect(freeNow).toBeGreaterThanOrEqual(0);
    const verb = freeNow < 2 * RESERVE ? 'must be' : 'are';
    const said = new RegExp(`Writes resume once 8\\.0 MiB ${verb} free on its disk \\((\\d+(?:\\.\\d)?) MiB free now\\)`).exec(onFull.json.error as string);
    expect(said, onFull.json.error).not.toBeNull();
    expect(Math.abs(Number(said![1]) - freeNow / 1024 / 1024)).toBeLessThanOrEqual(0.1);
    // A sweep of the older half makes room; then writes are accepted again.
    await sweep(node.url, mid);
    // (the same batch each time: a refused one was never acknowledged)
    await expect.poll(async () => (await post(node.url, batch(b + 3))).status, { timeout: 30_000, interval: 250 }).toBe(200);
    for (let k = 0; k < BATCH; k++) acked.add((b + 3) * BATCH + k);

    // Every acknowledged record at or after the sweep time is there, exactly; none before it.
    let lost = 0;
    let kept = 0;
    let survived = 0;
    const end = T0 + Math.floor(((b + 4) * BATCH) / SERIES) * 60;
    for (let s = 0; s < SERIES; s++) {
      for (const [ts, v] of await counts(node.url, s, T0, end)) {
        const i = indexOf(s, ts);
        if (!acked.has(i)) continue;
        if (ts < mid) {
          if (v !== null) survived++;
        } else if (v === i) kept++;
        else lost++;
      }
    }
    console.log(
      `disk-full: ${SIZE_MB} MiB tmpfs filled with ${filledWith} acknowledged records (up to ${new Date(lastTs * 1000).toISOString()}; ${early507} 507s retried on the way), then 507 disk_full for good with ${freeWhenFull} bytes free; ` +
        `restarted on the full disk (${freeAtRestart} bytes free), swept before ${mid}, writes accepted again; ${kept} kept records read back, ${lost} lost, ${survived} swept records left`,
    );
    expect(lost).toBe(0);
    expect(survived).toBe(0);
    expect(kept).toBeGreaterThan(filledWith / 3);
    await node.stop();
  }, 120_000);
});
