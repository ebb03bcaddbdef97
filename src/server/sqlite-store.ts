/**
 * The SQLite store (better-sqlite3). WAL with synchronous=NORMAL: a committed transaction
 * survives a crash of the node process (not necessarily a power loss), which is what a write
 * acknowledgement promises.
 *
 * Schema: `series` maps (uuid, metric) to an integer id; the data tables are WITHOUT ROWID, keyed
 * by series first, so range reads and per-series sweeps are index walks.
 * - `nnt_chunk`: numeric data in chunks (see chunks.ts), keyed (series, span, chunk start). The
 *   smallest span's chunks hold the records as written, one entry each: the raw data recalc reads
 *   and at the same time that span's rollup. A sweep of the smallest span alone flags its entries
 *   hidden (the rollup is gone, the raw record stays); a sweep of every span deletes them. Every
 *   larger span has chunks of its own, so a per-span sweep removes only that span.
 * - `nnt_parts`: the `parts` of the records that have them.
 * - `nnt_skip`: which logged records of a series a sweep already dealt with (see below).
 *
 * A numeric write is appended to the ingest log (`nnt-<generation>.log` next to the database,
 * see ingest-log.ts) and kept in memory. A flush moves the waiting writes into the chunks: it
 * starts a new log generation for the writes that come meanwhile and applies the ended one
 * series by series, in slices of about FLUSH_SLICE_MS between which the node goes on answering.
 * Its last slice records the generation as applied. Flushes start when enough records are
 * waiting and every FLUSH_INTERVAL_MS, and close finishes them. After a crash (or a stop the
 * flush could not finish) the log is read back at open and applied the same way, in the
 * background: a start never waits for a backlog. A slice applied twice changes nothing, since a
 * write replaces and a replaced bucket is recomputed.
 *
 * Nothing else waits for a flush either. A read of a series with records waiting computes what
 * the flush would make of them on a scratch layer over the chunks (`shadow`) and reads through
 * it, writing nothing. A sweep of such a series applies its waiting records first, or, when it
 * deletes the raw data too, drops the ones before its time from memory; either way a `nnt_skip`
 * row tells a replay after a crash not to bring them back.
 *
 * Larger buckets are merged incrementally from each flush. A bucket that had a record replaced,
 * or that a sweep removed (it lies before the span's last sweep time and is missing), is
 * recomputed from the raw entries; a sweep recomputes the bucket that straddles its time from
 * the raw entries it keeps.
 *
 * When a flush fails (a full disk), writes are refused (507 disk_full, 503 otherwise) until it
 * succeeds again, so the log never outgrows what the database can take; reads and sweeps go on.
 * (An in-memory store has no log.)
 */
