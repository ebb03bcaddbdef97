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
 *
 * A numeric write is appended to the ingest log (`nnt-<generation>.log` next to the database,
 * see ingest-log.ts) and kept in memory. A flush moves the waiting writes into the chunks: it
 * starts a new log generation for the writes that come meanwhile and applies the ended one
 * series by series, in slices of FLUSH_SLICE_MS between which the node goes on answering (a
 * flush of 250,000 records takes ~0.3 s; one block of it stalled every client). Its last slice
 * records the generation as applied. Flushes start when enough records are waiting and every
 * FLUSH_INTERVAL_MS; a read or a sweep of a series with records waiting first finishes every
 * waiting write (not only that series': simple, and a flush is short), and so does close. After
 * a crash the unapplied generations are applied at open; a slice applied twice changes nothing,
 * since a write replaces and a replaced bucket is recomputed.
 * (An in-memory store has no log.)
 *
 * Larger buckets are merged incrementally from each flush; a bucket that had a record replaced
 * is recomputed from the raw entries.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { DataType, HistogramRecord, NntRecord, TextRecord } from '../protocol/index.js';
import { Checkpointer } from './checkpointer.js';
import { blobOf, chunkStart, chunkWindow, ENTRY, entriesOf, FLAGS, findEntry, lowerBound, mergeEntries, mergeEntryInto } from './chunks.js';
import { decodeLog, encodeLog, IngestLog, LOG_ENTRY, packRecords, type LoggedBatch, type PackedWrite, type StoredParts } from './ingest-log.js';
import { STORED_MEMBERS, type RawRowArray, type RollupRowArray, type SeriesRef, type StoredMember, type Store } from './store.js';

type Db = Database.Database;
type Stmt = Database.Statement;

const SCHEMA_VERSION = '3';

/** Bits of `series.kinds`: which data types a series has had written. */
export const KIND_BIT: Readonly<Record<DataType, number>> = { nnt: 1, text: 2, histogram: 4 };
export const DB_FILE = 'tsnode.db';
export const LOCK_FILE = 'tsnode.lock';

/** Why the store cannot open (bad data dir, locked, made with other rollups): a startup error. */
export class StoreOpenError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'StoreOpenError';
  }
}

export interface SqliteStoreOptions {
  /** Directory for the database file, or null for memory. */
  dataDir: string | null;
  rollups: readonly number[];
  histogramRollups: readonly number[];
  /** Told when a background flush fails (the logged writes stay and are retried). */
  onError?: (err: unknown) => void;
}

/** How often logged writes are moved into the chunks even when few are waiting. */
export const FLUSH_INTERVAL_MS = 2000;
/** Waiting records that start a flush right after the write that logged them. */
export const FLUSH_RECORDS = 250_000;
/** How long one slice of a flush may hold the event loop. */
const FLUSH_SLICE_MS = 20;
/** Waiting records past which a write first flushes (memory bound when flushes keep failing). */
const MAX_PENDING_RECORDS = 4 * FLUSH_RECORDS;

/** How often the checkpointer thread checkpoints the WAL. */
const CHECKPOINT_INTERVAL_MS = 500;
/** A WAL this large means the checkpointer is behind: the flush checkpoints it itself. */
const WAL_LIMIT_BYTES = 256 * 1024 * 1024;

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

export class SqliteStore implements Store {
  readonly rollups: readonly number[];
  readonly histogramRollups: readonly number[];
  private readonly db: Db;
  private readonly log: IngestLog | null = null;
  private readonly checkpointer: Checkpointer | null = null;
  private closed: Promise<void> | undefined;
  private readonly walFile: string | null = null;
  private readonly lockFile: string | null = null;
  readonly smallest: number;
  /** uuid -> metric -> series id and the kinds of data it has (KIND_BIT). */
  private readonly seriesIds = new Map<string, Map<string, { id: number; kinds: number }>>();
  /** Logged writes not yet in the chunks, oldest first (every frame of the log). */
  private pending: LoggedBatch[] = [];
  private pendingRecords = 0;
  /** Series with records in `pending`. */
  private readonly pendingSeries = new Set<number>();
  /** The flush under way, if any. */
  private job: FlushJob | null = null;
  private readonly onError: (err: unknown) => void;
  private readonly flushTimer: NodeJS.Timeout;
  private readonly columnStmts = new Map<string, Stmt>();
  private readonly s: Record<string, Stmt>;

