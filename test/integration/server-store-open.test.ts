import { afterEach, describe, expect, it, vi } from 'vitest';
import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import Database from 'better-sqlite3';
import { DB_FILE, LOCK_FILE, SqliteStore } from '../../src/server/sqlite-store.js';
import { lockHolder } from '../../src/server/storage/data-dir-lock.js';
import { closeStorage, openStorage } from '../../src/server/storage/open.js';
import { shardLayout } from '../../src/server/shards.js';
import type { NntRecord } from '../../src/protocol/index.js';

// Opening a data directory: the lock, what a refused open leaves untouched, file modes, memory.
const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dirs: string[] = [];
const stores: SqliteStore[] = [];
afterEach(async () => {
  await Promise.all(stores.splice(0).map((s) => s.close()));
  dirs.splice(0).forEach((d) => rmSync(d, { recursive: true, force: true }));
});
const tempDir = (): string => {
  const d = mkdtempSync(join(tmpdir(), 'tsnode-open-'));
  dirs.push(d);
  return d;
};
const open = (dir: string, extra: Partial<ConstructorParameters<typeof SqliteStore>[0]> = {}): SqliteStore => {
  const s = new SqliteStore({ dataDir: dir, rollups: [60, 300], histogramRollups: [60], ...extra });
  stores.push(s);
  return s;
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
const storeModule = pathToFileURL(join(process.cwd(), 'dist', 'server', 'sqlite-store.js')).href;
/** Every file of a directory and its bytes. */
const snapshot = (dir: string): Map<string, Buffer> => new Map(readdirSync(dir).map((f) => [f, readFileSync(join(dir, f))]));

/**
 * A zombie: a background sleep that exits once its parent has become `sleep 30`, which never
 * reaps it. Tried again when the shell reaped it first (a busy machine).
 */
async function makeZombie(): Promise<{ parent: ChildProcess; zombie: number }> {
  for (let attempt = 0; ; attempt++) {
    const parent = spawn('sh', ['-c', 'sleep 0.2 & echo $!; exec sleep 30'], { stdio: ['ignore', 'pipe', 'ignore'] });
    const zombie = Number(await new Promise<string>((resolve) => parent.stdout.once('data', (d: Buffer) => resolve(d.toString().trim()))));
    const state = (): string => {
      try {
        return readFileSync(`/proc/${zombie}/stat`, 'utf8');
      } catch {
        return 'gone';
      }
    };
    // The child exits after 0.2 s and its parent never reaps it: a zombie, unless it is already gone.
    await vi
      .waitFor(
        () => {
          if (!state().includes(') Z ') && state() !== 'gone') throw new Error('still running');
        },
        { timeout: 5000, interval: 20 },
      )
      .catch(() => undefined);
    if (state().includes(') Z ')) return { parent, zombie };
    parent.kill('SIGKILL');
    if (attempt === 4) throw new Error(`could not make a zombie: /proc/${zombie}/stat is ${state()}`);
  }
}

describe('the data directory lock', () => {
  it('is held by the OS: a second store in this process, or another process, is refused while the first lives', () => {
    const dir = tempDir();
    const a = open(dir);
    expect(() => open(dir)).toThrow(new RegExp(`in use by this process \\(${process.pid}\\)`));
    const other = `const { SqliteStore } = await import(${JSON.stringify(storeModule)});
      try { new SqliteStore({ dataDir: ${JSON.stringify(dir)}, rollups: [60, 300], histogramRollups: [60] }); console.log('OPENED'); }
      catch (e) { console.log(e.message); }`;
    const out = execFileSync(process.execPath, ['--input-type=module', '-e', other], { encoding: 'utf8' });
    expect(out).toMatch(new RegExp(`in use by process ${process.pid}`));
    expect(lockHolder(join(dir, LOCK_FILE))).toBe(process.pid);
    void a.close();
    stores.splice(0);
    expect(() => open(dir)).not.toThrow();
  });

  it('is let go by a process that dies (kill -9): the next start needs no cleanup', async () => {
    const dir = tempDir();
    const child = spawn(process.execPath, [
      '--input-type=module',
      '-e',
      `const { SqliteStore } = await import(${JSON.stringify(storeModule)});
      new SqliteStore({ dataDir: ${JSON.stringify(dir)}, rollups: [60, 300], histogramRollups: [60] }); console.log('LOCKED'); setInterval(() => {}, 1000);`,
    ]);
    await new Promise<void>((resolve) => child.stdout.on('data', (d: Buffer) => d.toString().includes('LOCKED') && resolve()));
    expect(() => open(dir)).toThrow(new RegExp(`in use by process ${child.pid}`));
    const gone = new Promise((r) => child.once('exit', r));
    child.kill('SIGKILL');
    await gone;
    expect(existsSync(join(dir, LOCK_FILE))).toBe(true); // left behind, and harmless
    expect(() => open(dir)).not.toThrow();
  });

  it('an old-style lock file naming a live unrelated process, or a zombie, blocks nothing', async () => {
    const { parent, zombie } = await makeZombie();
    try {
      for (const pid of [parent.pid!, zombie, process.pid, 1]) {
        const dir = tempDir();
        writeFileSync(join(dir, LOCK_FILE), `${pid}\n`);
        const s = open(dir);
        s.writeNnt([rec(0, 1)]);
        // Awaited: a close still flushing while afterEach removes the directory fails it (ENOTEMPTY).
        await s.close();
        stores.splice(0);
      }
    } finally {
      parent.kill('SIGKILL');
    }
  });

  it('a lock file that is neither ours nor an old pid file is not touched: the start is refused saying why', () => {
    const dir = tempDir();
    writeFileSync(join(dir, LOCK_FILE), 'something else entirely, longer than a pid');
    expect(() => open(dir)).toThrow(/is not a tsnode lock file/);
    expect(readFileSync(join(dir, LOCK_FILE), 'utf8')).toBe('something else entirely, longer than a pid');
  });
});

describe('a refused open changes nothing', () => {
  it('a database of another schema version: every file stays byte for byte, nothing is added but the lock', () => {
    const dir = tempDir();
    const db = new Database(join(dir, DB_FILE));
    db.exec("CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID; INSERT INTO meta VALUES ('schema', '2'); CREATE TABLE nnt (x);");
    db.close();
    writeFileSync(join(dir, 'nnt-4.log'), Buffer.alloc(64, 7));
    const before = snapshot(dir);
    expect(() => open(dir)).toThrow(/schema version 2; this tsnode understands 4/);
    const after = snapshot(dir);
    after.delete(LOCK_FILE);
    expect(after).toEqual(before);
  });

  it('a database of other rollups, and a file that is no tsnode database, the same', async () => {
    const dir = tempDir();
    await open(dir).close();
    stores.splice(0);
    const before = snapshot(dir);
    expect(() => new SqliteStore({ dataDir: dir, rollups: [60, 600], histogramRollups: [60] })).toThrow(/created with --rollups 60,300/);
    expect(snapshot(dir)).toEqual(before);
    const other = tempDir();
    const db = new Database(join(other, DB_FILE));
    db.exec('CREATE TABLE mine (x); INSERT INTO mine VALUES (1);');
    db.close();
    const theirs = snapshot(other);
    expect(() => open(other)).toThrow(/is not a tsnode database/);
    const now = snapshot(other);
    now.delete(LOCK_FILE);
    expect(now).toEqual(theirs);
  });

  it('a changed shard size is refused naming the period; a histogram period added or dropped is not', async () => {
    const dir = tempDir();
    await open(dir).close();
    stores.splice(0);
    const before = snapshot(dir);
    const bigger = shardLayout([60, 300], [60], { nnt: new Map([[60, 7 * 86_400]]) });
    expect(() => new SqliteStore({ dataDir: dir, rollups: [60, 300], histogramRollups: [60], shards: bigger })).toThrow(/changed: nnt:60 91440 -> 609600/);
    expect(snapshot(dir)).toEqual(before);
    await open(dir, { histogramRollups: [60, 300, 1800] }).close();
    await open(dir, { histogramRollups: [] }).close();
  });

  it('log files left beside a deleted database are not replayed into new series: the start is refused, the files kept', () => {
    const dir = tempDir();
    const code = `const { SqliteStore } = await import(${JSON.stringify(storeModule)});
      const s = new SqliteStore({ dataDir: ${JSON.stringify(dir)}, rollups: [60, 300], histogramRollups: [60] });
      s.writeNnt(${JSON.stringify([rec(0, 1, 'old')])}); process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', code]);
    for (const f of readdirSync(dir)) if (f.startsWith(DB_FILE)) rmSync(join(dir, f));
    const logs = readdirSync(dir).filter((f) => f.endsWith('.log'));
    expect(logs).toHaveLength(1);
    const before = snapshot(dir);
    expect(() => open(dir)).toThrow(/has no database \(tsnode\.db\) but holds files of one: .*nnt-\d+\.log/);
    expect(snapshot(dir)).toEqual(before);
  });

  it('a log naming series a (replaced) database does not have is refused too', () => {
    const dir = tempDir();
    const code = `const { SqliteStore } = await import(${JSON.stringify(storeModule)});
      const s = new SqliteStore({ dataDir: ${JSON.stringify(dir)}, rollups: [60, 300], histogramRollups: [60] });
      s.writeNnt(${JSON.stringify([rec(0, 1, 'a'), rec(0, 1, 'b')])}); process.exit(0);`;
    execFileSync(process.execPath, ['--input-type=module', '-e', code]);
    const db = new Database(join(dir, DB_FILE));
    db.exec("DELETE FROM series WHERE metric = 'b'");
    db.close();
    expect(() => open(dir)).toThrow(/holds records of series 2, which the database does not have/);
  });
});

describe('files and memory', () => {
  it('the data directory is made 0700 and every file in it is private to the owner', async () => {
    const parent = tempDir();
    const dir = join(parent, 'data');
    const s = open(dir, { reserveBytes: 1 << 16 });
    s.writeNnt([rec(0, 1)]);
    s.flush();
    s.writeNnt([rec(60, 1)]);
    expect(statSync(dir).mode & 0o777).toBe(0o700);
    const files = readdirSync(dir);
    expect(files).toEqual(expect.arrayContaining([DB_FILE, `${DB_FILE}-wal`, `${DB_FILE}-shm`, LOCK_FILE, 'tsnode.reserve']));
    expect(files.some((f) => /^nnt-\d+\.log$/.test(f))).toBe(true);
    for (const f of files) expect(statSync(join(dir, f)).mode & 0o077, f).toBe(0);
  });

  it("SQLite's page cache is 8 MiB unless --cache-size says otherwise (a fixed cost: memory per series stays low)", () => {
    const cacheKiB = (cacheBytes?: number): number => {
      const opened = openStorage({
        dataDir: tempDir(),
        rollups: [60],
        shards: 'nnt:60=7620',
        salvageLog: false,
        reserveBytes: 0,
        onNotice: () => {},
        ...(cacheBytes ? { cacheBytes } : {}),
      });
      try {
        return -(opened.db.pragma('cache_size', { simple: true }) as number);
      } finally {
        closeStorage(opened);
      }
    };
    expect(cacheKiB()).toBe(8192);
    expect(cacheKiB(64 * 1024 * 1024)).toBe(65536);
  });

  it('the series cache keeps the kinds each series has had (packed with its id, no object per series)', () => {
    const s = new SqliteStore({ dataDir: null, rollups: [60], histogramRollups: [60] });
    stores.push(s);
    s.writeNnt([rec(0, 1, 'both')]);
    s.writeText([{ metric: 'both', id: UUID, offset: 0, value: 'x' }]);
    s.writeNnt([rec(60, 2, 'both')]);
    const id = s.findSeries(UUID, 'both')!;
    expect(s.listSeries(0, 10, 'nnt').map((r) => r.id)).toEqual([id]);
    expect(s.listSeries(0, 10, 'text').map((r) => r.id)).toEqual([id]);
    expect(s.rollupRows(id, 60, 0, 120).map((r) => r[3])).toEqual([1, 2]);
  });

  it('the series cache gives memory back: it never holds more than its bound', () => {
    const s = new SqliteStore({ dataDir: null, rollups: [60], histogramRollups: [60], seriesCacheSize: 100 });
    stores.push(s);
    for (let b = 0; b < 10; b++) s.writeNnt(Array.from({ length: 100 }, (_, i) => rec(0, i, `m${b * 100 + i}`)));
    expect(s.cachedSeries).toBe(100);
    // Evicted series are found again, with their data.
    expect(s.rollupRows(s.findSeries(UUID, 'm5')!, 60, 0, 60).map((r) => r[3])).toEqual([5]);
    s.writeNnt([rec(60, 7, 'm5')]);
    expect(s.rollupRows(s.findSeries(UUID, 'm5')!, 60, 0, 120).map((r) => r[3])).toEqual([5, 7]);
    expect(s.listSeries(0, 2000, 'nnt')).toHaveLength(1000);
  });
});
