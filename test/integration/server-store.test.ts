import { afterEach, describe, expect, it } from 'vitest';
import { execFileSync } from 'node:child_process';
import { mkdtempSync, readdirSync, readFileSync, rmSync, statSync, truncateSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { SqliteStore, DB_FILE } from '../../src/server/sqlite-store.js';
import type { RollupRowArray } from '../../src/server/store.js';
import type { NntRecord } from '../../src/protocol/index.js';

const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});

function open(dir: string): SqliteStore {
  const s = new SqliteStore({ dataDir: dir, rollups: [60, 300, 1800], histogramRollups: [60] });
  stores.push(s);
  return s;
}
const rec = (offset: number, count: number, value: number): NntRecord => ({
  metric: 'm',
  id: UUID,
  offset,
  count,
  value,
  derivative: 0,
  counter: 0,
  stddev: 0,
  derivative_stddev: 0,
  counter_stddev: 0,
});

/**
 * Writes batches in a separate process that then dies without closing the store (a crash);
 * `thenRun` is more code to run on the store `s` before dying.
 */
function writeAndCrash(dir: string, batches: NntRecord[][], thenRun = ''): void {
  const store = pathToFileURL(join(process.cwd(), 'dist', 'server', 'sqlite-store.js')).href;
  const code = `
    const { SqliteStore } = await import(${JSON.stringify(store)});
    const { readFileSync } = await import('node:fs');
    const s = new SqliteStore({ dataDir: ${JSON.stringify(dir)}, rollups: [60, 300, 1800], histogramRollups: [60] });
    for (const b of JSON.parse(readFileSync(0, 'utf8'))) s.writeNnt(b);
    ${thenRun}
    process.exit(0);`;
  execFileSync(process.execPath, ['--input-type=module', '-e', code], { input: JSON.stringify(batches) });
}

/** The ingest log's files, oldest generation first. */
const logFiles = (dir: string): string[] =>
  readdirSync(dir)
    .filter((f) => /^nnt-\d+\.log$/.test(f))
    .sort((a, b) => Number(a.slice(4, -4)) - Number(b.slice(4, -4)))
    .map((f) => join(dir, f));

const tempDir = (): string => {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-store-'));
  dirs.push(dir);
  return dir;
};
const sqlite = (dir: string): Database.Database => new Database(join(dir, DB_FILE), { readonly: true });
const summary = (rows: RollupRowArray[]): number[][] => rows.map((r) => [r[0], r[1], r[3]]);

