/**
 * The SQLite store (better-sqlite3). WAL with synchronous=NORMAL: a committed transaction
 * survives a crash of the node process (not necessarily a power loss), which is what a write
 * acknowledgement promises.
 *
 * Schema: `series` maps (uuid, metric) to an integer id; every other table is WITHOUT ROWID,
 * keyed by (series_id, [span|period,] ts), so range reads and per-series sweeps are index walks.
 * - `nnt_raw`: the records as written with their `parts`: the raw data recalc reads, and at the
 *   same time the smallest span's rollup (one row, not two: a write costs one row less). A sweep
 *   of the smallest span alone sets `hidden` (the rollup is gone, the raw record stays); a sweep
 *   of every span deletes the row.
 * - `nnt_rollup`: every larger span, each stored on its own, so a per-span sweep removes only
 *   that span. Larger buckets are merged incrementally from each batch; a bucket that had a
 *   record replaced is recomputed from `nnt_raw`.
 * - The newest bucket of each (series, larger span) is written back lazily: it lives in memory
 *   while records keep arriving for it and is stored when a newer bucket starts, every
 *   FLUSH_INTERVAL_MS, before a sweep touches the series, and at close. Reads overlay it, so
 *   nothing is ever invisible. Durability comes from `nnt_raw` (committed before the 200) plus
 *   the `pending` table, which lists the series whose newest buckets may be only in memory: after
 *   a crash (or a rolled-back write) those buckets are recomputed from raw. Only the newest bucket
 *   can be pending, and it is the bucket holding the series' latest raw record.
 */
import Database from 'better-sqlite3';
import { existsSync, mkdirSync, statSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import type { Aggregate, DataType, HistogramRecord, NntRecord, TextRecord } from '../protocol/index.js';
import { copyAgg, emptyAgg, mergeInto, type Agg } from './rollup-math.js';
import { STORED_MEMBERS, type RawRowArray, type RollupRowArray, type SeriesRef, type StoredMember, type Store } from './store.js';

type Db = Database.Database;
type Stmt = Database.Statement;

const SCHEMA_VERSION = '2';

/** Bits of `series.kinds`: which data types a series has had written. */
export const KIND_BIT: Readonly<Record<DataType, number>> = { nnt: 1, text: 2, histogram: 4 };
export const DB_FILE = 'tsnode.db';

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
}

/** How often in-memory newest buckets are stored even while they are still filling. */
export const FLUSH_INTERVAL_MS = 2000;

interface Newest {
  ts: number;
  agg: Agg | null;
  dirty: boolean;
}

/** One series' records of a write, by offset, and which of them replace stored ones. */
interface SeriesBatch {
  created: boolean;
  recs: Map<number, NntRecord>;
  replaced: Set<number> | null;
}

export class SqliteStore implements Store {
  readonly rollups: readonly number[];
  readonly histogramRollups: readonly number[];
  private readonly db: Db;
  readonly smallest: number;
  /** uuid -> metric -> series id and the kinds of data it has (KIND_BIT). */
  private readonly seriesIds = new Map<string, Map<string, { id: number; kinds: number }>>();
  /** Highest raw ts per series (lazily loaded): offsets above it cannot replace anything. */
  private readonly maxRawTs = new Map<number, number>();
  /** Per series, per span index: the newest bucket of each larger span (see newestBucket). */
  private readonly newest = new Map<number, Array<Newest | undefined>>();
  /** Series with a dirty newest bucket (mirrors the `pending` table). */
  private readonly pendingSeries = new Set<number>();
  private readonly flushTimer: NodeJS.Timeout;
  private readonly columnStmts = new Map<string, Stmt>();
  private readonly s: Record<string, Stmt>;