  constructor(opts: SqliteStoreOptions) {
    this.rollups = [...opts.rollups];
    this.histogramRollups = [...opts.histogramRollups];
    this.smallest = this.rollups[0]!;
    this.onError = opts.onError ?? (() => {});
    let file = ':memory:';
    if (opts.dataDir !== null) {
      try {
        makeDirs(opts.dataDir);
      } catch (err) {
        throw new StoreOpenError(`cannot create data directory ${opts.dataDir}: ${(err as Error).message}`);
      }
      file = join(opts.dataDir, DB_FILE);
      this.lockFile = lockDataDir(opts.dataDir);
    }
    let db: Db | undefined;
    try {
      this.db = db = openDatabase(file, opts.dataDir !== null);
      this.migrate();
      this.s = this.prepare();
      if (opts.dataDir !== null) {
        const applied = Number(this.s.getMeta!.get('log_applied') ?? 0);
        try {
          this.log = new IngestLog(opts.dataDir, applied);
        } catch (err) {
          throw new StoreOpenError(`cannot open the ingest log in ${opts.dataDir}: ${(err as Error).message}`);
        }
        this.replayLog(this.log);
        this.walFile = `${file}-wal`;
        this.checkpointer = new Checkpointer(file, CHECKPOINT_INTERVAL_MS, this.onError);
      }
    } catch (err) {
      // Nothing stays open or locked after a failed start.
      if (db?.open) db.close();
      this.log?.close();
      if (this.lockFile !== null) unlockDataDir(this.lockFile);
      throw err;
    }
    // Also retries a slice that failed, or a flush that could not start (the next log file).
    this.flushTimer = setInterval(() => (this.job ? this.sliceQuietly() : this.startFlushQuietly()), FLUSH_INTERVAL_MS);
    this.flushTimer.unref();
  }

  /** After a crash: the writes still in the log were acknowledged; move them into the chunks. */
  private replayLog(log: IngestLog): void {
    this.pending = log.pendingPayloads.splice(0).map(decodeLog);
    for (const { entries } of this.pending) for (let o = 0; o < entries.length; o += LOG_ENTRY) this.pendingSeries.add(entries[o]!);
    try {
      this.flush();
    } catch (err) {
      throw new StoreOpenError(`cannot apply the ingest log after a restart: ${(err as Error).message}`);
    }
  }

  private migrate(): void {
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
    put.run('schema', SCHEMA_VERSION);
    put.run('rollups', rollups);
  }