describe('SqliteStore ingest log', () => {
  it('holds acknowledged writes that never reached the chunks, and a restart applies them', () => {
    const dir = tempDir();
    writeAndCrash(dir, [[rec(0, 1, 1), rec(60, 1, 3)], [rec(120, 2, 6)]]);
    expect(logFiles(dir).map((f) => statSync(f).size > 100)).toEqual([true]);
    const db = sqlite(dir);
    expect(db.prepare('SELECT count(*) FROM nnt_chunk').pluck().get()).toBe(0);
    db.close();

    const s = open(dir);
    const sid = s.findSeries(UUID, 'm')!;
    expect(summary(s.rollupRows(sid, 60, 0, 300))).toEqual([
      [0, 1, 1],
      [60, 1, 3],
      [120, 2, 6],
    ]);
    expect(summary(s.rollupRows(sid, 300, 0, 300))).toEqual([[0, 4, 4]]);
    expect(summary(s.rollupRows(sid, 1800, 0, 1800))).toEqual([[0, 4, 4]]);
    // Read above through the scratch layer; the background flush applies them, and then the
    // file is gone and the new generation's holds only its 16-byte header.
    expect(logFiles(dir)).toHaveLength(2);
    s.flush();
    expect(logFiles(dir).map((f) => statSync(f).size)).toEqual([16]);
  });

  it('cuts off a torn last frame (never acknowledged) and applies the frames before it', () => {
    const dir = tempDir();
    writeAndCrash(dir, [[rec(0, 1, 1)], [rec(60, 1, 3)]]);
    const [log] = logFiles(dir) as [string];
    const full = statSync(log).size;
    truncateSync(log, full - 5); // the second frame loses its last bytes
    const s = open(dir);
    const sid = s.findSeries(UUID, 'm')!;
    expect(summary(s.rollupRows(sid, 60, 0, 300))).toEqual([[0, 1, 1]]);
  });

  it('never applies a log twice: one left behind by a crash right after its flush is skipped', async () => {
    const dir = tempDir();
    writeAndCrash(dir, [[rec(0, 1, 1)]]);
    const [log] = logFiles(dir) as [string];
    const stale = readFileSync(log);
    const a = open(dir); // applies the log
    a.writeNnt([rec(0, 1, 7)]); // replaces the record
    await a.close();
    // The crash window: the database applied the log, its file was not deleted yet.
    writeFileSync(log, stale);
    const b = open(dir);
    const sid = b.findSeries(UUID, 'm')!;
    expect(summary(b.rollupRows(sid, 60, 0, 60))).toEqual([[0, 1, 7]]);
  });

  it('a crash in the middle of a flush loses nothing and doubles nothing: the generation is applied again', () => {
    const dir = tempDir();
    const other = '00000000-0000-4000-8000-000000000000';
    const batch = [rec(0, 1, 1), rec(60, 2, 3), { ...rec(0, 4, 5), id: other }, { ...rec(60, 1, 1), id: other }];
    // One slice applies one series (a budget of 0 ms), then the process dies.
    writeAndCrash(dir, [batch], 's.flusher.start(); s.flusher.applySlice(0);');
    const s = open(dir);
    // Counts show a doubled record at once; means (count-weighted) to the last bits.
    const [a] = summary(s.rollupRows(s.findSeries(UUID, 'm')!, 300, 0, 300)) as [number[]];
    const [b] = summary(s.rollupRows(s.findSeries(other, 'm')!, 300, 0, 300)) as [number[]];
    expect([a[0], a[1], b[0], b[1]]).toEqual([0, 3, 0, 5]);
    expect(a[2]).toBeCloseTo(7 / 3, 12);
    expect(b[2]).toBeCloseTo(21 / 5, 12);
    expect(summary(s.rollupRows(s.findSeries(UUID, 'm')!, 60, 0, 300))).toEqual([
      [0, 1, 1],
      [60, 2, 3],
    ]);
  });

  it('applies a large backlog of one series in pieces; a crash between two pieces loses and doubles nothing', () => {
    const dir = tempDir();
    // 10,000 records of one series (more than a piece), every 7th written twice (the second wins).
    const batch = Array.from({ length: 10_000 }, (_, i) => rec(i * 60, 1, i));
    const again = batch.filter((_, i) => i % 7 === 0).map((r) => ({ ...r, value: -r.value, count: 2 }));
    writeAndCrash(dir, [batch, again], 's.flusher.start(); s.flusher.applySlice(0); s.flusher.applySlice(0);');
    const s = open(dir);
    const sid = s.findSeries(UUID, 'm')!;
    const want = (i: number): [number, number, number] => (i % 7 === 0 ? [i * 60, 2, i === 0 ? 0 : -i] : [i * 60, 1, i]);
    const check = (): void => {
      expect(summary(s.rollupRows(sid, 60, 0, 600_000))).toEqual(Array.from({ length: 10_000 }, (_, i) => want(i)));
      const b300 = summary(s.rollupRows(sid, 300, 0, 600_000));
      expect(b300).toHaveLength(2000);
      for (const [b, count, value] of b300) {
        const xs = [0, 1, 2, 3, 4].map((k) => want(b! / 60 + k));
        expect(count).toBe(xs.reduce((a, x) => a + x[1], 0));
        expect(value).toBeCloseTo(xs.reduce((a, x) => a + x[1] * x[2], 0) / count!, 9);
      }
    };
    check(); // through the scratch layer, over the pieces already applied
    s.flush();
    check();
  });

  it('a sweep after a read applied the logged records early: a crash before the flush does not bring them back', () => {
    const dir = tempDir();
    const batch = Array.from({ length: 2000 }, (_, i) => rec(i * 60, 1, i));
    // The read applies the 2,000 waiting records (a hot series); the sweep then deletes the first half.
    writeAndCrash(dir, [batch], `const sid = s.findSeries(${JSON.stringify(UUID)}, 'm'); s.rollupRows(sid, 60, 0, 200000); s.sweepNnt(sid, 60000, [60, 300, 1800], true);`);
    const s = open(dir);
    const rows = summary(s.rollupRows(s.findSeries(UUID, 'm')!, 60, 0, 200_000));
    expect(rows).toHaveLength(1000);
    expect(rows[0]).toEqual([60_000, 1, 1000]);
  });

  it('takes writes while a flush is under way, and reads see both', async () => {
    const dir = tempDir();
    const s = open(dir);
    s.writeNnt([rec(0, 1, 1)]);
    (s as unknown as { flusher: { start(): void } }).flusher.start(); // its slices wait for the event loop
    s.writeNnt([rec(60, 1, 3)]); // into the next generation
    const sid = s.findSeries(UUID, 'm')!;
    expect(summary(s.rollupRows(sid, 300, 0, 300))).toEqual([[0, 2, 2]]);
    await s.close();
    expect(logFiles(dir).map((f) => statSync(f).size)).toEqual([16]);
  });

  it('leaves no empty log files behind over restarts without writes', async () => {
    const dir = tempDir();
    for (let i = 0; i < 4; i++) await open(dir).close();
    stores.splice(0);
    expect(logFiles(dir)).toHaveLength(1);
  });

  it('replays parts from the log too', () => {
    const dir = tempDir();
    const withParts: NntRecord = {
      ...rec(60, 2, 3),
      parts: [
        30,
        [
          { count: 1, value: 2, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 },
          { count: 1, value: 4, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 },
        ],
      ],
    };
    writeAndCrash(dir, [[rec(0, 1, 1), withParts]]);
    const s = open(dir);
    const rows = s.rawRows(s.findSeries(UUID, 'm')!, 0, 120);
    expect(rows.map((r) => [r[0], r[1], r[2], r[8]])).toEqual([
      [0, 1, 1, null],
      [60, 2, 3, 30],
    ]);
    expect([...new Float64Array(rows[1]![9]!.buffer.slice(rows[1]![9]!.byteOffset, rows[1]![9]!.byteOffset + 112))].filter((_, i) => i % 7 === 1)).toEqual([2, 4]);
  });

  it('refuses a data directory of another schema version, naming both', async () => {
    const dir = tempDir();
    await open(dir).close();
    const db = new Database(join(dir, DB_FILE));
    db.prepare("UPDATE meta SET value = '2' WHERE key = 'schema'").run();
    db.close();
    expect(() => open(dir)).toThrow(/schema version 2; this tsnode understands 4/);
  });

  it('lets one store at a time use a data directory, and takes over a lock left by a dead process', async () => {
    const dir = tempDir();
    writeAndCrash(dir, [[rec(0, 1, 1)]]); // dies holding the lock
    const a = open(dir);
    expect(() => open(dir)).toThrow(new RegExp(`in use by this process \\(${process.pid}\\)`));
    await a.close();
    expect(() => open(dir)).not.toThrow();
  });

  it('releases the lock when it cannot start', async () => {
    const dir = tempDir();
    await open(dir).close();
    const other = (): SqliteStore => new SqliteStore({ dataDir: dir, rollups: [60, 300], histogramRollups: [60] });
    expect(other).toThrow(/created with --rollups 60,300,1800/);
    expect(() => open(dir)).not.toThrow(); // not "in use"
  });

  it('checkpoints the WAL into the database file on its own thread, without a close', async () => {
    const dir = tempDir();
    const s = open(dir);
    const size0 = statSync(join(dir, DB_FILE)).size;
    s.writeNnt(Array.from({ length: 2000 }, (_, i) => rec(i * 60, 1, i)));
    s.flush();
    await expect.poll(() => statSync(join(dir, DB_FILE)).size, { timeout: 10_000 }).toBeGreaterThan(size0);
  });

  it('keeps every write readable at once, before and after the flush that moves it into the chunks', () => {
    const dir = tempDir();
    const s = open(dir);
    s.writeNnt([rec(0, 1, 1), rec(60, 1, 3)]);
    const sid = s.findSeries(UUID, 'm')!;
    expect(summary(s.rollupRows(sid, 300, 0, 300))).toEqual([[0, 2, 2]]); // read through the scratch layer
    s.writeNnt([rec(60, 1, 5)]); // a replace: the bucket is recomputed from the raw entries
    expect(summary(s.rollupRows(sid, 300, 0, 300))).toEqual([[0, 2, 3]]);
    s.flush();
    const db = sqlite(dir);
    expect(db.prepare('SELECT count(*) FROM nnt_chunk').pluck().get()).toBe(3); // one chunk per span
    db.close();
  });
});

describe('SqliteStore series kinds', () => {
  it('the sweeper walks only the series that have data of the type being swept', () => {
    const s = new SqliteStore({ dataDir: null, rollups: [60], histogramRollups: [60] });
    stores.push(s);
    s.writeNnt([rec(0, 1, 1)]);
    s.writeText([{ metric: 't', id: UUID, offset: 0, value: 'x' }]);
    s.writeText([{ metric: 'm', id: UUID, offset: 0, value: 'y' }]);
    s.writeHistogram([{ metric: 'h', id: UUID, offset: 0, period: 60, histogram: 'AAAA' }]);
    const names = (type: 'nnt' | 'text' | 'histogram'): string[] => s.listSeries(0, 100, type).map((r) => r.metric);
    expect(names('nnt')).toEqual(['m']);
    expect(names('text')).toEqual(['m', 't']);
    expect(names('histogram')).toEqual(['h']);
  });
});
