import { afterEach, describe, expect, it, vi } from 'vitest';
import { execFileSync } from 'node:child_process';
import { cpSync, existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { LOCK_FILE, SqliteStore, StoreOpenError } from '../../src/server/sqlite-store.js';
import { startServer, type RunningNode } from '../../src/server/server.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { UUID, call, nnt, rollup, write } from './server-helpers.js';

// The ingest log's writes, failable on demand (a full disk).
const faults = vi.hoisted(() => ({ failNext: 0 }));
vi.mock('node:fs', async (importOriginal) => {
  const real = await importOriginal<typeof import('node:fs')>();
  return {
    ...real,
    writeSync: (...args: Parameters<typeof real.writeSync>) => {
      if (faults.failNext > 0 && --faults.failNext === 0) {
        throw Object.assign(new Error('ENOSPC: no space left on device, write'), { code: 'ENOSPC' });
      }
      return (real.writeSync as (...a: unknown[]) => number)(...args);
    },
  };
});

const dirs: string[] = [];
const nodes: RunningNode[] = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  faults.failNext = 0;
  vi.useRealTimers();
  await Promise.all(stores.splice(0).map((s) => s.close()));
  for (const n of nodes.splice(0)) await n.close();
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tsnode-logfault-'));
  dirs.push(d);
  return d;
};
/** A copy of a data dir as a kill -9 would leave it (the lock file stays out: opening it would drop the live node's lock). */
const crashCopy = (dir: string): string => {
  const crashed = tempDir();
  cpSync(dir, crashed, { recursive: true, filter: (src) => !src.endsWith(LOCK_FILE) });
  return crashed;
};
const rec = (offset: number, value: number, metric = 'm'): NntRecord => ({
  metric,
  id: UUID,
  offset,
  count: 1,
  value,
  derivative: 0,
  counter: 0,
  stddev: 0,
  derivative_stddev: 0,
  counter_stddev: 0,
});

/** Writes each batch as one frame in a separate process that then dies without a flush. */
function writeAndCrash(dir: string, batches: NntRecord[][]): void {
  const store = pathToFileURL(join(process.cwd(), 'dist', 'server', 'sqlite-store.js')).href;
  const code = `
    const { SqliteStore } = await import(${JSON.stringify(store)});
    const { readFileSync } = await import('node:fs');
    const s = new SqliteStore({ dataDir: ${JSON.stringify(dir)}, rollups: [60, 300], histogramRollups: [60] });
    for (const b of JSON.parse(readFileSync(0, 'utf8'))) s.writeNnt(b);
    process.exit(0);`;
  execFileSync(process.execPath, ['--input-type=module', '-e', code], { input: JSON.stringify(batches) });
}
const logFile = (dir: string): string =>
  join(
    dir,
    readdirSync(dir).find((f) => /^nnt-\d+\.log$/.test(f))!,
  );
/** Byte offsets of the frames of a log file (12-byte frame headers, 16-byte file header). */
function frameOffsets(buf: Buffer): number[] {
  const out: number[] = [];
  for (let at = 16; at + 12 <= buf.length; at += 12 + buf.readUInt32LE(at + 4)) out.push(at);
  return out;
}
const open = (dir: string, extra: Partial<ConstructorParameters<typeof SqliteStore>[0]> = {}): SqliteStore => {
  const s = new SqliteStore({ dataDir: dir, rollups: [60, 300], histogramRollups: [60], ...extra });
  stores.push(s);
  return s;
};
const values = (s: SqliteStore, metric = 'm'): number[] => s.rollupRows(s.findSeries(UUID, metric)!, 60, 0, 100_000).map((r) => r[3]);