  private prepare(): Record<string, Stmt> {
    const p = (sql: string): Stmt => this.db.prepare(sql);
    return {
      findSeries: p('SELECT id, kinds FROM series WHERE uuid = ? AND metric = ?'),
      insertSeries: p('INSERT INTO series (uuid, metric, kinds) VALUES (?, ?, ?)'),
      addKind: p('UPDATE series SET kinds = kinds | ? WHERE id = ?'),
      listSeries: p('SELECT id, uuid, metric FROM series WHERE id > ? AND (kinds & ?) != 0 ORDER BY id LIMIT ?'),
      getMeta: p('SELECT value FROM meta WHERE key = ?').pluck(),
      putMeta: p('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
      getChunk: p('SELECT data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts = ?').pluck(),
      putChunk: p('INSERT OR REPLACE INTO nnt_chunk (series_id, span, chunk_ts, data) VALUES (?, ?, ?, ?)'),
      deleteChunk: p('DELETE FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts = ?'),
      chunkRange: p('SELECT data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts >= ? AND chunk_ts < ? ORDER BY chunk_ts').pluck(),
      chunksBefore: p('SELECT chunk_ts, data FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ? ORDER BY chunk_ts').raw(),
      bytesBefore: p('SELECT total(length(data)) FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ?').pluck(),
      deleteBefore: p('DELETE FROM nnt_chunk WHERE series_id = ? AND span = ? AND chunk_ts < ?'),
      putParts: p('INSERT OR REPLACE INTO nnt_parts (series_id, ts, period, parts) VALUES (?, ?, ?, ?)'),
      deleteParts: p('DELETE FROM nnt_parts WHERE series_id = ? AND ts = ?'),
      partsRange: p('SELECT ts, period, parts FROM nnt_parts WHERE series_id = ? AND ts >= ? AND ts < ?').raw(),
      sweepParts: p('DELETE FROM nnt_parts WHERE series_id = ? AND ts < ?'),
      putText: p('INSERT OR REPLACE INTO text_data (series_id, ts, value) VALUES (?, ?, ?)'),
      textRange: p('SELECT ts, value FROM text_data WHERE series_id = ? AND ts >= ? AND ts < ? ORDER BY ts').raw(),
      putHistogram: p('INSERT OR REPLACE INTO histogram_data (series_id, period, ts, histogram) VALUES (?, ?, ?, ?)'),
      histogramRange: p('SELECT ts, period, histogram FROM histogram_data WHERE series_id = ? AND period = ? AND ts >= ? AND ts < ? ORDER BY ts').raw(),
      sweepText: p('DELETE FROM text_data WHERE series_id = ? AND ts < ?'),
      sweepHistogram: p('DELETE FROM histogram_data WHERE series_id = ? AND period = ? AND ts < ?'),
    };
  }

  findSeries(uuid: string, metric: string): number | undefined {
    return this.lookup(uuid, metric)?.id;
  }

  private lookup(uuid: string, metric: string): { id: number; kinds: number } | undefined {
    const cached = this.seriesIds.get(uuid)?.get(metric);
    if (cached !== undefined) return cached;
    const row = this.s.findSeries!.get(uuid, metric) as { id: number; kinds: number } | undefined;
    if (row !== undefined) this.remember(uuid, metric, row);
    return row;
  }

  private remember(uuid: string, metric: string, entry: { id: number; kinds: number }): void {
    let m = this.seriesIds.get(uuid);
    if (!m) this.seriesIds.set(uuid, (m = new Map()));
    m.set(metric, entry);
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
    this.remember(uuid, metric, { id, kinds: kind });
    return id;
  }

  /** Runs `fn` in one transaction; on rollback the series created inside it are forgotten. */
  private atomically(fn: () => void): void {
    try {
      this.db.transaction(fn)();
    } catch (err) {
      this.seriesIds.clear();
      throw err;
    }
  }

  writeNnt(records: readonly NntRecord[]): number {
    return this.writePacked(packRecords(records));
  }

  /** Logs a write (durable when this returns) and queues it for a flush. */
  writePacked(write: PackedWrite): number {
    const { entries, series, parts } = write;
    const n = entries.length / LOG_ENTRY;
    if (n === 0) return 0;
    if (this.pendingRecords >= MAX_PENDING_RECORDS) this.flush();
    const sids = new Float64Array(series.id.length);
    this.atomically(() => {
      for (let k = 0; k < sids.length; k++) sids[k] = this.seriesFor(series.id[k]!, series.metric[k]!, KIND_BIT.nnt);
    });
    for (let o = 0; o < entries.length; o += LOG_ENTRY) entries[o] = sids[entries[o]!]!;
    // New series are committed first, so the series ids the log holds always exist.
    this.log?.append(encodeLog(entries, parts));
    this.pending.push({ entries, parts });
    this.pendingRecords += n;
    for (const sid of sids) this.pendingSeries.add(sid);
    // The write is durable from here: a flush that cannot start must not fail it.
    if (this.pendingRecords >= FLUSH_RECORDS) this.startFlushQuietly();
    return n;
  }

  /** Starts a flush of the waiting writes, applied in slices (see the top); no-op when one runs. */
  private startFlush(): void {
    if (this.job !== null || this.pending.length === 0 || !this.db.open) return;
    const generation = this.log?.rotate() ?? 0;
    const series = gather(this.pending);
    this.job = { generation, series, sids: [...series.keys()].sort((x, y) => x - y), next: 0 };
    this.pending = [];
    this.pendingRecords = 0;
    this.pendingSeries.clear();
    setImmediate(() => this.sliceQuietly());
  }

  /** startFlush for the timer and the slices: a failure is reported, and the timer tries again. */
  private startFlushQuietly(): void {
    try {
      this.startFlush();
    } catch (err) {
      this.onError(err);
    }
  }

  /** One slice of the flush under way, then the next one after the event loop had its turn. */
  private sliceQuietly(): void {
    if (this.job === null || !this.db.open) return;
    try {
      this.applySlice(FLUSH_SLICE_MS);
    } catch (err) {
      // Rolled back: the slice is retried by the next timer tick (or a read, or close).
      this.onError(err);
      return;
    }
    if (this.job !== null) setImmediate(() => this.sliceQuietly());
    else if (this.pendingRecords >= FLUSH_RECORDS) this.startFlushQuietly();
  }

  /** Applies series of the flush under way for about `budgetMs`, in one transaction; the last slice ends the flush. */
  private applySlice(budgetMs: number): void {
    const job = this.job!;
    const until = performance.now() + budgetMs;
    let next = job.next;
    this.db.transaction(() => {
      do {
        const sid = job.sids[next]!;
        this.applySeries(sid, job.series.get(sid)!);
        next++;
      } while (next < job.sids.length && performance.now() < until);
      if (next === job.sids.length && this.log) this.s.putMeta!.run('log_applied', String(job.generation));
    })();
    job.next = next;
    if (next < job.sids.length) return;
    this.job = null;
    // A crash before this leaves files the database already applied, which the next start deletes.
    this.log?.discardThrough(job.generation);
    if (this.walFile !== null && fileSize(this.walFile) > WAL_LIMIT_BYTES) this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /** Moves every waiting write into the chunks before returning. */
  flush(): void {
    while (this.job !== null) this.applySlice(Infinity);
    this.startFlush();
    while (this.job !== null) this.applySlice(Infinity);
  }

  private flushFor(sid: number): void {
    if (this.pendingSeries.has(sid) || this.job?.series.has(sid)) this.flush();
  }

  /** Applies one series' waiting records: raw entries first, then every larger span. */
  private applySeries(sid: number, records: SeriesRecords): void {
    const raw = inTimeOrder(records);
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
    const blob = this.s.getChunk!.get(sid, span, chunkTs) as Buffer | undefined;
    return blob === undefined ? undefined : entriesOf(blob);
  }

  private putChunk(sid: number, span: number, chunkTs: number, entries: Float64Array): void {
    if (entries.length === 0) this.s.deleteChunk!.run(sid, span, chunkTs);
    else this.s.putChunk!.run(sid, span, chunkTs, blobOf(entries));
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
        if ((old![oi * ENTRY + 2]! & FLAGS.parts) !== 0) this.s.deleteParts!.run(sid, ts);
      });
      this.putChunk(sid, span, c, merged);
      i = j;
    }
    if (parts) for (const [ts, p] of parts) this.s.putParts!.run(sid, ts, p.period, p.blob);
    return replaced;
  }

  /**
   * Merges bucket deltas into the chunks of a larger span. A bucket holding a replaced record
   * is recomputed from the raw entries, which already hold the new ones.
   */
  private applySpan(sid: number, span: number, buckets: Buckets): void {
    const { n, data, recompute } = buckets;
    const window = chunkWindow(span);
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
        if (recompute[k]) {
          this.rawAggInto(sid, b, b + span, update, u);
          continue;
        }
        const at = old ? findEntry(old, b) : -1;
        if (at >= 0) {
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

  /** The chunks of a span that may hold entries with from <= ts < to, in order. */
  private chunksIn(sid: number, span: number, from: number, to: number): Float64Array[] {
    const blobs = this.s.chunkRange!.all(sid, span, chunkStart(Math.max(0, from), chunkWindow(span)), to) as Buffer[];
    return blobs.map(entriesOf);
  }

  writeText(records: readonly TextRecord[]): number {
    if (records.length === 0) return 0;
    this.atomically(() => {
      for (const r of records) this.s.putText!.run(this.seriesFor(r.id, r.metric, KIND_BIT.text), r.offset, r.value);
    });
    return records.length;
  }

  writeHistogram(records: readonly HistogramRecord[]): number {
    if (records.length === 0) return 0;
    this.atomically(() => {
      for (const r of records) this.s.putHistogram!.run(this.seriesFor(r.id, r.metric, KIND_BIT.histogram), r.period, r.offset, r.histogram);
    });
    return records.length;
  }

  rollupRows(seriesId: number, span: number, fromTs: number, toTs: number): RollupRowArray[] {
    this.flushFor(seriesId);
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
  }

  rollupColumn(seriesId: number, span: number, member: StoredMember, fromTs: number, toTs: number): Array<[number, number]> {
    if (!(STORED_MEMBERS as readonly string[]).includes(member)) throw new Error(`not a stored member: ${member}`);
    this.flushFor(seriesId);
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
  }

  rawRows(seriesId: number, fromTs: number, toTs: number): RawRowArray[] {
    this.flushFor(seriesId);
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
          parts ??= new Map((this.s.partsRange!.all(seriesId, fromTs, toTs) as Array<[number, number, Buffer]>).map(([t, p, b]) => [t, [p, b]]));
          const p = parts.get(ts);
          if (p) [period, blob] = p;
        }
        rows.push([ts, e[o + 1]!, e[o + 3]!, e[o + 4]!, e[o + 5]!, e[o + 6]!, e[o + 7]!, e[o + 8]!, period, blob]);
      }
    }
    return rows;
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
    // The sweep must see (and remove) the series' logged records too.
    this.flushFor(seriesId);
    let n = 0;
    this.db.transaction(() => {
      for (const span of spans) {
        // The smallest span shares its entries with the raw records: hide them unless raw goes too.
        if (span !== this.smallest) n += this.dropBefore(seriesId, span, before);
        else if (!raw) n += this.hideBefore(seriesId, before);
      }
      if (raw) {
        n += this.dropBefore(seriesId, this.smallest, before);
        this.s.sweepParts!.run(seriesId, before);
      }
    })();
    return n;
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
    })();
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
    if (this.lockFile !== null) unlockDataDir(this.lockFile);
    // The checkpointer's connection closes last and may still touch the -wal/-shm files as it
    // goes: whoever removes the data dir waits for this.
    return this.checkpointer?.close() ?? Promise.resolve();
  }
}

