/**
 * The database's shape: its tables, its connection settings, and the checks that tell whether an
 * existing database is one this tsnode can use, made on a read-only connection before anything is
 * written.
 *
 * `series` maps (uuid, metric) to an integer id; the data tables are WITHOUT ROWID, keyed by
 * series first, so range reads and per-series sweeps are index walks.
 * - `nnt_chunk`: numeric data in chunks (see chunks.ts), keyed (series, span, chunk start).
 * - `nnt_parts`: the `parts` of the records that have them.
 * - `nnt_skip`: which logged records of a series a sweep already dealt with (see log-replay.ts).
 * - `meta`: the schema version, the rollups, the shard layout, the last applied log generation
 *   and, per larger span, the latest time a sweep deleted before (`swept_before:<span>`).
 *
 * Time shards (see shards.ts) are key ranges: `nnt_chunk_time`, `nnt_parts_time` and
 * `histogram_time` index the data by time, so a shard is listed with one index seek and removed
 * with one range delete.
 */
import Database from 'better-sqlite3';
import { existsSync, rmSync, statSync } from 'node:fs';
import type { DataType } from '../../protocol/index.js';
import { StoreOpenError } from './store-open-error.js';

type Db = Database.Database;

const SCHEMA_VERSION = '4';
export const DB_FILE = 'tsnode.db';

/** The SQLite page cache of the node's connection unless `serve --cache-size` says otherwise (8 MiB). */
export const DEFAULT_CACHE_BYTES = 8 * 1024 * 1024;

/** Bits of `series.kinds`: which data types a series has had written. */
export const KIND_BIT: Readonly<Record<DataType, number>> = { nnt: 1, text: 2, histogram: 4 };

/** Opens (or creates) the database file; nothing is written yet. */
export function openDatabase(file: string, readonly: boolean): Db {
  try {
    const db = new Database(file, readonly ? { readonly: true, fileMustExist: true } : {});
    db.pragma('busy_timeout = 5000');
    return db;
  } catch (err) {
    throw new StoreOpenError(`cannot open database ${file}: ${(err as Error).message}`);
  }
}

/**
 * Runs `check` on a read-only connection to an existing database file. A read-write connection
 * would checkpoint the WAL as it closes; a read-only one to a WAL database makes -wal and -shm
 * files when there are none, which are removed again after it (the data dir's lock keeps any
 * other node away meanwhile). So a data dir that is refused is left as it was.
 */
export function withReadOnly<T>(file: string, check: (db: Db) => T): T {
  const made = [`${file}-wal`, `${file}-shm`].filter((f) => !existsSync(f));
  const probe = openDatabase(file, true);
  try {
    return check(probe);
  } finally {
    probe.close();
    for (const f of made) if (existsSync(f) && (f.endsWith('-shm') || statSync(f).size === 0)) rmSync(f, { force: true });
  }
}

/**
 * What is in the database already, checked without writing: a data dir of another schema, of
 * other rollups, or not of tsnode at all is refused as it is. 'new' when it holds no tables.
 */
export function checkCompatible(db: Db, rollups: readonly number[], shards: string): 'new' | 'existing' {
  let tables: string[];
  try {
    tables = db.prepare("SELECT name FROM sqlite_master WHERE type = 'table'").pluck().all() as string[];
  } catch (err) {
    throw new StoreOpenError(`cannot open database ${db.name}: ${(err as Error).message}`);
  }
  if (tables.length === 0) return 'new';
  if (!tables.includes('meta')) {
    throw new StoreOpenError(`${db.name} is not a tsnode database (it has tables but no meta table): use another --data-dir`);
  }
  const get = db.prepare('SELECT value FROM meta WHERE key = ?').pluck();
  const version = get.get('schema') as string | undefined;
  if (version !== undefined && version !== SCHEMA_VERSION) {
    throw new StoreOpenError(
      `the data directory has schema version ${version}; this tsnode understands ${SCHEMA_VERSION}: start with an empty --data-dir (the reference node does not convert old data)`,
    );
  }
  const wanted = rollups.join(',');
  const stored = get.get('rollups') as string | undefined;
  if (stored !== undefined && stored !== wanted) {
    throw new StoreOpenError(`the data directory was created with --rollups ${stored}, not ${wanted}: start with the same periods, or use another --data-dir`);
  }
  const storedShards = get.get('shards') as string | undefined;
  const changed = storedShards === undefined ? [] : changedShardSizes(storedShards, shards);
  if (changed.length > 0) {
    throw new StoreOpenError(
      `the data directory was created with shard sizes ${storedShards}, not ${shards} (changed: ${changed.join(', ')}): start with the same --shards, --histogram-shards and --raw-shard, or use another --data-dir`,
    );
  }
  return 'existing';
}