describe('ingest log faults', () => {
  it('a log append that fails (disk full) is a 507 disk_full, not a 500; the log stays readable and later acknowledged writes survive a crash', async () => {
    const dir = tempDir();
    const notices: string[] = [];
    const node = await startServer({ port: 0, dataDir: dir, rollups: [60, 300], diskReserveBytes: 0 }, { onInternalError: () => {}, onNotice: (m) => notices.push(m) });
    nodes.push(node);
    expect((await write(node.url, [nnt(0, { value: 1 })])).status).toBe(200);
    faults.failNext = 2; // the frame header goes out, its payload does not
    const full = await write(node.url, [nnt(60, { value: 2 })]);
    expect(full.status).toBe(507);
    expect(full.json).toMatchObject({ code: 'disk_full' });
    expect(notices.join('\n')).toMatch(/disk full/);
    // Refused until the node sees room again (its next flush tick), then accepted.
    await expect.poll(async () => (await write(node.url, [nnt(120, { value: 3 })])).status, { timeout: 10_000, interval: 100 }).toBe(200);
    // What a kill -9 now leaves on disk: the files as they are (the writes are in the OS).
    const s = open(crashCopy(dir));
    const sid = s.findSeries(UUID, 'cpu')!;
    expect(s.rollupRows(sid, 60, 0, 180).map((x) => [x[0], x[3]])).toEqual([
      [0, 1],
      [120, 3],
    ]);
    expect(await rollup(node.url, { start: '0.000', end: '180.000', span: '60s' })).toEqual([
      [0, 1],
      [60, null],
      [120, 3],
    ]);
  });

  it('a damaged frame in the middle: the start is refused, naming the frame and the records after it, and the log is left as it was', () => {
    const dir = tempDir();
    writeAndCrash(
      dir,
      Array.from({ length: 10 }, (_, b) => Array.from({ length: 100 }, (_, k) => rec((b * 100 + k) * 60, b * 100 + k))),
    );
    const log = logFile(dir);
    const bytes = readFileSync(log);
    const frames = frameOffsets(bytes);
    expect(frames).toHaveLength(10);
    const damaged = Buffer.from(bytes);
    damaged[frames[2]! + 12 + 100]! ^= 0xff; // one byte inside frame 3's payload
    writeFileSync(log, damaged);
    const files = (): Map<string, Buffer> =>
      new Map(
        readdirSync(dir)
          .filter((f) => f.endsWith('.log') || f === 'tsnode.db')
          .map((f) => [f, readFileSync(join(dir, f))]),
      );
    const before = files();
    let err: unknown;
    try {
      open(dir);
    } catch (e) {
      err = e;
    }
    expect(err).toBeInstanceOf(StoreOpenError);
    const msg = (err as Error).message;
    expect(msg).toContain(log);
    expect(msg).toMatch(/\(frame 3\)/);
    expect(msg).toMatch(/7 intact frame\(s\) after them hold 700 acknowledged record\(s\) of 1 series/);
    expect(msg).toContain(`${UUID}/"m"`);
    expect(msg).toContain('--salvage-log');
    expect(readFileSync(log).equals(damaged)).toBe(true); // kept as it was
    expect(files()).toEqual(before); // and so is everything else: no table created, no log started
    // A second try says the same: nothing was applied, marked or deleted.
    expect(() => open(dir)).toThrow(/\(frame 3\)/);
  });

  it('--salvage-log applies every intact frame, gives up only the damaged one, and keeps a copy of the file', () => {
    const dir = tempDir();
    writeAndCrash(
      dir,
      Array.from({ length: 10 }, (_, b) => Array.from({ length: 100 }, (_, k) => rec((b * 100 + k) * 60, b * 100 + k))),
    );
    const log = logFile(dir);
    const bytes = readFileSync(log);
    const frames = frameOffsets(bytes);
    bytes[frames[2]! + 12 + 100]! ^= 0xff;
    writeFileSync(log, bytes);
    const notices: string[] = [];
    const s = open(dir, { salvageLog: true, onNotice: (m) => notices.push(m) });
    const got = values(s);
    expect(got).toHaveLength(900);
    expect(got).toEqual(Array.from({ length: 1000 }, (_, i) => i).filter((i) => i < 200 || i >= 300));
    expect(notices.join('\n')).toMatch(/salvaged .*9 intact frame\(s\).*given up: bytes/);
    expect(readFileSync(`${log}.damaged`).equals(bytes)).toBe(true);
    s.flush();
    expect(existsSync(log)).toBe(false); // applied; the copy stays
  });

  it('a torn last frame is dropped with a notice (it was never acknowledged), the frames before it applied', () => {
    const dir = tempDir();
    writeAndCrash(dir, [[rec(0, 1)], [rec(60, 2)], [rec(120, 3)]]);
    const log = logFile(dir);
    const bytes = readFileSync(log);
    writeFileSync(log, bytes.subarray(0, bytes.length - 7));
    const notices: string[] = [];
    const s = open(dir, { onNotice: (m) => notices.push(m) });
    expect(values(s)).toEqual([1, 2]);
    expect(notices.join('\n')).toMatch(/dropped a torn last write/);
  });

  it('a damaged file header with intact frames after it is damage too, not an empty file', () => {
    const dir = tempDir();
    writeAndCrash(dir, [[rec(0, 1)], [rec(60, 2)]]);
    const log = logFile(dir);
    const bytes = readFileSync(log);
    bytes[0] = bytes[0]! ^ 0xff;
    writeFileSync(log, bytes);
    expect(() => open(dir)).toThrow(/2 intact frame\(s\) after them hold 2 acknowledged record/);
    expect(existsSync(log)).toBe(true);
  });
});