/** A flush under way: the records of one log generation by series, applied in series order. */
interface FlushJob {
  generation: number;
  series: Map<number, SeriesRecords>;
  /** The series in the order they are applied (their chunks are neighbours in the table). */
  sids: number[];
  /** How many of `sids` are applied. */
  next: number;
}

/** One series' records gathered from the waiting writes (raw entries, arrival order). */
interface SeriesRecords {
  entries: Float64Array;
  n: number;
  /** Parts by record index. */
  parts: Map<number, StoredParts> | null;
}

/** Each series' records from the waiting writes, in one array per series, in arrival order. */
function gather(batches: readonly LoggedBatch[]): Map<number, SeriesRecords> {
  // Count them, then copy them over.
  const counts = new Map<number, number>();
  for (const { entries: e } of batches) {
    let sid = -1;
    let run = 0;
    for (let o = 0; o < e.length; o += LOG_ENTRY) {
      if (e[o] !== sid) {
        if (run > 0) counts.set(sid, (counts.get(sid) ?? 0) + run);
        sid = e[o]!;
        run = 0;
      }
      run++;
    }
    if (run > 0) counts.set(sid, (counts.get(sid) ?? 0) + run);
  }
  const series = new Map<number, SeriesRecords>();
  for (const [sid, count] of counts) series.set(sid, { entries: new Float64Array(count * ENTRY), n: 0, parts: null });
  for (const { entries: e, parts } of batches) {
    for (let i = 0, o = 0; o < e.length; ) {
      // One run of records of one series.
      const sid = e[o]!;
      const s = series.get(sid)!;
      const dst = s.entries;
      let d = s.n * ENTRY;
      do {
        for (let k = 0; k < ENTRY; k++) dst[d + k] = e[o + 1 + k]!;
        if ((e[o + 3]! & FLAGS.parts) !== 0) (s.parts ??= new Map()).set(d / ENTRY, parts!.get(i)!);
        d += ENTRY;
        i++;
        o += LOG_ENTRY;
      } while (o < e.length && e[o] === sid);
      s.n = d / ENTRY;
    }
  }
  return series;
}

