/**
 * Opening a data directory, in an order that changes nothing until every check passed: the
 * directory (made 0700), the lock, the disk's room, then the database and the ingest log are
 * checked on a read-only connection (a data dir of another schema or other rollups, a damaged log,
 * or a log without its database is refused as it is), and only then opened for writing and given
 * the tables it lacks. Nothing stays open or locked after a failed start.
 */
import type Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { DataDirLockError } from '../errors.js';
import { lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { releaseReserveAtStart } from './disk-full.js';
import { DiskReserve } from './disk-reserve.js';
import { IngestLog, LogDamageError, logFilesWithData } from './ingest-log.js';
import { decodeLog } from './log-payload.js';
import { LOG_ENTRY } from '../packed-write.js';
import { appliedGeneration, checkCompatible, configure, createSchema, DB_FILE, openDatabase, withReadOnly } from './schema.js';
import { StoreOpenError } from './store-open-error.js';

export interface OpenOptions {
  /** Directory for the database file, or null for memory. */
  dataDir: string | null;
  rollups: readonly number[];
  /** The shard layout as one line (describeLayout): a data dir keeps the one it was created with. */
  shards: string;
  /** Apply the intact frames of a damaged ingest log instead of refusing to start. */
  salvageLog: boolean;
  /** Bytes kept back in the disk reserve (0: none). */
  reserveBytes: number;
  /** The SQLite page cache, bytes (default DEFAULT_CACHE_BYTES). */
  cacheBytes?: number;
  onNotice: (message: string) => void;
}

/** What an open data directory holds (in memory: a database alone). */
export interface OpenedStorage {
  db: Database.Database;
  /** The database file, or null (in memory). */
  file: string | null;
  lock: DataDirLock | null;
  log: IngestLog | null;
  reserve: DiskReserve | null;
  /** The disk was nearly full at start: the reserve was given back, and writes start refused. */
  startedFull: boolean;
}

export function openStorage(opts: OpenOptions): OpenedStorage {
  const { dataDir, rollups, shards } = opts;
  if (dataDir === null) {
    const db = openDatabase(':memory:', false);
    try {
      configure(db, false, true, opts.cacheBytes);
      createSchema(db, rollups, shards, 'new');
    } catch (err) {
      db.close();
      throw err;
    }
    return { db, file: null, lock: null, log: null, reserve: null, startedFull: false };
  }
  try {
    makeDirs(dataDir);
  } catch (err) {
    throw new StoreOpenError(`cannot create data directory ${dataDir}: ${(err as Error).message}`);
  }
  let lock: DataDirLock;
  try {
    lock = lockDataDir(dataDir);
  } catch (err) {
    throw err instanceof DataDirLockError ? new StoreOpenError(err.message) : err;
  }
  const file = join(dataDir, DB_FILE);
  let db: Database.Database | undefined;
  let log: IngestLog | null = null;
  try {
    const reserve = new DiskReserve(dataDir, opts.reserveBytes);
    const startedFull = releaseReserveAtStart(reserve, dataDir, opts.onNotice);
    const fresh = !existsSync(file) || statSync(file).size === 0;
    if (fresh) refuseStrayLog(dataDir);
    const inspect = (probe: Database.Database | null): 'new' | 'existing' => {
      const existing = probe === null ? 'new' : checkCompatible(probe, rollups, shards);
      log = openLog(dataDir, existing === 'new' || probe === null ? 0 : appliedGeneration(probe), opts.salvageLog, probe);
      return existing;
    };
    const existing = fresh ? inspect(null) : withReadOnly(file, inspect);
    db = openDatabase(file, false);
    if (fresh) chmodSync(file, 0o600);
    configure(db, true, fresh, opts.cacheBytes);
    createSchema(db, rollups, shards, existing);
    return { db, file, lock, log, reserve, startedFull };
  } catch (err) {
    if (db?.open) db.close();
    (log as IngestLog | null)?.close();
    lock.release();
    throw err;
  }
}

/** Lets go of everything openStorage opened (a start that failed after it). */
export function closeStorage(opened: OpenedStorage): void {
  if (opened.db.open) opened.db.close();
  opened.log?.close();
  opened.lock?.release();
}

/** Opens the ingest log; a damaged one is refused with what is at risk (see damageMessage). */
function openLog(dataDir: string, applied: number, salvage: boolean, probe: Database.Database | null): IngestLog {
  try {
    return new IngestLog(dataDir, applied, { salvage });
  } catch (err) {
    if (err instanceof LogDamageError) throw new StoreOpenError(damageMessage(err, probe));
    throw new StoreOpenError(`cannot open the ingest log in ${dataDir}: ${(err as Error).message}`);
  }
}

/** Tells the operator what opening the log found: torn tails dropped, damage salvaged around. */
export function reportLogFindings(log: IngestLog, onNotice: (message: string) => void): void {
  for (const t of log.findings.tornTails) {
    onNotice(`ingest log ${t.file}: dropped a torn last write (${t.bytes} bytes at ${t.from}), cut off by a crash before it was acknowledged`);
  }
  for (const d of log.findings.salvaged) {
    const lost = d.damage.map((x) => `bytes ${x.from}-${x.to - 1} (after frame ${x.framesBefore})`).join(', ');
    onNotice(`salvaged ${d.file}: applying its ${d.frames} intact frame(s); unreadable and given up: ${lost}; the damaged file is kept as ${d.copy}`);
  }
}

/** The refusal for a damaged log: which frame, which records, and how to salvage the rest. */
function damageMessage(err: LogDamageError, db: Database.Database | null): string {
  const first = err.damage[0]!;
  let records = 0;
  const series = new Set<number>();
  for (const f of err.framesAfter) {
    const { entries } = decodeLog(f.payload);
    records += entries.length / LOG_ENTRY;
    for (let o = 0; o < entries.length; o += LOG_ENTRY) series.add(entries[o]!);
  }
  let byId: Database.Statement<[number], { uuid: string; metric: string }> | undefined;
  try {
    byId = db?.prepare<[number], { uuid: string; metric: string }>('SELECT uuid, metric FROM series WHERE id = ?');
  } catch {
    // no series table: the numbers will do
  }
  const names = [...series].slice(0, 3).map((sid) => {
    const row = byId?.get(sid);
    return row ? `${row.uuid}/${JSON.stringify(row.metric)}` : `series ${sid}`;
  });
  const more = series.size > names.length ? ` and ${series.size - names.length} more` : '';
  return (
    `the ingest log ${err.file} is damaged: bytes ${first.from}-${first.to - 1} (frame ${first.framesBefore + 1}) cannot be read, ` +
    `and ${err.framesAfter.length} intact frame(s) after them hold ${records} acknowledged record(s) of ${series.size} series (${names.join(', ')}${more}) ` +
    `that are not in the database yet${err.damage.length > 1 ? ` (${err.damage.length} damaged stretches in all)` : ''}. ` +
    `Refusing to start so they are not lost; nothing was changed. To apply every intact frame and give up the unreadable ones, ` +
    `copy the data directory somewhere safe, then start once with --salvage-log (a copy of the file is kept as ${err.file}.damaged)`
  );
}

/**
 * A new database beside log files that hold writes: the database they belong to is gone (deleted
 * or replaced), and their series ids mean nothing in a new one. They are not replayed into new
 * series, nor deleted: the start is refused with what to do.
 */
function refuseStrayLog(dir: string): void {
  const stray = logFilesWithData(dir);
  if (existsSync(join(dir, `${DB_FILE}-wal`)) && statSync(join(dir, `${DB_FILE}-wal`)).size > 0) stray.push(join(dir, `${DB_FILE}-wal`));
  if (stray.length === 0) return;
  throw new StoreOpenError(
    `${dir} has no database (${DB_FILE}) but holds files of one: ${stray.join(', ')}. Their records cannot be replayed without the database they belong to; ` +
      `nothing was changed. Restore ${DB_FILE}, or move those files away to start with an empty store`,
  );
}

/**
 * `mkdir -p`, one level at a time: Node's recursive mkdirSync spins forever under /proc (seen on
 * Node 20), where a plain mkdir fails at once with a clear error. The data directory itself is
 * made 0700: the data is nobody else's business.
 */
function makeDirs(dir: string): void {
  const missing: string[] = [];
  let cur = resolve(dir);
  while (!existsSync(cur)) {
    missing.push(cur);
    const parent = dirname(cur);
    if (parent === cur) break;
    cur = parent;
  }
  const leaf = resolve(dir);
  for (const d of missing.reverse()) mkdirSync(d, d === leaf ? 0o700 : undefined);
  if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
}