describe('flush faults', () => {
  it('while flushes fail (disk full) writes are refused with 507 disk_full; reads and sweeps go on; when the flush works again writes are accepted', async () => {
    vi.useFakeTimers({ toFake: ['setInterval', 'clearInterval'] });
    const errors: unknown[] = [];
    const dir = tempDir();
    const node = await startServer({ port: 0, dataDir: dir, rollups: [60, 300], diskReserveBytes: 0 }, { onInternalError: (err) => errors.push(err), onNotice: () => {} });
    nodes.push(node);
    expect((await write(node.url, [nnt(0, { value: 1 }), nnt(600, { value: 5 })])).status).toBe(200);
    faults.failNext = 1; // the new generation's header
    vi.advanceTimersByTime(2000);
    expect(String(errors[0])).toMatch(/flush failed.*ENOSPC/);
    const refused = await write(node.url, [nnt(60, { value: 2 })]);
    expect(refused.status).toBe(507);
    expect(refused.json.code).toBe('disk_full');
    // Reads see the logged writes (the flush did not run), sweeps run.
    expect(await rollup(node.url, { start: '0.000', end: '660.000', span: '300s', type: 'count' })).toEqual([
      [0, 1],
      [300, null],
      [600, 1],
    ]);
    const del = await call(node.url, 'DELETE', '/sweep_delete', { headers: { 'X-Service-Delete-Time': '300' } });
    expect(del.status).toBe(200);
    await node.node.sweeper.settled();
    expect(await rollup(node.url, { start: '0.000', end: '660.000', span: '300s', type: 'count' })).toEqual([
      [0, null],
      [300, null],
      [600, 1],
    ]);
    vi.advanceTimersByTime(2000); // the flush works again
    vi.advanceTimersByTime(2000); // caught up: out of disk-full mode
    expect((await write(node.url, [nnt(60, { value: 2 })])).status).toBe(200);
    expect(errors).toHaveLength(1); // told once, not at every retry
    // And nothing swept comes back after a restart.
    await node.close();
    nodes.splice(0);
    const s = open(dir);
    expect(s.rollupRows(s.findSeries(UUID, 'cpu')!, 60, 0, 1000).map((r) => [r[0], r[3]])).toEqual([
      [60, 2],
      [600, 5],
    ]);
  });
});