  constructor(opts: SqliteStoreOptions) {
    this.rollups = [...opts.rollups];
    this.histogramRollups = [...opts.histogramRollups];
    this.smallest = this.rollups[0]!;
    let file = ':memory:';
    if (opts.dataDir !== null) {
      try {
        makeDirs(opts.dataDir);
      } catch (err) {
        throw new StoreOpenError(`cannot create data directory ${opts.dataDir}: ${(err as Error).message}`);
      }
      file = join(opts.dataDir, DB_FILE);
    }
    try {
      this.db = new Database(file);
      this.db.pragma('journal_mode = WAL');
      this.db.pragma('synchronous = NORMAL');
      this.db.pragma('busy_timeout = 5000');
      this.db.pragma('cache_size = -65536');
      // Checkpoint every 64 MiB of WAL instead of 4 MiB: a time-ordered ingest rewrites the same
      // tail pages batch after batch, and a checkpoint copies each page once however often it
      // changed. This took the commit from ~40% to ~25% of the ingest CPU. The WAL is truncated
      // back to 64 MiB after each checkpoint.
      this.db.pragma('wal_autocheckpoint = 16384');
      this.db.pragma('journal_size_limit = 67108864');
      this.db.pragma('temp_store = MEMORY');
    } catch (err) {
      throw new StoreOpenError(`cannot open database ${file}: ${(err as Error).message}`);
    }
    this.migrate();
    this.s = this.prepare();
    this.recoverPending();
    this.flushTimer = setInterval(() => this.flushAll(), FLUSH_INTERVAL_MS);
    this.flushTimer.unref();
  }

  /**
   * Recomputes from raw the newest larger buckets of every series listed in `pending` (after a
   * crash, or after a write rolled back while such buckets were only in memory).
   */
  private recoverPending(): void {
    const sids = this.db.prepare('SELECT series_id FROM pending').pluck().all() as number[];
    this.newest.clear();
    this.pendingSeries.clear();
    if (sids.length === 0) return;
    this.db.transaction(() => {
      for (const sid of sids) {
        const max = this.s.maxRaw!.get(sid) as number | null;
        if (max === null) continue;
        for (let i = 1; i < this.rollups.length; i++) {
          const span = this.rollups[i]!;
          const b = max - (max % span);
          const agg = emptyAgg();
          for (const row of this.s.rawRange!.all(sid, b, b + span) as RawRowArray[]) mergeInto(agg, aggOfRaw(row));
          this.putAgg(sid, span, b, agg);
        }
      }
      this.db.prepare('DELETE FROM pending').run();
    })();
  }

  private putAgg(sid: number, span: number, ts: number, agg: Agg): void {
    this.s.putRollup!.run(sid, span, ts, agg.count, agg.records, agg.value, agg.stddev, agg.derivative, agg.derivative_stddev, agg.counter, agg.counter_stddev);
  }

  /** Writes the dirty newest buckets of one series (inside the caller's transaction). */
  private flushSeriesTx(sid: number): void {
    if (!this.pendingSeries.has(sid)) return;
    const perSpan = this.newest.get(sid);
    if (perSpan) {
      for (let i = 1; i < perSpan.length; i++) {
        const e = perSpan[i];
        if (e?.dirty && e.agg) {
          this.putAgg(sid, this.rollups[i]!, e.ts, e.agg);
          e.dirty = false;
        }
      }
    }
    this.s.deletePending!.run(sid);
    this.pendingSeries.delete(sid);
  }

  /** Stores every dirty newest bucket in one transaction. */
  flushAll(): void {
    if (this.pendingSeries.size === 0 || !this.db.open) return;
    try {
      this.db.transaction(() => {
        for (const sid of [...this.pendingSeries]) this.flushSeriesTx(sid);
      })();
    } catch {
      // Rolled back: the buckets are still marked dirty and listed in `pending`; the next flush retries.
      this.resetAfterRollback();
    }
  }