/** The records in ts order, the last write of a repeated ts winning; parts by ts. */
function inTimeOrder(s: SeriesRecords): { entries: Float64Array; parts: Map<number, StoredParts> | null } {
  const e = s.entries;
  const n = s.n;
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

function openDatabase(file: string, onDisk: boolean): Db {
  let db: Db | undefined;
  try {
    db = new Database(file);
    // Large pages hold large chunks inline (see CHUNK_ENTRIES). Only a new database takes it.
    db.pragma('page_size = 16384');
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = NORMAL');
    db.pragma('busy_timeout = 5000');
    db.pragma('cache_size = -65536');
    // On disk a Checkpointer thread checkpoints the WAL (see checkpointer.ts); in memory there
    // is none. The WAL file is cut back to 64 MiB after a checkpoint.
    if (onDisk) db.pragma('wal_autocheckpoint = 0');
    db.pragma('journal_size_limit = 67108864');
    db.pragma('temp_store = MEMORY');
    return db;
  } catch (err) {
    db?.close();
    throw new StoreOpenError(`cannot open database ${file}: ${(err as Error).message}`);
  }
}

/** Data directories this process holds (a lock file with our own pid is stale otherwise). */
const heldHere = new Set<string>();

/**
 * One node per data directory: the ingest log and the flushes assume a single writer. The lock
 * is a file holding the owner's pid; one left by a process that is gone (kill -9) is taken over.
 */
function lockDataDir(dir: string): string {
  const file = resolve(dir, LOCK_FILE);
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      writeFileSync(file, `${process.pid}\n`, { flag: 'wx' });
      heldHere.add(file);
      return file;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new StoreOpenError(`cannot lock the data directory ${dir}: ${(err as Error).message}`);
    }
    let held: string;
    try {
      held = readFileSync(file, 'utf8');
    } catch {
      continue; // let go of meanwhile: try again
    }
    const pid = Number(held.trim());
    const stale = !Number.isSafeInteger(pid) || pid <= 0 || (pid === process.pid ? !heldHere.has(file) : !isAlive(pid));
    if (!stale) {
      throw new StoreOpenError(`the data directory ${dir} is in use by process ${pid} (another tsnode serve?): stop it, or use another --data-dir`);
    }
    rmSync(file, { force: true });
  }
  throw new StoreOpenError(`cannot lock the data directory ${dir}: ${file} keeps coming back`);
}

function unlockDataDir(file: string): void {
  heldHere.delete(file);
  rmSync(file, { force: true });
}

function isAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
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
 * Node 20), where a plain mkdir fails at once with a clear error.
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
  for (const d of missing.reverse()) mkdirSync(d);
  if (!statSync(dir).isDirectory()) throw new Error(`${dir} is not a directory`);
}