/** Sizes by `kind:period` from the meta signature `nnt:60=91440,300=457200;histogram:60=604800;raw:604800`. */
function shardSizes(signature: string): Map<string, string> {
  const out = new Map<string, string>();
  for (const part of signature.split(';')) {
    const [kind, list = ''] = part.split(':');
    for (const entry of list.split(',')) {
      const [period, size] = entry.includes('=') ? entry.split('=') : ['', entry];
      out.set(`${kind}:${period}`, size!);
    }
  }
  return out;
}

/**
 * The periods whose shard size differs between the stored and the wanted layout. A period only one
 * side has is no conflict: a node may gain or drop a histogram period, and its rows keep their shards.
 */
function changedShardSizes(stored: string, wanted: string): string[] {
  const before = shardSizes(stored);
  const out: string[] = [];
  for (const [key, size] of shardSizes(wanted)) {
    const was = before.get(key);
    if (was !== undefined && was !== size) out.push(`${key.replace(/:$/, '')} ${was} -> ${size}`);
  }
  return out;
}

/** The last ingest-log generation an existing database has applied (0: none). */
export function appliedGeneration(db: Db): number {
  return Number(db.prepare("SELECT value FROM meta WHERE key = 'log_applied'").pluck().get() ?? 0);
}

/** The connection's settings; only a new database takes the page size and auto-vacuum mode. */
export function configure(db: Db, onDisk: boolean, fresh: boolean, cacheBytes: number = DEFAULT_CACHE_BYTES): void {
  // Large pages hold large chunks inline (see CHUNK_ENTRIES). Pages sweeps free can be given
  // back to the file system (incremental_vacuum): what lets a full disk take writes again.
  if (fresh) {
    db.pragma('page_size = 16384');
    db.pragma('auto_vacuum = INCREMENTAL');
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // A negative cache_size is KiB. The page cache is a fixed cost, kept whole once filled: a small
  // default keeps a node's memory per series low, `serve --cache-size` raises it.
  db.pragma(`cache_size = -${Math.max(1, Math.floor(cacheBytes / 1024))}`);
  // On disk a Checkpointer thread checkpoints the WAL (see checkpointer.ts); in memory there
  // is none. The WAL file is cut back to 64 MiB after a checkpoint.
  if (onDisk) db.pragma('wal_autocheckpoint = 0');
  db.pragma('journal_size_limit = 67108864');
  db.pragma('temp_store = MEMORY');
}

/** Creates what is missing; the schema version and rollups are written once (a start on a full disk must not need to write). */
export function createSchema(db: Db, rollups: readonly number[], shards: string, existing: 'new' | 'existing'): void {
  db.exec(`
    CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS series (
      id INTEGER PRIMARY KEY,
      uuid TEXT NOT NULL,
      metric TEXT NOT NULL,
      kinds INTEGER NOT NULL DEFAULT 0,
      UNIQUE (uuid, metric)
    );
    CREATE TABLE IF NOT EXISTS nnt_chunk (
      series_id INTEGER NOT NULL, span INTEGER NOT NULL, chunk_ts INTEGER NOT NULL,
      data BLOB NOT NULL,
      PRIMARY KEY (series_id, span, chunk_ts)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS nnt_parts (
      series_id INTEGER NOT NULL, ts INTEGER NOT NULL, period INTEGER NOT NULL, parts BLOB NOT NULL,
      PRIMARY KEY (series_id, ts)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS nnt_skip (
      series_id INTEGER NOT NULL, generation INTEGER NOT NULL, offset INTEGER NOT NULL, before INTEGER,
      PRIMARY KEY (series_id, generation, offset)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS text_data (
      series_id INTEGER NOT NULL, ts INTEGER NOT NULL, value TEXT NOT NULL,
      PRIMARY KEY (series_id, ts)
    ) WITHOUT ROWID;
    CREATE TABLE IF NOT EXISTS histogram_data (
      series_id INTEGER NOT NULL, period INTEGER NOT NULL, ts INTEGER NOT NULL, histogram TEXT NOT NULL,
      PRIMARY KEY (series_id, period, ts)
    ) WITHOUT ROWID;
    CREATE INDEX IF NOT EXISTS nnt_chunk_time ON nnt_chunk (span, chunk_ts);
    CREATE INDEX IF NOT EXISTS nnt_parts_time ON nnt_parts (ts);
    CREATE INDEX IF NOT EXISTS histogram_time ON histogram_data (period, ts);
  `);
  const get = db.prepare('SELECT value FROM meta WHERE key = ?').pluck();
  const put = db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
  if (existing === 'new' || get.get('schema') === undefined) put.run('schema', SCHEMA_VERSION);
  if (existing === 'new' || get.get('rollups') === undefined) put.run('rollups', rollups.join(','));
  if (existing === 'new' || get.get('shards') === undefined) put.run('shards', shards);
}