  /** After a rolled-back transaction, in-memory state may describe rows that are not there. */
  private resetAfterRollback(): void {
    this.maxRawTs.clear();
    this.forgetUncommittedSeries();
    try {
      this.recoverPending();
    } catch {
      // The store is failing; `pending` still lists the series, so a restart recovers them.
      this.newest.clear();
      this.pendingSeries.clear();
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
      CREATE TABLE IF NOT EXISTS nnt_raw (
        series_id INTEGER NOT NULL, ts INTEGER NOT NULL,
        hidden INTEGER NOT NULL,
        count INTEGER NOT NULL, value REAL NOT NULL, stddev REAL NOT NULL,
        derivative REAL NOT NULL, derivative_stddev REAL NOT NULL,
        counter REAL NOT NULL, counter_stddev REAL NOT NULL,
        parts_period INTEGER, parts BLOB,
        PRIMARY KEY (series_id, ts)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS nnt_rollup (
        series_id INTEGER NOT NULL, span INTEGER NOT NULL, ts INTEGER NOT NULL,
        count INTEGER NOT NULL, records INTEGER NOT NULL,
        value REAL NOT NULL, stddev REAL NOT NULL,
        derivative REAL NOT NULL, derivative_stddev REAL NOT NULL,
        counter REAL NOT NULL, counter_stddev REAL NOT NULL,
        PRIMARY KEY (series_id, span, ts)
      ) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS pending (series_id INTEGER PRIMARY KEY);
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
      throw new StoreOpenError(`the data directory has schema version ${version}; this tsnode understands ${SCHEMA_VERSION}`);
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
      maxRaw: p('SELECT max(ts) FROM nnt_raw WHERE series_id = ?').pluck(),
      rawTsInRange: p('SELECT ts FROM nnt_raw WHERE series_id = ? AND ts >= ? AND ts <= ?').pluck(),
      putRaw: p(
        'INSERT OR REPLACE INTO nnt_raw (series_id, ts, hidden, count, value, stddev, derivative, derivative_stddev, counter, counter_stddev, parts_period, parts) VALUES (?, ?, 0, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      putRollup: p(
        'INSERT OR REPLACE INTO nnt_rollup (series_id, span, ts, count, records, value, stddev, derivative, derivative_stddev, counter, counter_stddev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      getRollup: p(
        'SELECT ts, count, records, value, stddev, derivative, derivative_stddev, counter, counter_stddev FROM nnt_rollup WHERE series_id = ? AND span = ? AND ts = ?',
      ).raw(),
      lastRollup: p(
        'SELECT ts, count, records, value, stddev, derivative, derivative_stddev, counter, counter_stddev FROM nnt_rollup WHERE series_id = ? AND span = ? ORDER BY ts DESC LIMIT 1',
      ).raw(),
      smallestRange: p(
        'SELECT ts, count, 1, value, stddev, derivative, derivative_stddev, counter, counter_stddev FROM nnt_raw WHERE series_id = ? AND ts >= ? AND ts < ? AND hidden = 0 ORDER BY ts',
      ).raw(),
      rollupRange: p(
        'SELECT ts, count, records, value, stddev, derivative, derivative_stddev, counter, counter_stddev FROM nnt_rollup WHERE series_id = ? AND span = ? AND ts >= ? AND ts < ? ORDER BY ts',
      ).raw(),
      rawRange: p(
        'SELECT ts, count, value, stddev, derivative, derivative_stddev, counter, counter_stddev, parts_period, parts FROM nnt_raw WHERE series_id = ? AND ts >= ? AND ts < ? ORDER BY ts',
      ).raw(),
      putText: p('INSERT OR REPLACE INTO text_data (series_id, ts, value) VALUES (?, ?, ?)'),
      textRange: p('SELECT ts, value FROM text_data WHERE series_id = ? AND ts >= ? AND ts < ? ORDER BY ts').raw(),
      putHistogram: p('INSERT OR REPLACE INTO histogram_data (series_id, period, ts, histogram) VALUES (?, ?, ?, ?)'),
      histogramRange: p('SELECT ts, period, histogram FROM histogram_data WHERE series_id = ? AND period = ? AND ts >= ? AND ts < ? ORDER BY ts').raw(),
      sweepRollup: p('DELETE FROM nnt_rollup WHERE series_id = ? AND span = ? AND ts < ?'),
      sweepRaw: p('DELETE FROM nnt_raw WHERE series_id = ? AND ts < ?'),
      insertPending: p('INSERT OR IGNORE INTO pending (series_id) VALUES (?)'),
      deletePending: p('DELETE FROM pending WHERE series_id = ?'),
      hideSmallest: p('UPDATE nnt_raw SET hidden = 1 WHERE series_id = ? AND ts < ? AND hidden = 0'),
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

  /** Finds or creates a series and notes the kind of data written to it; `created`: nothing to replace. */
  private seriesFor(uuid: string, metric: string, kind: number): { id: number; created: boolean } {
    const found = this.lookup(uuid, metric);
    if (found !== undefined) {
      if ((found.kinds & kind) === 0) {
        this.s.addKind!.run(kind, found.id);
        found.kinds |= kind;
      }
      return { id: found.id, created: false };
    }
    const id = Number(this.s.insertSeries!.run(uuid, metric, kind).lastInsertRowid);
    this.remember(uuid, metric, { id, kinds: kind });
    return { id, created: true };
  }

  /**
   * Runs `fn` in one transaction; if it rolls back, `afterRollback` drops the in-memory state that
   * may now describe rows that are not there, and the error goes on to the caller.
   */
  private atomically(fn: () => void, afterRollback: () => void): void {
    try {
      this.db.transaction(fn)();
    } catch (err) {
      afterRollback();
      throw err;
    }
  }

  writeNnt(records: readonly NntRecord[]): number {
    if (records.length === 0) return 0;
    // On rollback, cached max offsets and newest buckets may describe rows that are gone.
    this.atomically(() => this.writeNntTx(records), () => this.resetAfterRollback());
    return records.length;
  }

  /** After a rollback, series ids created inside it no longer exist: drop the whole cache. */
  private forgetUncommittedSeries(): void {
    this.seriesIds.clear();
  }

  private writeNntTx(records: readonly NntRecord[]): void {
    // Group by series; a repeated (series, offset) in one request: the last one wins.
    // Records usually come in runs of one series: a run after the first record skips the lookups.
    const bySeries = new Map<number, SeriesBatch>();
    let runId = '';
    let runMetric = '';
    let g: SeriesBatch | undefined;
    for (const rec of records) {
      if (g === undefined || rec.id !== runId || rec.metric !== runMetric) {
        const { id, created } = this.seriesFor(rec.id, rec.metric, KIND_BIT.nnt);
        g = bySeries.get(id);
        if (!g) bySeries.set(id, (g = { created, recs: new Map(), replaced: null }));
        runId = rec.id;
        runMetric = rec.metric;
      }
      g.recs.set(rec.offset, rec);
    }
    const putRaw = this.s.putRaw!;
    for (const [sid, g] of bySeries) {
      this.markReplaced(sid, g);
      let maxTs = this.maxRawTs.get(sid)!;
      for (const rec of g.recs.values()) {
        let partsPeriod: number | null = null;
        let parts: Buffer | null = null;
        if (rec.parts) {
          partsPeriod = rec.parts[0];
          parts = encodeParts(rec.parts[1]);
        }
        putRaw.run(sid, rec.offset, rec.count, rec.value, rec.stddev, rec.derivative, rec.derivative_stddev, rec.counter, rec.counter_stddev, partsPeriod, parts);
        if (rec.offset > maxTs) maxTs = rec.offset;
      }
      this.maxRawTs.set(sid, maxTs);
      for (let i = 1; i < this.rollups.length; i++) this.updateSpan(sid, i, g);
    }
  }

  /** Notes the offsets of one series' batch that replace a stored record. */
  private markReplaced(sid: number, g: SeriesBatch): void {
    if (g.created) {
      this.maxRawTs.set(sid, -1);
      return;
    }
    let known = this.maxRawTs.get(sid);
    if (known === undefined) {
      const m = this.s.maxRaw!.get(sid) as number | null;
      known = m ?? -1;
      this.maxRawTs.set(sid, known);
    }
    let min = Infinity;
    for (const off of g.recs.keys()) if (off < min) min = off;
    if (min > known) return; // pure append: nothing to replace
    for (const ts of this.s.rawTsInRange!.all(sid, min, known) as number[]) {
      if (g.recs.has(ts)) (g.replaced ??= new Set()).add(ts);
    }
  }

  /**
   * The newest bucket of a (series, larger span). Invariant: `ts` is the highest bucket of that
   * span (-1: none yet) and `agg` its aggregate; when `dirty` it is not stored yet (see the top).
   */
  private newestBucket(sid: number, spanIndex: number, created: boolean): Newest {
    let perSpan = this.newest.get(sid);
    if (!perSpan) this.newest.set(sid, (perSpan = new Array<Newest | undefined>(this.rollups.length)));
    let entry = perSpan[spanIndex];
    if (!entry) {
      const row = created ? undefined : (this.s.lastRollup!.get(sid, this.rollups[spanIndex]!) as RollupRowArray | undefined);
      entry = row ? { ts: row[0], agg: aggOfRollup(row), dirty: false } : { ts: -1, agg: null, dirty: false };
      perSpan[spanIndex] = entry;
    }
    return entry;
  }

  private markPending(sid: number): void {
    if (this.pendingSeries.has(sid)) return;
    this.s.insertPending!.run(sid);
    this.pendingSeries.add(sid);
  }

  /**
   * Merges one series' batch into the buckets of a larger span. Records usually arrive in time
   * order, so runs of records in the same bucket are merged without a map; a bucket seen again
   * later merges again (merging is associative). A bucket holding a replaced record is recomputed
   * from raw (which already holds the whole batch) and then skipped for the rest of the batch.
   */
  private updateSpan(sid: number, spanIndex: number, g: SeriesBatch): void {
    const span = this.rollups[spanIndex]!;
    const newest = this.newestBucket(sid, spanIndex, g.created);
    let recomputed = null as Set<number> | null; // (assigned in flush)
    let runB = -1;
    let run = null as Agg | null;
    let recompute = false;
    const flush = (): void => {
      if (runB < 0) return;
      if (recompute) (recomputed ??= new Set()).add(runB);
      this.applyBucket(sid, spanIndex, span, newest, runB, recompute ? null : run);
    };
    for (const rec of g.recs.values()) {
      const b = rec.offset - (rec.offset % span);
      if (recomputed?.has(b)) continue;
      const replaced = g.replaced?.has(rec.offset) ?? false;
      if (b === runB) {
        if (replaced) recompute = true;
        else if (!recompute) mergeInto(run!, rec);
        continue;
      }
      flush();
      runB = b;
      recompute = replaced;
      run = replaced ? null : mergeInto(emptyAgg(), rec);
    }
    flush();
  }

  /** Merges a delta into one bucket (null: recompute it from raw) and stores or caches the result. */
  private applyBucket(sid: number, spanIndex: number, span: number, newest: Newest, b: number, delta: Agg | null): void {
    let agg: Agg;
    if (delta === null) {
      agg = emptyAgg();
      for (const row of this.s.rawRange!.all(sid, b, b + span) as RawRowArray[]) mergeInto(agg, aggOfRaw(row));
    } else if (b > newest.ts) {
      agg = delta;
    } else if (b === newest.ts && newest.agg) {
      agg = mergeInto(copyAgg(newest.agg), delta);
    } else {
      const row = this.s.getRollup!.get(sid, span, b) as RollupRowArray | undefined;
      agg = row ? mergeInto(aggOfRollup(row), delta) : delta;
    }
    if (b < newest.ts) {
      this.putAgg(sid, span, b, agg); // an older bucket: stored at once
      return;
    }
    if (b > newest.ts && newest.dirty && newest.agg) this.putAgg(sid, span, newest.ts, newest.agg); // superseded: store it
    newest.ts = b;
    newest.agg = agg;
    newest.dirty = true;
    this.markPending(sid);
  }

  writeText(records: readonly TextRecord[]): number {
    if (records.length === 0) return 0;
    this.atomically(
      () => {
        for (const r of records) this.s.putText!.run(this.seriesFor(r.id, r.metric, KIND_BIT.text).id, r.offset, r.value);
      },
      () => this.forgetUncommittedSeries(),
    );
    return records.length;
  }

  writeHistogram(records: readonly HistogramRecord[]): number {
    if (records.length === 0) return 0;
    this.atomically(
      () => {
        for (const r of records) this.s.putHistogram!.run(this.seriesFor(r.id, r.metric, KIND_BIT.histogram).id, r.period, r.offset, r.histogram);
      },
      () => this.forgetUncommittedSeries(),
    );
    return records.length;
  }

  rollupRows(seriesId: number, span: number, fromTs: number, toTs: number): RollupRowArray[] {
    if (span === this.smallest) return this.s.smallestRange!.all(seriesId, fromTs, toTs) as RollupRowArray[];
    const rows = this.s.rollupRange!.all(seriesId, span, fromTs, toTs) as RollupRowArray[];
    // Overlay the newest bucket when it is only in memory; it is never older than a stored row.
    const e = this.newest.get(seriesId)?.[this.rollups.indexOf(span)];
    if (e?.dirty && e.agg && e.ts >= fromTs && e.ts < toTs) {
      const a = e.agg;
      const row: RollupRowArray = [e.ts, a.count, a.records, a.value, a.stddev, a.derivative, a.derivative_stddev, a.counter, a.counter_stddev];
      const last = rows[rows.length - 1];
      if (last && last[0] === e.ts) rows[rows.length - 1] = row;
      else rows.push(row);
    }
    return rows;
  }

  rollupColumn(seriesId: number, span: number, member: StoredMember, fromTs: number, toTs: number): Array<[number, number]> {
    const key = `${span === this.smallest ? 'raw' : 'rollup'}:${member}`;
    let stmt = this.columnStmts.get(key);
    if (!stmt) {
      if (!(STORED_MEMBERS as readonly string[]).includes(member)) throw new Error(`not a stored member: ${member}`);
      stmt =
        span === this.smallest
          ? this.db.prepare(`SELECT ts, ${member} FROM nnt_raw WHERE series_id = ? AND ts >= ? AND ts < ? AND hidden = 0 ORDER BY ts`).raw()
          : this.db.prepare(`SELECT ts, ${member} FROM nnt_rollup WHERE series_id = ? AND span = ? AND ts >= ? AND ts < ? ORDER BY ts`).raw();
      this.columnStmts.set(key, stmt);
    }
    const rows = (span === this.smallest ? stmt.all(seriesId, fromTs, toTs) : stmt.all(seriesId, span, fromTs, toTs)) as Array<[number, number]>;
    const e = this.newest.get(seriesId)?.[this.rollups.indexOf(span)];
    if (span !== this.smallest && e?.dirty && e.agg && e.ts >= fromTs && e.ts < toTs) {
      const row: [number, number] = [e.ts, e.agg[member]];
      const last = rows[rows.length - 1];
      if (last && last[0] === e.ts) rows[rows.length - 1] = row;
      else rows.push(row);
    }
    return rows;
  }

  rawRows(seriesId: number, fromTs: number, toTs: number): RawRowArray[] {
    return this.s.rawRange!.all(seriesId, fromTs, toTs) as RawRowArray[];
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
    let n = 0;
    this.atomically(() => {
      // Store the series' in-memory buckets first, so the delete sees (and removes) them too.
      this.flushSeriesTx(seriesId);
      for (const span of spans) {
        if (span === this.smallest) {
          // The smallest span shares its row with the raw record: hide it unless raw goes too.
          if (!raw) n += this.s.hideSmallest!.run(seriesId, before).changes;
        } else {
          n += this.s.sweepRollup!.run(seriesId, span, before).changes;
        }
      }
      if (raw) n += this.s.sweepRaw!.run(seriesId, before).changes;
    }, () => this.resetAfterRollback());
    // The cached newest buckets may be gone now; a stale (higher) max raw offset only costs a range query.
    this.newest.delete(seriesId);
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

  close(): void {
    clearInterval(this.flushTimer);
    if (!this.db.open) return;
    this.flushAll();
    this.db.close();
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

/** Parts as Float64 numbers, 7 per piece in NUMERIC_FIELDS order. */
export function encodeParts(pieces: readonly Aggregate[]): Buffer {
  const arr = new Float64Array(pieces.length * 7);
  let i = 0;
  for (const p of pieces) {
    arr[i++] = p.count;
    arr[i++] = p.value;
    arr[i++] = p.derivative;
    arr[i++] = p.counter;
    arr[i++] = p.stddev;
    arr[i++] = p.derivative_stddev;
    arr[i++] = p.counter_stddev;
  }
  return Buffer.from(arr.buffer, arr.byteOffset, arr.byteLength);
}

/** The pieces of a stored parts blob as aggregates (each counts as one record). */
export function decodeParts(blob: Buffer): Agg[] {
  const arr = new Float64Array(blob.buffer.slice(blob.byteOffset, blob.byteOffset + blob.byteLength));
  const out: Agg[] = [];
  for (let i = 0; i + 7 <= arr.length; i += 7) {
    out.push({
      count: arr[i]!,
      records: 1,
      value: arr[i + 1]!,
      derivative: arr[i + 2]!,
      counter: arr[i + 3]!,
      stddev: arr[i + 4]!,
      derivative_stddev: arr[i + 5]!,
      counter_stddev: arr[i + 6]!,
    });
  }
  return out;
}

export function aggOfRollup(r: RollupRowArray): Agg {
  return { count: r[1], records: r[2], value: r[3], stddev: r[4], derivative: r[5], derivative_stddev: r[6], counter: r[7], counter_stddev: r[8] };
}

export function aggOfRaw(r: RawRowArray): Agg {
  return { count: r[1], records: 1, value: r[2], stddev: r[3], derivative: r[4], derivative_stddev: r[5], counter: r[6], counter_stddev: r[7] };
}