import Database from 'better-sqlite3';
import { chmodSync, existsSync, mkdirSync, rmSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { ProtocolError, type DataType, type HistogramRecord, type NntRecord, type TextRecord } from '../protocol/index.js';
import { Checkpointer } from './checkpointer.js';
import { blobOf, chunkStart, chunkWindow, ENTRY, entriesOf, FLAGS, findEntry, lowerBound, mergeEntries, mergeEntryInto } from './chunks.js';
import { DataDirLockError, lockDataDir, type DataDirLock } from './data-dir-lock.js';
import { DiskReserve } from './disk-reserve.js';
import {
  decodeLog,
  encodeLog,
  IngestLog,
  LOG_ENTRY,
  LogDamageError,
  logFilesWithData,
  packRecords,
  type LoggedFrame,
  type LogPosition,
  type PackedWrite,
  type StoredParts,
} from './ingest-log.js';
import { STORED_MEMBERS, type RawRowArray, type RollupRowArray, type SeriesRef, type StoredMember, type Store } from './store.js';

type Db = Database.Database;
type Stmt = Database.Statement;

const SCHEMA_VERSION = '3';

/** Bits of `series.kinds`: which data types a series has had written. */
export const KIND_BIT: Readonly<Record<DataType, number>> = { nnt: 1, text: 2, histogram: 4 };
export const DB_FILE = 'tsnode.db';
export { LOCK_FILE } from './data-dir-lock.js';

/** Why the store cannot open (bad data dir, locked, made with other rollups): a startup error. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}

/** What a flush did, for tests and `tsnode serve --trace-flush`. */
export type FlushEvent =
  | { event: 'start'; generation: number; records: number; series: number }
  | { event: 'done'; generation: number; ms: number }
  | { event: 'failed'; error: string };

export interface SqliteStoreOptions {
  /** Directory for the database file, or null for memory. */
  dataDir: string | null;
  rollups: readonly number[];
  histogramRollups: readonly number[];
  /** Told when a background flush fails (the logged writes stay and are retried). */
  onError?: (err: unknown) => void;
  /** Told what the operator should know: a torn log tail dropped, a disk full, a backlog applied. */
  onNotice?: (message: string) => void;
  /** Apply the intact frames of a damaged ingest log instead of refusing to start (see IngestLog). */
  salvageLog?: boolean;
  /** Bytes kept back in `tsnode.reserve` for a full disk (see disk-reserve.ts); default 0 (none). */
  reserveBytes?: number;
  /** Most series ids kept in memory (default 65,536). */
  seriesCacheSize?: number;
  /** Waiting records that start a flush (default FLUSH_RECORDS). */
  flushRecords?: number;
  /** A pause before each slice of a flush, and one series per slice (ms; default 0: slices of ~20 ms, only the event loop's turn between them). */
  flushPauseMs?: number;
  onFlush?: (e: FlushEvent) => void;
}

/** How often logged writes are moved into the chunks even when few are waiting. */
export const FLUSH_INTERVAL_MS = 2000;
/** Waiting records that start a flush right after the write that logged them. */
export const FLUSH_RECORDS = 250_000;
/** How long one slice of a flush may hold the event loop (its commit comes on top). */
const FLUSH_SLICE_MS = 10;
/** Waiting records past which writes are refused (503 overloaded) until a flush catches up. */
const MAX_PENDING_RECORDS = 4 * FLUSH_RECORDS;
const SERIES_CACHE_SIZE = 65_536;

/** How often the checkpointer thread checkpoints the WAL. */
const CHECKPOINT_INTERVAL_MS = 500;
/** A WAL this large means the checkpointer is behind: the flush checkpoints it itself. */
const WAL_LIMIT_BYTES = 256 * 1024 * 1024;
/** On a full disk, the WAL a flush or sweep may leave before it checkpoints. */
const WAL_TIGHT_BYTES = 256 * 1024;
/** A WAL this large makes flush slices wait for the checkpointer to copy every frame (at most WAL_WAIT_MS). */
const WAL_WAIT_BYTES = 64 * 1024 * 1024;
const WAL_WAIT_MS = 50;

/** Records of one series a flush slice applies at most (a large backlog of one series is applied in pieces). */
const FLUSH_PIECE_RECORDS = 2048;
/** Waiting records of one series past which a read applies them instead of computing them on a scratch layer. */
const VIEW_RECORDS = 512;

/** Column of each stored member in a chunk entry. */
const MEMBER_SLOT: Readonly<Record<StoredMember, number>> = {
  count: 1,
  value: 3,
  stddev: 4,
  derivative: 5,
  derivative_stddev: 6,
  counter: 7,
  counter_stddev: 8,
};

/** Chunks and parts a read computes for the waiting records of one series, over the stored ones. */
interface Shadow {
  chunks: Map<number, Map<number, Float64Array>>;
  parts: Map<number, StoredParts | null>;
}

export class SqliteStore implements Store {
  readonly rollups: readonly number[];
  readonly histogramRollups: readonly number[];
  private readonly db: Db;
  private readonly log: IngestLog | null = null;
  private readonly checkpointer: Checkpointer | null = null;
  private readonly lock: DataDirLock | null = null;
  private readonly reserve: DiskReserve | null = null;
  private closed: Promise<void> | undefined;
  private readonly walFile: string | null = null;
  readonly smallest: number;
  /** `${uuid}${metric}` -> series id and the kinds of data it has (KIND_BIT); least recently used first. */
  private readonly seriesIds = new Map<string, { id: number; kinds: number }>();
  private readonly seriesCacheSize: number;
  /** Logged writes not yet in a flush, per series in arrival order (filled as they come: a flush takes them at once). */
  private pending = new Map<number, SeriesRecords>();
  private pendingRecords = 0;
  /** The log holds frames no flush has taken yet (reads and sweeps may have applied their records already). */
  private logDirty = false;
  /** The flush under way, if any. */
  private job: FlushJob | null = null;
  /** Why the last flush attempt failed (cleared by one that works). */
  private failure: Error | null = null;
  /** The disk filled up: writes are refused until the flush caught up and there is room again. */
  private diskFull = false;
  /** Per larger span, the latest delete time a sweep of it had (a missing bucket before it was swept). */
  private readonly sweptBefore = new Map<number, number>();
  private shadow: Shadow | null = null;
  /** Since when flush slices wait for the checkpointer (see waitForCheckpoint). */
  private walWaitSince: number | null = null;
  private readonly onError: (err: unknown) => void;
  private readonly onNotice: (message: string) => void;
  private readonly onFlush: (e: FlushEvent) => void;
  private readonly flushRecords: number;
  private readonly flushPauseMs: number;
  private readonly flushTimer: NodeJS.Timeout;
  private readonly columnStmts = new Map<string, Stmt>();
  private readonly s: Record<string, Stmt>;

  constructor(opts: SqliteStoreOptions) {
    this.rollups = [...opts.rollups];
    this.histogramRollups = [...opts.histogramRollups];
    this.smallest = this.rollups[0]!;
    this.onError = opts.onError ?? (() => {});
    this.onNotice = opts.onNotice ?? (() => {});
    this.onFlush = opts.onFlush ?? (() => {});
    this.seriesCacheSize = opts.seriesCacheSize ?? SERIES_CACHE_SIZE;
    this.flushRecords = opts.flushRecords ?? FLUSH_RECORDS;
    this.flushPauseMs = opts.flushPauseMs ?? 0;
    const dataDir = opts.dataDir;
    let file = ':memory:';
    if (dataDir !== null) {
      try {
        makeDirs(dataDir);
      } catch (err) {
        throw new StoreOpenError(`cannot create data directory ${dataDir}: ${(err as Error).message}`);
      }
      try {
        this.lock = lockDataDir(dataDir);
      } catch (err) {
        throw err instanceof DataDirLockError ? new StoreOpenError(err.message) : err;
      }
      file = join(dataDir, DB_FILE);
    }
    let db: Db | undefined;
    try {
      let fresh = true;
      if (dataDir !== null) {
        this.reserve = new DiskReserve(dataDir, opts.reserveBytes ?? 0);
        // A disk full at start: what is left of the reserve lets the database and the log open.
        if (this.reserve.size() > 0 && this.reserve.freeBytes() < this.reserve.bytes) {
          const freed = this.reserve.release();
          this.diskFull = true;
          this.onNotice(`the disk of ${dataDir} is nearly full: gave back the reserve (${freed} bytes of ${this.reserve.file}) so the node can start and sweep; writes are refused until there is room again`);
        }
        fresh = !existsSync(file) || statSync(file).size === 0;
        if (fresh) refuseStrayLog(dataDir);
      }
      // Checked before anything is written, on a read-only connection (a read-write one would
      // checkpoint the WAL as it closes): a data dir this tsnode cannot use, or whose log is
      // damaged, is left as it was.
      let existing: 'new' | 'existing' = 'new';
      // A read-only connection to a WAL database makes -wal and -shm files when there are none:
      // removed again after it (the lock keeps any other node away meanwhile).
      const made = [`${file}-wal`, `${file}-shm`].filter((f) => !existsSync(f));
      const probe = fresh ? null : openDatabase(file, true);
      try {
        if (probe !== null) existing = this.checkCompatible(probe);
        if (dataDir !== null) {
          const applied = existing === 'new' ? 0 : Number(probe!.prepare("SELECT value FROM meta WHERE key = 'log_applied'").pluck().get() ?? 0);
          try {
            this.log = new IngestLog(dataDir, applied, { salvage: opts.salvageLog === true });
          } catch (err) {
            if (err instanceof LogDamageError) throw new StoreOpenError(damageMessage(err, probe));
            throw new StoreOpenError(`cannot open the ingest log in ${dataDir}: ${(err as Error).message}`);
          }
        }
      } finally {
        if (probe !== null) {
          probe.close();
          for (const f of made) if (existsSync(f) && (f.endsWith('-shm') || statSync(f).size === 0)) rmSync(f, { force: true });
        }
      }
      this.db = db = openDatabase(file, false);
      if (dataDir !== null && fresh) chmodSync(file, 0o600);
      configure(db, dataDir !== null, fresh);
      this.migrate(existing);
      this.s = this.prepare();
      for (const span of this.rollups.slice(1)) {
        const t = this.s.getMeta!.get(`swept_before:${span}`) as string | undefined;
        if (t !== undefined) this.sweptBefore.set(span, Number(t));
      }
      if (this.log !== null) {
        this.reportFindings(this.log);
        this.replay(this.log.pendingFrames.splice(0));
        this.walFile = `${file}-wal`;
        this.checkpointer = new Checkpointer(file, CHECKPOINT_INTERVAL_MS, this.onError);
        if (!this.diskFull) this.reserve?.ensure();
      }
    } catch (err) {
      // Nothing stays open or locked after a failed start.
      if (db?.open) db.close();
      this.log?.close();
      this.lock?.release();
      throw err;
    }
    this.flushTimer = setInterval(() => this.tick(), FLUSH_INTERVAL_MS);
    this.flushTimer.unref();
    // A backlog read back from the log is applied in the background, starting now.
    if (this.logDirty) setImmediate(() => this.startFlushQuietly());
  }

  /** Series ids held in memory (bounded by seriesCacheSize). */
  get cachedSeries(): number {
    return this.seriesIds.size;
  }

  /**
   * What is in the database already, checked without writing: a data dir of another schema, of
   * other rollups, or not of tsnode at all is refused as it is. 'new' when it holds no tables.
   */
  private checkCompatible(db: Db): 'new' | 'existing' {
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
    const rollups = this.rollups.join(',');
    const stored = get.get('rollups') as string | undefined;
    if (stored !== undefined && stored !== rollups) {
      throw new StoreOpenError(
        `the data directory was created with --rollups ${stored}, not ${rollups}: start with the same periods, or use another --data-dir`,
      );
    }
    return 'existing';
  }

  private migrate(existing: 'new' | 'existing'): void {
    this.db.exec(`
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
    `);
    const get = this.db.prepare('SELECT value FROM meta WHERE key = ?').pluck();
    const put = this.db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)');
    // Written once: a start on a full disk must not need to write.
    if (existing === 'new' || get.get('schema') === undefined) put.run('schema', SCHEMA_VERSION);
    if (existing === 'new' || get.get('rollups') === undefined) put.run('rollups', this.rollups.join(','));
  }

  private prepare(): Record<string, Stmt> {
    const p = (sql: string): Stmt => this.db.prepare(sql);
    return {
      findSeries: p('SELECT id, kinds FROM series WHERE uuid = ? AND metric = ?'),
      seriesById: p('SELECT uuid, metric FROM series WHERE id = ?'),
      insertSeries: p('INSERT INTO series (uuid, metric, kinds) VALUES (?, ?, ?)'),
      addKind: p('UPDATE series SET kinds = kinds | ? WHERE id = ?'),
      listSeries: p('SELECT id, uuid, metric FROM series WHERE id > ? AND (kinds & ?) != 0 ORDER BY id LIMIT ?'),
      getMeta: p('SELECT value FROM meta WHERE key = ?').pluck(),
      putMeta: p('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
      getChunk: p('SELECT data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts = ?').pluck(),
      putChunk: p('INSERT OR REPLACE INTO nnt_chunk (series_id, span, chunk_ts, data) VALUES (?, ?, ?, ?)'),
      deleteChunk: p('DELETE FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts = ?'),
      chunkRange: p('SELECT chunk_ts, data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts >= ? AND chunk_ts < ? ORDER BY chunk_ts').raw(),
      chunksBefore: p('SELECT chunk_ts, data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ? ORDER BY chunk_ts').raw(),
      bytesBefore: p('SELECT total(length(data)) FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ?').pluck(),
      deleteBefore: p('DELETE FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ?'),
      putParts: p('INSERT OR REPLACE INTO nnt_parts (series_id, ts, period, parts) VALUES (?, ?, ?, ?)'),
      deleteParts: p('DELETE FROM nnt_parts WHERE series_id = ? AND ts = ?'),
      partsRange: p('SELECT ts, period, parts FROM nnt_parts WHERE series_id = ? AND ts >= ? AND ts < ?').raw(),
      sweepParts: p('DELETE FROM nnt_parts WHERE series_id = ? AND ts < ?'),
      putSkip: p('INSERT OR REPLACE INTO nnt_skip (series_id, generation, offset, before) VALUES (?, ?, ?, ?)'),
      allSkips: p('SELECT series_id, generation, offset, before FROM nnt_skip').raw(),
      dropSkips: p('DELETE FROM nnt_skip WHERE generation <= ?'),
      putText: p('INSERT OR REPLACE INTO text_data (series_id, ts, value) VALUES (?, ?, ?)'),
      textRange: p('SELECT ts, value FROM text_data WHERE series_id = ? AND ts >= ? AND ts < ? ORDER BY ts').raw(),
      putHistogram: p('INSERT OR REPLACE INTO histogram_data (series_id, period, ts, histogram) VALUES (?, ?, ?, ?)'),
      histogramRange: p('SELECT ts, period, histogram FROM histogram_data WHERE series_id = ? AND period = ? AND ts >= ? AND ts < ? ORDER BY ts').raw(),
      sweepText: p('DELETE FROM text_data WHERE series_id = ? AND ts < ?'),
      sweepHistogram: p('DELETE FROM histogram_data WHERE series_id = ? AND period = ? AND ts < ?'),
    };
  }

  private reportFindings(log: IngestLog): void {
    for (const t of log.findings.tornTails) {
      this.onNotice(`ingest log ${t.file}: dropped a torn last write (${t.bytes} bytes at ${t.from}), cut off by a crash before it was acknowledged`);
    }
    for (const d of log.findings.salvaged) {
      const lost = d.damage.map((x) => `bytes ${x.from}-${x.to - 1} (after frame ${x.framesBefore})`).join(', ');
      this.onNotice(`salvaged ${d.file}: applying its ${d.frames} intact frame(s); unreadable and given up: ${lost}; the damaged file is kept as ${d.copy}`);
    }
  }

  /**
   * The writes an earlier process logged and did not apply, queued for the background flush.
   * Records a sweep already dealt with (nnt_skip) stay out; a log naming series the database does
   * not have belongs to another database and is refused.
   */
  private replay(frames: LoggedFrame[]): void {
    const skips = new Map<number, Array<{ generation: number; offset: number; before: number | null }>>();
    for (const [sid, generation, offset, before] of this.s.allSkips!.all() as Array<[number, number, number, number | null]>) {
      let list = skips.get(sid);
      if (!list) skips.set(sid, (list = []));
      list.push({ generation, offset, before });
    }
    const known = new Set<number>();
    this.logDirty = frames.length > 0;
    for (const f of frames) {
      const batch = decodeLog(f.payload);
      this.pendingRecords += enqueue(this.pending, batch.entries, batch.parts, (sid, ts) => {
        if (!known.has(sid)) {
          if (this.s.seriesById!.get(sid) === undefined) {
            throw new StoreOpenError(
              `the ingest log ${join(this.db.name, '..', `nnt-${f.generation}.log`)} holds records of series ${sid}, which the database does not have: the log belongs to another database (was ${DB_FILE} replaced or deleted?). Nothing was changed; move the nnt-*.log files away to start without them`,
            );
          }
          known.add(sid);
        }
        const rows = skips.get(sid);
        return !rows?.some((r) => (r.generation > f.generation || (r.generation === f.generation && r.offset > f.offset)) && (r.before === null || ts < r.before));
      });
    }
    if (this.pendingRecords > 0) this.onNotice(`applying ${this.pendingRecords} logged record(s) from before the last stop in the background`);
  }

  findSeries(uuid: string, metric: string): number | undefined {
    return this.lookup(uuid, metric)?.id;
  }

  private lookup(uuid: string, metric: string): { id: number; kinds: number } | undefined {
    // A uuid is always 36 characters: it and the metric make a key without a separator.
    const key = uuid + metric;
    const cached = this.seriesIds.get(key);
    if (cached !== undefined) {
      // Most recently used last.
      this.seriesIds.delete(key);
      this.seriesIds.set(key, cached);
      return cached;
    }
    const row = this.s.findSeries!.get(uuid, metric) as { id: number; kinds: number } | undefined;
    if (row !== undefined) this.remember(key, row);
    return row;
  }

  private remember(key: string, entry: { id: number; kinds: number }): void {
    this.seriesIds.set(key, entry);
    if (this.seriesIds.size > this.seriesCacheSize) this.seriesIds.delete(this.seriesIds.keys().next().value!);
  }

  /** Finds or creates a series and notes the kind of data written to it. */
  private seriesFor(uuid: string, metric: string, kind: number): number {
    const found = this.lookup(uuid, metric);
    if (found !== undefined) {
      if ((found.kinds & kind) === 0) {
        this.s.addKind!.run(kind, found.id);
        found.kinds |= kind;
      }
      return found.id;
    }
    const id = Number(this.s.insertSeries!.run(uuid, metric, kind).lastInsertRowid);
    this.remember(uuid + metric, { id, kinds: kind });
    return id;
  }

  /** Runs `fn` in one transaction; on rollback the series created inside it are forgotten. */
  private atomically(fn: () => void): void {
    try {
      this.db.transaction(fn).immediate();
    } catch (err) {
      this.seriesIds.clear();
      throw this.storageError(err);
    }
  }

  /** Throws the refusal when the node cannot take writes now (back-pressure). */
  private refuseWrites(): void {
    if (!this.diskFull && this.reserve !== null && this.reserve.bytes > 0) {
      // Stop before the disk is full: what is acknowledged must still fit in the database.
      const free = this.reserve.freeBytes();
      const backlog = this.log?.unappliedBytes() ?? 0;
      if (free < this.reserve.bytes + 2 * backlog) {
        this.enterDiskFull(new Error(`${free} bytes free, below the ${this.reserve.bytes}-byte reserve plus twice the ${backlog} bytes of log still to apply`));
      }
    }
    if (this.diskFull || (this.failure !== null && isDiskFull(this.failure))) {
      throw new ProtocolError(
        507,
        'disk_full',
        'the node cannot store more data: its disk is full. Nothing was stored; reads and sweeps still work: sweep old data (or free space), then retry',
      );
    }
    // A flush that keeps failing for another reason: writes go on into the log up to one flush's worth.
    if (this.failure !== null && this.pendingRecords >= this.flushRecords) {
      throw new ProtocolError(503, 'store_unavailable', 'the node cannot move logged writes into its database right now (see its log); nothing was stored: retry later');
    }
    if (this.pendingRecords >= MAX_PENDING_RECORDS) {
      throw new ProtocolError(503, 'overloaded', `the node has ${this.pendingRecords} records waiting to be applied; nothing was stored: retry in a moment`);
    }
  }

  /** A disk-full error from storage becomes the 507 (and the node's disk-full mode); others pass. */
  private storageError(err: unknown): unknown {
    if (!isDiskFull(err)) return err;
    this.enterDiskFull(err as Error);
    return new ProtocolError(507, 'disk_full', 'the node cannot store more data: its disk is full. Nothing was stored; reads and sweeps still work: sweep old data (or free space), then retry');
  }

  private enterDiskFull(err: Error): void {
    if (this.diskFull) return;
    this.diskFull = true;
    let freed = 0;
    try {
      freed = this.reserve?.halve() ?? 0;
    } catch {
      // no reserve to give back
    }
    this.onNotice(
      `disk full (${err.message}): writes are refused with 507 disk_full until the logged writes are applied and there is room again; reads and sweeps go on` +
        (freed > 0 ? `; gave back ${freed} bytes of the reserve (${this.reserve!.file}) for them` : ''),
    );
  }

  writeNnt(records: readonly NntRecord[]): number {
    return this.writePacked(packRecords(records));
  }

  /** Logs a write (durable when this returns) and queues it for a flush. */
  writePacked(write: PackedWrite): number {
    const { entries, series, parts } = write;
    const n = entries.length / LOG_ENTRY;
    if (n === 0) return 0;
    this.refuseWrites();
    const sids = new Float64Array(series.id.length);
    let known = true;
    for (let k = 0; k < sids.length && known; k++) {
      const c = this.seriesIds.get(series.id[k]! + series.metric[k]!);
      if (c !== undefined && (c.kinds & KIND_BIT.nnt) !== 0) sids[k] = c.id;
      else known = false;
    }
    // A transaction (which takes the write lock) only when a series is new to the cache.
    if (!known) {
      this.atomically(() => {
        for (let k = 0; k < sids.length; k++) sids[k] = this.seriesFor(series.id[k]!, series.metric[k]!, KIND_BIT.nnt);
      });
    }
    for (let o = 0; o < entries.length; o += LOG_ENTRY) entries[o] = sids[entries[o]!]!;
    // New series are committed first, so the series ids the log holds always exist.
    try {
      this.log?.append(encodeLog(entries, parts));
    } catch (err) {
      throw this.storageError(err);
    }
    if (this.log) this.logDirty = true;
    this.pendingRecords += enqueue(this.pending, entries, parts);
    // The write is durable from here: a flush that cannot start must not fail it.
    if (this.pendingRecords >= this.flushRecords) this.startFlushQuietly();
    return n;
  }

  /** The timer: goes on with the flush (or retries a failed one), and leaves disk-full mode when it can. */
  private tick(): void {
    if (this.job) this.sliceQuietly();
    else this.startFlushQuietly();
    if (!this.db.open) return;
    if (this.diskFull) this.makeRoom();
    const caughtUp = this.failure === null && this.job === null && this.pending.size === 0 && !this.logDirty;
    if (this.diskFull && caughtUp) {
      // Room again: the reserve can be written back, with as much again free (or there is none to keep).
      if (this.reserve === null || this.reserve.ensure()) {
        this.diskFull = false;
        this.onNotice('room on the disk again: writes are accepted');
      }
    } else if (!this.diskFull && this.reserve !== null) {
      this.reserve.ensure();
    }
  }

  /**
   * Copies the WAL into the database and cuts it to nothing when it holds more than WAL_TIGHT
   * bytes (disk-full mode: a WAL that grows while checkpoints fail fills the disk for good).
   * Throws when that fails (no room, or in use): the caller stops writing until the next tick.
   */
  private checkpointIfLarge(): void {
    if (this.walFile !== null && fileSize(this.walFile) > WAL_TIGHT_BYTES) {
      const [busy] = this.db.pragma('wal_checkpoint(TRUNCATE)', { simple: false }) as Array<{ busy: number }>;
      if (busy?.busy) throw Object.assign(new Error('the WAL could not be checkpointed yet (in use)'), { code: 'SQLITE_BUSY' });
    }
  }

  /**
   * In disk-full mode, gives space back to the file system: the WAL cut to nothing once copied
   * into the database, and (a database made with auto_vacuum) pages sweeps freed, a slice per tick.
   */
  private makeRoom(): void {
    if (this.walFile === null) return;
    const until = performance.now() + 200;
    try {
      this.db.pragma('wal_checkpoint(TRUNCATE)');
      if ((this.db.pragma('auto_vacuum', { simple: true }) as number) !== 2) return;
      // A few pages at a time: moving pages takes WAL room, which the checkpoint gives back.
      while ((this.db.pragma('freelist_count', { simple: true }) as number) > 0 && performance.now() < until) {
        this.db.pragma('incremental_vacuum(64)');
        this.db.pragma('wal_checkpoint(TRUNCATE)');
      }
    } catch {
      // still no room: the next tick tries again
    }
  }

  /** Starts a flush of the waiting writes, applied in slices (see the top); no-op when one runs. */
  private startFlush(): void {
    // A flush also runs for a log whose records reads or sweeps applied already: it marks them applied.
    if (this.job !== null || (this.pending.size === 0 && !this.logDirty) || !this.db.open) return;
    const generation = this.log?.rotate() ?? 0;
    this.logDirty = false;
    const series = this.pending;
    this.job = { generation, series, sids: [...series.keys()].sort((x, y) => x - y), next: 0, started: performance.now() };
    this.onFlush({ event: 'start', generation, records: this.pendingRecords, series: series.size });
    this.pending = new Map();
    this.pendingRecords = 0;
    this.nextSlice();
  }

  private nextSlice(): void {
    if (this.flushPauseMs > 0) setTimeout(() => this.sliceQuietly(), this.flushPauseMs).unref();
    else setImmediate(() => this.sliceQuietly());
  }

  /** startFlush for the timer and the writes: a failure is reported, and the timer tries again. */
  private startFlushQuietly(): void {
    try {
      this.startFlush();
    } catch (err) {
      this.flushFailed(err);
    }
  }

  /**
   * Whether flush slices should wait for the checkpointer: the WAL is large and frames are left
   * to copy. A write that begins once every frame is copied reuses the WAL from its start; one
   * that comes sooner makes it grow, and the blocking ways to cut it back (a TRUNCATE here, a
   * RESTART there) held the event loop for 100-250 ms. Waits at most WAL_WAIT_MS at a time.
   */
  private waitForCheckpoint(): boolean {
    if (this.diskFull || this.checkpointer === null || this.walFile === null) return false;
    if (!this.checkpointer.behind || fileSize(this.walFile) < WAL_WAIT_BYTES) {
      this.walWaitSince = null;
      return false;
    }
    this.walWaitSince ??= performance.now();
    return performance.now() - this.walWaitSince < WAL_WAIT_MS;
  }

  /** One slice of the flush under way, then the next one after the event loop had its turn. */
  private sliceQuietly(): void {
    if (this.job === null || !this.db.open) return;
    if (this.waitForCheckpoint()) {
      setTimeout(() => this.sliceQuietly(), 5).unref();
      return;
    }
    try {
      // On a full disk the WAL must not outgrow what a checkpoint can copy into the database.
      if (this.diskFull) this.checkpointIfLarge();
      // Paced (tests): one series per slice, so a flush lasts long enough to be killed in.
      this.applySlice(this.flushPauseMs > 0 ? 0 : FLUSH_SLICE_MS);
    } catch (err) {
      // Rolled back: the slice is retried by the next timer tick (or close).
      this.flushFailed(err);
      return;
    }
    if (this.job !== null) this.nextSlice();
    else if (this.pendingRecords >= this.flushRecords) this.startFlushQuietly();
  }

  /** A flush that failed: reported once per episode; a full disk turns on disk-full mode. */
  private flushFailed(err: unknown): void {
    const e = err instanceof Error ? err : new Error(String(err));
    if (isDiskFull(e)) this.enterDiskFull(e);
    if (this.failure === null || this.failure.message !== e.message) {
      this.onError(new Error(`flush failed (retried every ${FLUSH_INTERVAL_MS / 1000} s; writes are refused while it fails on a full disk, or once a flush's worth waits): ${e.message}`));
      this.onFlush({ event: 'failed', error: e.message });
    }
    this.failure = e;
  }

  /** Applies series of the flush under way for about `budgetMs`, in one transaction; the last slice ends the flush. */
  private applySlice(budgetMs: number): void {
    const job = this.job!;
    const until = performance.now() + budgetMs;
    let next = job.next;
    const applied: number[] = [];
    /** A series applied in part: what is left of it. */
    let rest: [number, SeriesRecords] | null = null;
    this.db.transaction(() => {
      while (next < job.sids.length) {
        const sid = job.sids[next]!;
        const records = job.series.get(sid);
        // A sweep may have dealt with a series meanwhile.
        if (records) {
          const ordered = inTimeOrder(records);
          const n = ordered.entries.length / ENTRY;
          if (n > FLUSH_PIECE_RECORDS) {
            // A large backlog of one series goes in pieces, each a slice's worth.
            const [piece, left] = splitOrdered(ordered, FLUSH_PIECE_RECORDS);
            this.applyOrdered(sid, piece);
            rest = [sid, left];
            break;
          }
          this.applyOrdered(sid, ordered);
          applied.push(sid);
        }
        next++;
        if (performance.now() >= until) break;
      }
      if (next === job.sids.length && this.log) {
        this.s.putMeta!.run('log_applied', String(job.generation));
        this.s.dropSkips!.run(job.generation);
      }
    }).immediate();
    job.next = next;
    for (const sid of applied) job.series.delete(sid);
    if (rest !== null) job.series.set(rest[0], rest[1]);
    if (this.failure !== null) {
      this.failure = null;
      this.onNotice('flushes work again');
    }
    if (next < job.sids.length) return;
    this.job = null;
    this.onFlush({ event: 'done', generation: job.generation, ms: Math.round(performance.now() - job.started) });
    // A crash before this leaves files the database already applied, which the next start deletes.
    this.log?.discardThrough(job.generation);
    if (this.walFile !== null && fileSize(this.walFile) > WAL_LIMIT_BYTES) this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** Moves every waiting write into the chunks before returning (close, tests). */
  flush(): void {
    while (this.job !== null) this.applySlice(Infinity);
    this.startFlush();
    while (this.job !== null) this.applySlice(Infinity);
  }

  /** The waiting records of one series (those of the flush under way first), or null. */
  private collect(sid: number): SeriesRecords | null {
    const fromJob = this.job?.series.get(sid);
    const fromPending = this.pending.get(sid);
    if (fromJob === undefined) return fromPending ?? null;
    if (fromPending === undefined) return fromJob;
    return concatRecords(fromJob, fromPending);
  }

  /** Forgets waiting records of a series with ts < before (all with Infinity): a sweep dealt with them. */
  private dropWaiting(sid: number, before: number): void {
    const drop = (queue: Map<number, SeriesRecords>): number => {
      const q = queue.get(sid);
      if (q === undefined) return 0;
      const kept = before === Infinity ? null : keepFrom(q, before);
      if (kept !== null && kept.n > 0) queue.set(sid, kept);
      else queue.delete(sid);
      return q.n - (kept?.n ?? 0);
    };
    if (this.job) drop(this.job.series);
    this.pendingRecords -= drop(this.pending);
  }

  /**
   * Runs a read of one series through the scratch layer holding what the flush will make of its
   * waiting records, so the read sees every acknowledged write without writing anything.
   */
  private viewing<T>(sid: number, read: () => T): T {
    let records = this.collect(sid);
    if (records === null) return read();
    if (records.n > VIEW_RECORDS && !this.diskFull && this.failure === null && this.walWaitSince === null) {
      // Many waiting records (a hot series read again and again): applied for real, once, as the
      // flush would (a replay applying them again changes nothing); the next read starts from here.
      try {
        this.db.transaction(() => this.applySeries(sid, records!)).immediate();
        this.dropWaiting(sid, Infinity);
        return read();
      } catch {
        records = this.collect(sid);
        if (records === null) return read();
      }
    }
    this.shadow = { chunks: new Map(), parts: new Map() };
    try {
      this.applySeries(sid, records);
      return read();
    } finally {
      this.shadow = null;
    }
  }

  /** Applies one series' waiting records: raw entries first, then every larger span. */
  private applySeries(sid: number, records: SeriesRecords): void {
    this.applyOrdered(sid, inTimeOrder(records));
  }

  /** applySeries on records already in time order. */
  private applyOrdered(sid: number, raw: OrderedRecords): void {
    const replaced = this.applyRaw(sid, raw.entries, raw.parts);
    // Each span's bucket deltas come from the largest smaller span that divides it.
    const levels: Buckets[] = [rawBuckets(raw.entries, replaced)];
    const spans = [this.smallest];
    for (let i = 1; i < this.rollups.length; i++) {
      const span = this.rollups[i]!;
      let from = 0;
      for (let j = i - 1; j > 0; j--) {
        if (span % spans[j]! === 0) {
          from = j;
          break;
        }
      }
      const buckets = groupBuckets(levels[from]!, span);
      this.applySpan(sid, span, buckets);
      levels.push(buckets);
      spans.push(span);
    }
  }

  private getChunk(sid: number, span: number, chunkTs: number): Float64Array | undefined {
    const shadowed = this.shadow?.chunks.get(span)?.get(chunkTs);
    if (shadowed !== undefined) return shadowed.length === 0 ? undefined : shadowed;
    const blob = this.s.getChunk!.get(sid, span, chunkTs) as Buffer | undefined;
    return blob === undefined ? undefined : entriesOf(blob);
  }

  private putChunk(sid: number, span: number, chunkTs: number, entries: Float64Array): void {
    if (this.shadow) {
      let m = this.shadow.chunks.get(span);
      if (!m) this.shadow.chunks.set(span, (m = new Map()));
      m.set(chunkTs, entries);
    } else if (entries.length === 0) this.s.deleteChunk!.run(sid, span, chunkTs);
    else this.s.putChunk!.run(sid, span, chunkTs, blobOf(entries));
  }

  private putParts(sid: number, ts: number, p: StoredParts | null): void {
    if (this.shadow) this.shadow.parts.set(ts, p);
    else if (p === null) this.s.deleteParts!.run(sid, ts);
    else this.s.putParts!.run(sid, ts, p.period, p.blob);
  }

  /** Merges new raw entries (sorted) into the raw chunks; returns the ts of the replaced ones. */
  private applyRaw(sid: number, raw: Float64Array, parts: Map<number, StoredParts> | null): Set<number> | null {
    const span = this.smallest;
    const window = chunkWindow(span);
    const n = raw.length / ENTRY;
    let replaced: Set<number> | null = null;
    for (let i = 0; i < n; ) {
      const c = chunkStart(raw[i * ENTRY]!, window);
      let j = i + 1;
      while (j < n && raw[j * ENTRY]! < c + window) j++;
      const old = this.getChunk(sid, span, c);
      const merged = mergeEntries(old, raw, i, j, (ts, oi) => {
        (replaced ??= new Set()).add(ts);
        if ((old![oi * ENTRY + 2]! & FLAGS.parts) !== 0) this.putParts(sid, ts, null);
      });
      this.putChunk(sid, span, c, merged);
      i = j;
    }
    if (parts) for (const [ts, p] of parts) this.putParts(sid, ts, p);
    return replaced;
  }

  /**
   * Merges bucket deltas into the chunks of a larger span. A bucket holding a replaced record,
   * or one a sweep removed (missing, and before the span's last sweep time), is recomputed from
   * the raw entries, which already hold the new ones.
   */
  private applySpan(sid: number, span: number, buckets: Buckets): void {
    const { n, data, recompute } = buckets;
    const window = chunkWindow(span);
    const swept = this.sweptBefore.get(span) ?? 0;
    for (let i = 0; i < n; ) {
      const c = chunkStart(data[i * ENTRY]!, window);
      let j = i + 1;
      while (j < n && data[j * ENTRY]! < c + window) j++;
      const old = this.getChunk(sid, span, c);
      const update = new Float64Array((j - i) * ENTRY);
      for (let k = i; k < j; k++) {
        const u = k - i;
        const b = data[k * ENTRY]!;
        update[u * ENTRY] = b;
        const at = old ? findEntry(old, b) : -1;
        if (recompute[k] || (at < 0 && b < swept)) {
          this.rawAggInto(sid, b, b + span, update, u);
        } else if (at >= 0) {
          update.set(old!.subarray(at * ENTRY, (at + 1) * ENTRY), u * ENTRY);
          mergeEntryInto(update, u, data, k, data[k * ENTRY + 2]!);
        } else {
          update.set(data.subarray(k * ENTRY, (k + 1) * ENTRY), u * ENTRY);
        }
      }
      this.putChunk(sid, span, c, mergeEntries(old, update, 0, j - i));
      i = j;
    }
  }

  /** Merges every raw entry (hidden ones too) with from <= ts < to into the empty entry `i` of `out`. */
  private rawAggInto(sid: number, from: number, to: number, out: Float64Array, i: number): void {
    for (const e of this.chunksIn(sid, this.smallest, from, to)) {
      for (let k = lowerBound(e, from), n = e.length / ENTRY; k < n && e[k * ENTRY]! < to; k++) mergeEntryInto(out, i, e, k, 1);
    }
  }

  /** The chunks of a span that may hold entries with from <= ts < to, in order (through the shadow, if any). */
  private chunksIn(sid: number, span: number, from: number, to: number): Float64Array[] {
    const lo = chunkStart(Math.max(0, from), chunkWindow(span));
    const rows = this.s.chunkRange!.all(sid, span, lo, to) as Array<[number, Buffer]>;
    const shadowed = this.shadow?.chunks.get(span);
    if (shadowed === undefined) return rows.map((r) => entriesOf(r[1]));
    const byTs = new Map<number, Float64Array>(rows.map(([c, blob]) => [c, entriesOf(blob)]));
    for (const [c, e] of shadowed) if (c >= lo && c < to) byTs.set(c, e);
    return [...byTs]
      .sort((a, b) => a[0] - b[0])
      .map((x) => x[1])
      .filter((e) => e.length > 0);
  }

  writeText(records: readonly TextRecord[]): number {
    if (records.length === 0) return 0;
    this.refuseWrites();
    this.atomically(() => {
      for (const r of records) this.s.putText!.run(this.seriesFor(r.id, r.metric, KIND_BIT.text), r.offset, r.value);
    });
    return records.length;
  }

  writeHistogram(records: readonly HistogramRecord[]): number {
    if (records.length === 0) return 0;
    this.refuseWrites();
    this.atomically(() => {
      for (const r of records) this.s.putHistogram!.run(this.seriesFor(r.id, r.metric, KIND_BIT.histogram), r.period, r.offset, r.histogram);
    });
    return records.length;
  }

  rollupRows(seriesId: number, span: number, fromTs: number, toTs: number): RollupRowArray[] {
    return this.viewing(seriesId, () => {
      const raw = span === this.smallest;
      const rows: RollupRowArray[] = [];
      for (const e of this.chunksIn(seriesId, span, fromTs, toTs)) {
        for (let i = lowerBound(e, fromTs), n = e.length / ENTRY; i < n; i++) {
          const o = i * ENTRY;
          if (e[o]! >= toTs) break;
          if (raw && (e[o + 2]! & FLAGS.hidden) !== 0) continue;
          rows.push([e[o]!, e[o + 1]!, raw ? 1 : e[o + 2]!, e[o + 3]!, e[o + 4]!, e[o + 5]!, e[o + 6]!, e[o + 7]!, e[o + 8]!]);
        }
      }
      return rows;
    });
  }

  rollupColumn(seriesId: number, span: number, member: StoredMember, fromTs: number, toTs: number): Array<[number, number]> {
    if (!(STORED_MEMBERS as readonly string[]).includes(member)) throw new Error(`not a stored member: ${member}`);
    return this.viewing(seriesId, () => {
      const raw = span === this.smallest;
      const slot = MEMBER_SLOT[member];
      const rows: Array<[number, number]> = [];
      for (const e of this.chunksIn(seriesId, span, fromTs, toTs)) {
        for (let i = lowerBound(e, fromTs), n = e.length / ENTRY; i < n; i++) {
          const o = i * ENTRY;
          if (e[o]! >= toTs) break;
          if (raw && (e[o + 2]! & FLAGS.hidden) !== 0) continue;
          rows.push([e[o]!, e[o + slot]!]);
        }
      }
      return rows;
    });
  }

  rawRows(seriesId: number, fromTs: number, toTs: number): RawRowArray[] {
    return this.viewing(seriesId, () => {
      const rows: RawRowArray[] = [];
      let parts: Map<number, [number, Buffer]> | undefined;
      for (const e of this.chunksIn(seriesId, this.smallest, fromTs, toTs)) {
        for (let i = lowerBound(e, fromTs), n = e.length / ENTRY; i < n; i++) {
          const o = i * ENTRY;
          const ts = e[o]!;
          if (ts >= toTs) break;
          let period: number | null = null;
          let blob: Buffer | null = null;
          if ((e[o + 2]! & FLAGS.parts) !== 0) {
            parts ??= this.partsIn(seriesId, fromTs, toTs);
            const p = parts.get(ts);
            if (p) [period, blob] = p;
          }
          rows.push([ts, e[o + 1]!, e[o + 3]!, e[o + 4]!, e[o + 5]!, e[o + 6]!, e[o + 7]!, e[o + 8]!, period, blob]);
        }
      }
      return rows;
    });
  }

  private partsIn(sid: number, fromTs: number, toTs: number): Map<number, [number, Buffer]> {
    const out = new Map((this.s.partsRange!.all(sid, fromTs, toTs) as Array<[number, number, Buffer]>).map(([t, p, b]) => [t, [p, b] as [number, Buffer]]));
    for (const [ts, p] of this.shadow?.parts ?? []) {
      if (ts < fromTs || ts >= toTs) continue;
      if (p === null) out.delete(ts);
      else out.set(ts, [p.period, p.blob]);
    }
    return out;
  }

  textRows(seriesId: number, fromTs: number, toTs: number): Array<[number, string]> {
    return this.s.textRange!.all(seriesId, fromTs, toTs) as Array<[number, string]>;
  }

  histogramRows(seriesId: number, period: number, fromTs: number, toTs: number): Array<[number, number, string]> {
    return this.s.histogramRange!.all(seriesId, period, fromTs, toTs) as Array<[number, number, string]>;
  }

  listSeries(afterId: number, limit: number, type: DataType): SeriesRef[] {
    return this.s.listSeries!.all(afterId, KIND_BIT[type], limit) as SeriesRef[];
  }

  sweepNnt(seriesId: number, before: number, spans: readonly number[], raw: boolean): number {
    if (this.diskFull) {
      try {
        this.checkpointIfLarge();
      } catch {
        // the sweep may still fit; it frees pages either way
      }
    }
    // The series' waiting records are part of what the sweep acts on (see the top).
    const waiting = this.collect(seriesId);
    const at: LogPosition | undefined = this.log?.position();
    let n = 0;
    this.db.transaction(() => {
      for (const span of spans) {
        if (span !== this.smallest && before > (this.sweptBefore.get(span) ?? 0)) {
          this.sweptBefore.set(span, before);
          this.s.putMeta!.run(`swept_before:${span}`, String(before));
        }
      }
      // Deleting the raw data too: the waiting records before the time need not be stored at
      // all (a full disk is when this matters). Otherwise they are applied first, then swept.
      if (waiting !== null && !raw) this.applySeries(seriesId, waiting);
      // Whatever the log still holds of the series (waiting, or applied early by a read) must not
      // come back with a replay after a crash.
      if (at !== undefined && (this.logDirty || this.job !== null)) this.s.putSkip!.run(seriesId, at.generation, at.offset, raw ? before : null);
      if (raw) {
        n += this.dropBefore(seriesId, this.smallest, before);
        this.s.sweepParts!.run(seriesId, before);
      } else if (spans.includes(this.smallest)) {
        // The smallest span shares its entries with the raw records: hide them.
        n += this.hideBefore(seriesId, before);
      }
      const larger = spans.filter((span) => span !== this.smallest);
      for (const span of larger) n += this.dropBefore(seriesId, span, before);
      this.keepStraddling(seriesId, larger, before);
    }).immediate();
    if (waiting !== null) this.dropWaiting(seriesId, raw ? before : Infinity);
    return n;
  }

  /**
   * The bucket of each span holding `before` (when it starts earlier) is rebuilt from the raw
   * entries at or after `before`: what the sweep keeps of it. One read of the raw entries serves
   * every span.
   */
  private keepStraddling(sid: number, spans: readonly number[], before: number): void {
    const straddling = spans.filter((span) => before % span !== 0);
    if (straddling.length === 0) return;
    const end = Math.max(...straddling.map((span) => before - (before % span) + span));
    const raw = this.chunksIn(sid, this.smallest, before, end);
    if (raw.length === 0) return;
    for (const span of straddling) {
      const b = before - (before % span);
      const out = new Float64Array(ENTRY);
      out[0] = b;
      for (const e of raw) {
        for (let k = lowerBound(e, before), n = e.length / ENTRY; k < n && e[k * ENTRY]! < b + span; k++) mergeEntryInto(out, 0, e, k, 1);
      }
      if (out[2] === 0) continue;
      const c = chunkStart(b, chunkWindow(span));
      this.putChunk(sid, span, c, mergeEntries(this.getChunk(sid, span, c), out, 0, 1));
    }
  }

  /** Deletes the entries of a span with ts < before; returns how many. */
  private dropBefore(sid: number, span: number, before: number): number {
    const c = chunkStart(before, chunkWindow(span));
    let n = (this.s.bytesBefore!.get(sid, span, c) as number) / (ENTRY * 8);
    this.s.deleteBefore!.run(sid, span, c);
    if (c < before) {
      // The chunk holding `before` keeps its entries from `before` on.
      const e = this.getChunk(sid, span, c);
      const k = e ? lowerBound(e, before) : 0;
      if (k > 0) {
        this.putChunk(sid, span, c, e!.slice(k * ENTRY));
        n += k;
      }
    }
    return n;
  }

  /** Flags the raw entries with ts < before as hidden (a sweep of the smallest span alone). */
  private hideBefore(sid: number, before: number): number {
    let n = 0;
    for (const [c, blob] of this.s.chunksBefore!.all(sid, this.smallest, before) as Array<[number, Buffer]>) {
      const e = entriesOf(blob);
      let changed = false;
      for (let o = 0; o < e.length && e[o]! < before; o += ENTRY) {
        if ((e[o + 2]! & FLAGS.hidden) === 0) {
          e[o + 2] = e[o + 2]! | FLAGS.hidden;
          changed = true;
          n++;
        }
      }
      if (changed) this.putChunk(sid, this.smallest, c, e);
    }
    return n;
  }

  sweepText(seriesId: number, before: number): number {
    return this.s.sweepText!.run(seriesId, before).changes;
  }

  sweepHistogram(seriesId: number, before: number, periods: readonly number[]): number {
    let n = 0;
    this.db.transaction(() => {
      for (const period of periods) n += this.s.sweepHistogram!.run(seriesId, period, before).changes;
    }).immediate();
    return n;
  }

  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private closeNow(): Promise<void> {
    clearInterval(this.flushTimer);
    try {
      this.flush();
    } catch (err) {
      // The writes stay in the log; the next start applies them.
      this.onError(err);
    }
    this.db.close();
    this.log?.close();
    this.lock?.release();
    // The checkpointer's connection closes last and may still touch the -wal/-shm files as it
    // goes: whoever removes the data dir waits for this.
    return this.checkpointer?.close() ?? Promise.resolve();
  }
}

/** A flush under way: the records of one log generation by series, applied in series order. */
interface FlushJob {
  generation: number;
  /** The records of the series not applied yet (a series leaves once applied, or swept). */
  series: Map<number, SeriesRecords>;
  /** The series in the order they are applied (their chunks are neighbours in the table). */
  sids: number[];
  /** How many of `sids` are done. */
  next: number;
  started: number;
}

/** One series' records gathered from the waiting writes (raw entries, arrival order). */
interface SeriesRecords {
  entries: Float64Array;
  n: number;
  /** Parts by record index. */
  parts: Map<number, StoredParts> | null;
}

/**
 * Appends the records of one logged write to the per-series queues (those `keep` accepts);
 * returns how many. A queue's array grows by doubling: `n` says how much of it is records.
 */
function enqueue(queues: Map<number, SeriesRecords>, e: Float64Array, parts: Map<number, StoredParts> | null, keep?: (sid: number, ts: number) => boolean): number {
  let added = 0;
  let last = NaN;
  let q: SeriesRecords | undefined;
  for (let i = 0, o = 0; o < e.length; i++, o += LOG_ENTRY) {
    const sid = e[o]!;
    if (keep !== undefined && !keep(sid, e[o + 1]!)) continue;
    if (sid !== last) {
      q = queues.get(sid);
      if (q === undefined) queues.set(sid, (q = { entries: new Float64Array(16 * ENTRY), n: 0, parts: null }));
      last = sid;
    }
    const s = q!;
    if ((s.n + 1) * ENTRY > s.entries.length) {
      const grown = new Float64Array(s.entries.length * 2);
      grown.set(s.entries.subarray(0, s.n * ENTRY));
      s.entries = grown;
    }
    const d = s.n * ENTRY;
    for (let k = 0; k < ENTRY; k++) s.entries[d + k] = e[o + 1 + k]!;
    if ((e[o + 3]! & FLAGS.parts) !== 0) (s.parts ??= new Map()).set(s.n, parts!.get(i)!);
    s.n++;
    added++;
  }
  return added;
}

/** `b`'s records after `a`'s. */
function concatRecords(a: SeriesRecords, b: SeriesRecords): SeriesRecords {
  const entries = new Float64Array((a.n + b.n) * ENTRY);
  entries.set(a.entries.subarray(0, a.n * ENTRY));
  entries.set(b.entries.subarray(0, b.n * ENTRY), a.n * ENTRY);
  let parts: Map<number, StoredParts> | null = a.parts ? new Map(a.parts) : null;
  if (b.parts) for (const [i, p] of b.parts) (parts ??= new Map()).set(a.n + i, p);
  return { entries, n: a.n + b.n, parts };
}

/** The records with ts >= before. */
function keepFrom(s: SeriesRecords, before: number): SeriesRecords {
  const keep: number[] = [];
  for (let i = 0; i < s.n; i++) if (s.entries[i * ENTRY]! >= before) keep.push(i);
  const entries = new Float64Array(keep.length * ENTRY);
  let parts: Map<number, StoredParts> | null = null;
  keep.forEach((i, j) => {
    entries.set(s.entries.subarray(i * ENTRY, (i + 1) * ENTRY), j * ENTRY);
    const p = s.parts?.get(i);
    if (p) (parts ??= new Map()).set(j, p);
  });
  return { entries, n: keep.length, parts };
}
/** The records in ts order, the last write of a repeated ts winning; parts by ts. */
/** Records in ts order, one per ts, with their parts by ts. */
interface OrderedRecords {
  entries: Float64Array;
  parts: Map<number, StoredParts> | null;
}

function inTimeOrder(s: SeriesRecords): OrderedRecords {
  const n = s.n;
  // A queue's array may be longer than its records.
  const e = s.entries.length === n * ENTRY ? s.entries : s.entries.subarray(0, n * ENTRY);
  let sorted = true;
  for (let i = 1; i < n; i++) {
    if (e[i * ENTRY]! <= e[(i - 1) * ENTRY]!) {
      sorted = false;
      break;
    }
  }
  let keep: number[] | null = null;
  if (!sorted) {
    const all = Array.from({ length: n }, (_, i) => i).sort((a, b) => e[a * ENTRY]! - e[b * ENTRY]! || a - b);
    keep = all.filter((k, i) => i === n - 1 || e[all[i + 1]! * ENTRY] !== e[k * ENTRY]);
  }
  let entries = e;
  if (keep) {
    entries = new Float64Array(keep.length * ENTRY);
    keep.forEach((k, j) => entries.set(e.subarray(k * ENTRY, (k + 1) * ENTRY), j * ENTRY));
  }
  let parts: Map<number, StoredParts> | null = null;
  if (s.parts) {
    for (const k of keep ?? s.parts.keys()) {
      const p = s.parts.get(k);
      if (p) (parts ??= new Map()).set(e[k * ENTRY]!, p);
    }
  }
  return { entries, parts };
}

/** The first `n` ordered records, and the rest as a queue (parts by index) for the next slice. */
function splitOrdered(o: OrderedRecords, n: number): [OrderedRecords, SeriesRecords] {
  const cut = n * ENTRY;
  const first = o.entries.subarray(0, cut);
  const rest = o.entries.subarray(cut);
  const cutTs = rest[0]!;
  let firstParts: Map<number, StoredParts> | null = null;
  let restParts: Map<number, StoredParts> | null = null;
  if (o.parts) {
    const indexOf = new Map<number, number>();
    for (let i = 0; i < rest.length / ENTRY; i++) indexOf.set(rest[i * ENTRY]!, i);
    for (const [ts, p] of o.parts) {
      if (ts < cutTs) (firstParts ??= new Map()).set(ts, p);
      else (restParts ??= new Map()).set(indexOf.get(ts)!, p);
    }
  }
  return [
    { entries: first, parts: firstParts },
    { entries: rest, n: rest.length / ENTRY, parts: restParts },
  ];
}

/** Buckets of one span as entries (ts = bucket start, ascending) to merge in; `recompute`: from raw instead. */
interface Buckets {
  n: number;
  data: Float64Array;
  recompute: Uint8Array;
}

/** The raw entries as the finest buckets (one record each); a replaced record's is recomputed. */
function rawBuckets(raw: Float64Array, replaced: Set<number> | null): Buckets {
  const n = raw.length / ENTRY;
  const data = raw.slice();
  const recompute = new Uint8Array(n);
  for (let i = 0; i < n; i++) {
    data[i * ENTRY + 2] = 1; // slot 2 held the flags
    if (replaced?.has(data[i * ENTRY]!)) recompute[i] = 1;
  }
  return { n, data, recompute };
}

/** Finer buckets merged into the buckets of `span` (a multiple of theirs). */
function groupBuckets(finer: Buckets, span: number): Buckets {
  const data = new Float64Array(finer.n * ENTRY);
  const recompute = new Uint8Array(finer.n);
  let m = -1;
  let b = -1;
  for (let i = 0; i < finer.n; i++) {
    const ts = finer.data[i * ENTRY]!;
    const bi = ts - (ts % span);
    if (bi !== b) {
      b = bi;
      m++;
      data.set(finer.data.subarray(i * ENTRY, (i + 1) * ENTRY), m * ENTRY);
      data[m * ENTRY] = b;
      recompute[m] = finer.recompute[i]!;
    } else if (finer.recompute[i]) {
      recompute[m] = 1;
    } else if (!recompute[m]) {
      mergeEntryInto(data, m, finer.data, i, finer.data[i * ENTRY + 2]!);
    }
  }
  return { n: m + 1, data, recompute };
}

/** The refusal for a damaged log: which frame, which records, and how to salvage the rest. */
function damageMessage(err: LogDamageError, db: Db | null): string {
  const first = err.damage[0]!;
  let records = 0;
  const series = new Set<number>();
  for (const f of err.framesAfter) {
    const { entries } = decodeLog(f.payload);
    records += entries.length / LOG_ENTRY;
    for (let o = 0; o < entries.length; o += LOG_ENTRY) series.add(entries[o]!);
  }
  let byId: Database.Statement | undefined;
  try {
    byId = db?.prepare('SELECT uuid, metric FROM series WHERE id = ?');
  } catch {
    // no series table: the numbers will do
  }
  const names = [...series].slice(0, 3).map((sid) => {
    const row = byId?.get(sid) as { uuid: string; metric: string } | undefined;
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

/** Opens (or creates) the database file; nothing is written yet. */
function openDatabase(file: string, readonly: boolean): Db {
  try {
    const db = new Database(file, readonly ? { readonly: true, fileMustExist: true } : {});
    db.pragma('busy_timeout = 5000');
    return db;
  } catch (err) {
    throw new StoreOpenError(`cannot open database ${file}: ${(err as Error).message}`);
  }
}

/** The connection's settings; only a new database takes the page size and auto-vacuum mode. */
function configure(db: Db, onDisk: boolean, fresh: boolean): void {
  // Large pages hold large chunks inline (see CHUNK_ENTRIES). Pages sweeps free can be given
  // back to the file system (incremental_vacuum): what lets a full disk take writes again.
  if (fresh) {
    db.pragma('page_size = 16384');
    db.pragma('auto_vacuum = INCREMENTAL');
  }
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  db.pragma('cache_size = -65536');
  // On disk a Checkpointer thread checkpoints the WAL (see checkpointer.ts); in memory there
  // is none. The WAL file is cut back to 64 MiB after a checkpoint.
  if (onDisk) db.pragma('wal_autocheckpoint = 0');
  db.pragma('journal_size_limit = 67108864');
  db.pragma('temp_store = MEMORY');
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

/** ENOSPC from a file write, SQLITE_FULL from SQLite. */
function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'SQLITE_FULL' || code === 'EDQUOT') return true;
  return /\b(ENOSPC|SQLITE_FULL)\b|disk is full|no space left/i.test(String((err as Error | null)?.message ?? ''));
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
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
