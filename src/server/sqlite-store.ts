/**
 * The SQLite store (better-sqlite3). WAL with synchronous=NORMAL: a committed transaction
 * survives a crash of the node process (not necessarily a power loss), which is what a write
 * acknowledgement promises.
 *
 * Schema: `series` maps (uuid, metric) to an integer id; every other table is WITHOUT ROWID,
 * keyed by (series_id, [span|period,] ts), so range reads and per-series sweeps are index walks.
 * - `nnt_raw`: the records as written (smallest span) with their `parts`, the source for recalc.
 * - `nnt_rollup`: every configured span materialised separately, so a per-span sweep removes
 *   only that span. Larger spans are merged incrementally from each batch; a bucket that had a
 *   record replaced is recomputed from `nnt_raw`.
 */
import Database from 'better-sqlite3';
import { mkdirSync } from 'node:fs';
import { join } from 'node:path';
import type { Aggregate, HistogramRecord, NntRecord, TextRecord } from '../protocol/index.js';
import { emptyAgg, mergeInto, type Agg } from './rollup-math.js';
import type { RawRowArray, RollupRowArray, SeriesRef, Store } from './store.js';

type Db = Database.Database;
type Stmt = Database.Statement;

const SCHEMA_VERSION = '1';
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

interface PendingRecord {
  rec: NntRecord;
  replaced: boolean;
}

export class SqliteStore implements Store {
  readonly rollups: readonly number[];
  readonly histogramRollups: readonly number[];
  private readonly db: Db;
  private readonly smallest: number;
  /** uuid -> metric -> series id. */
  private readonly seriesIds = new Map<string, Map<string, number>>();
  /** Highest raw ts per series (lazily loaded): offsets above it cannot replace anything. */
  private readonly maxRawTs = new Map<number, number>();
  private readonly s: Record<string, Stmt>;

  constructor(opts: SqliteStoreOptions) {
    this.rollups = [...opts.rollups];
    this.histogramRollups = [...opts.histogramRollups];
    this.smallest = this.rollups[0]!;
    let file = ':memory:';
    if (opts.dataDir !== null) {
      try {
        mkdirSync(opts.dataDir, { recursive: true });
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
      this.db.pragma('temp_store = MEMORY');
    } catch (err) {
      throw new StoreOpenError(`cannot open database ${file}: ${(err as Error).message}`);
    }
    this.migrate();
    this.s = this.prepare();
  }

  private migrate(): void {
    this.db.exec(`
      CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
      CREATE TABLE IF NOT EXISTS series (
        id INTEGER PRIMARY KEY,
        uuid TEXT NOT NULL,
        metric TEXT NOT NULL,
        UNIQUE (uuid, metric)
      );
      CREATE TABLE IF NOT EXISTS nnt_raw (
        series_id INTEGER NOT NULL, ts INTEGER NOT NULL,
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
      findSeries: p('SELECT id FROM series WHERE uuid = ? AND metric = ?').pluck(),
      insertSeries: p('INSERT INTO series (uuid, metric) VALUES (?, ?)'),
      listSeries: p('SELECT id, uuid, metric FROM series WHERE id > ? ORDER BY id LIMIT ?'),
      maxRaw: p('SELECT max(ts) FROM nnt_raw WHERE series_id = ?').pluck(),
      rawTsInRange: p('SELECT ts FROM nnt_raw WHERE series_id = ? AND ts >= ? AND ts <= ?').pluck(),
      putRaw: p(
        'INSERT OR REPLACE INTO nnt_raw (series_id, ts, count, value, stddev, derivative, derivative_stddev, counter, counter_stddev, parts_period, parts) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      putRollup: p(
        'INSERT OR REPLACE INTO nnt_rollup (series_id, span, ts, count, records, value, stddev, derivative, derivative_stddev, counter, counter_stddev) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)',
      ),
      getRollup: p(
        'SELECT ts, count, records, value, stddev, derivative, derivative_stddev, counter, counter_stddev FROM nnt_rollup WHERE series_id = ? AND span = ? AND ts = ?',
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
      sweepText: p('DELETE FROM text_data WHERE series_id = ? AND ts < ?'),
      sweepHistogram: p('DELETE FROM histogram_data WHERE series_id = ? AND period = ? AND ts < ?'),
    };
  }

  findSeries(uuid: string, metric: string): number | undefined {
    const cached = this.seriesIds.get(uuid)?.get(metric);
    if (cached !== undefined) return cached;
    const id = this.s.findSeries!.get(uuid, metric) as number | undefined;
    if (id !== undefined) this.remember(uuid, metric, id);
    return id;
  }

  private remember(uuid: string, metric: string, id: number): void {
    let m = this.seriesIds.get(uuid);
    if (!m) this.seriesIds.set(uuid, (m = new Map()));
    m.set(metric, id);
  }

  /** Finds or creates a series; `created` tells whether it is new (nothing to replace then). */
  private seriesFor(uuid: string, metric: string): { id: number; created: boolean } {
    const found = this.findSeries(uuid, metric);
    if (found !== undefined) return { id: found, created: false };
    const id = Number(this.s.insertSeries!.run(uuid, metric).lastInsertRowid);
    this.remember(uuid, metric, id);
    return { id, created: true };
  }

  writeNnt(records: readonly NntRecord[]): number {
    if (records.length === 0) return 0;
    const run = this.db.transaction(() => this.writeNntTx(records));
    try {
      run();
    } catch (err) {
      // The transaction rolled back; cached max offsets may describe rows that are gone.
      this.maxRawTs.clear();
      this.forgetUncommittedSeries();
      throw err;
    }
    return records.length;
  }

  /** After a rollback, series ids created inside it no longer exist: drop the whole cache. */
  private forgetUncommittedSeries(): void {
    this.seriesIds.clear();
  }

  private writeNntTx(records: readonly NntRecord[]): void {
    const smallest = this.smallest;
    // Group by series; a repeated (series, offset) in one request: the last one wins.
    const bySeries = new Map<number, { created: boolean; recs: Map<number, PendingRecord> }>();
    for (const rec of records) {
      const { id, created } = this.seriesFor(rec.id, rec.metric);
      let g = bySeries.get(id);
      if (!g) bySeries.set(id, (g = { created, recs: new Map() }));
      g.recs.set(rec.offset, { rec, replaced: false });
    }
    const putRaw = this.s.putRaw!;
    const putRollup = this.s.putRollup!;
    for (const [sid, g] of bySeries) {
      this.markReplaced(sid, g.created, g.recs);
      let maxTs = this.maxRawTs.get(sid) ?? -1;
      for (const { rec } of g.recs.values()) {
        let partsPeriod: number | null = null;
        let parts: Buffer | null = null;
        if (rec.parts) {
          partsPeriod = rec.parts[0];
          parts = encodeParts(rec.parts[1]);
        }
        putRaw.run(sid, rec.offset, rec.count, rec.value, rec.stddev, rec.derivative, rec.derivative_stddev, rec.counter, rec.counter_stddev, partsPeriod, parts);
        putRollup.run(sid, smallest, rec.offset, rec.count, 1, rec.value, rec.stddev, rec.derivative, rec.derivative_stddev, rec.counter, rec.counter_stddev);
        if (rec.offset > maxTs) maxTs = rec.offset;
      }
      this.maxRawTs.set(sid, maxTs);
      for (let i = 1; i < this.rollups.length; i++) this.updateSpan(sid, this.rollups[i]!, g.recs);
    }
  }

  /** Marks the records of one series that replace a stored record. */
  private markReplaced(sid: number, created: boolean, recs: Map<number, PendingRecord>): void {
    if (created) {
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
    for (const off of recs.keys()) if (off < min) min = off;
    if (min > known) return; // pure append: nothing to replace
    const existing = this.s.rawTsInRange!.all(sid, min, known) as number[];
    for (const ts of existing) {
      const p = recs.get(ts);
      if (p) p.replaced = true;
    }
  }

  /** Merges one batch into the buckets of a larger span; buckets with a replaced record are recomputed from raw. */
  private updateSpan(sid: number, span: number, recs: Map<number, PendingRecord>): void {
    const buckets = new Map<number, Agg | null>();
    for (const { rec, replaced } of recs.values()) {
      const b = rec.offset - (rec.offset % span);
      const cur = buckets.get(b);
      if (replaced || cur === null) {
        buckets.set(b, null); // recompute
        continue;
      }
      const one: Agg = {
        count: rec.count,
        records: 1,
        value: rec.value,
        stddev: rec.stddev,
        derivative: rec.derivative,
        derivative_stddev: rec.derivative_stddev,
        counter: rec.counter,
        counter_stddev: rec.counter_stddev,
      };
      if (cur === undefined) buckets.set(b, one);
      else mergeInto(cur, one);
    }
    const putRollup = this.s.putRollup!;
    for (const [b, delta] of buckets) {
      let agg: Agg;
      if (delta === null) {
        agg = emptyAgg();
        for (const row of this.s.rawRange!.all(sid, b, b + span) as RawRowArray[]) mergeInto(agg, aggOfRaw(row));
      } else {
        const row = this.s.getRollup!.get(sid, span, b) as RollupRowArray | undefined;
        if (row) {
          agg = aggOfRollup(row);
          mergeInto(agg, delta);
        } else {
          agg = delta;
        }
      }
      putRollup.run(sid, span, b, agg.count, agg.records, agg.value, agg.stddev, agg.derivative, agg.derivative_stddev, agg.counter, agg.counter_stddev);
    }
  }

  writeText(records: readonly TextRecord[]): number {
    if (records.length === 0) return 0;
    const run = this.db.transaction(() => {
      for (const r of records) this.s.putText!.run(this.seriesFor(r.id, r.metric).id, r.offset, r.value);
    });
    try {
      run();
    } catch (err) {
      this.forgetUncommittedSeries();
      throw err;
    }
    return records.length;
  }

  writeHistogram(records: readonly HistogramRecord[]): number {
    if (records.length === 0) return 0;
    const run = this.db.transaction(() => {
      for (const r of records) this.s.putHistogram!.run(this.seriesFor(r.id, r.metric).id, r.period, r.offset, r.histogram);
    });
    try {
      run();
    } catch (err) {
      this.forgetUncommittedSeries();
      throw err;
    }
    return records.length;
  }

  rollupRows(seriesId: number, span: number, fromTs: number, toTs: number): RollupRowArray[] {
    return this.s.rollupRange!.all(seriesId, span, fromTs, toTs) as RollupRowArray[];
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

  listSeries(afterId: number, limit: number): SeriesRef[] {
    return this.s.listSeries!.all(afterId, limit) as SeriesRef[];
  }

  sweepNnt(seriesId: number, before: number, spans: readonly number[], raw: boolean): number {
    let n = 0;
    this.db.transaction(() => {
      for (const span of spans) n += this.s.sweepRollup!.run(seriesId, span, before).changes;
      if (raw) n += this.s.sweepRaw!.run(seriesId, before).changes;
    })();
    // Removing raw rows never raises the max offset; a stale (higher) max only costs a range query.
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
    if (this.db.open) this.db.close();
  }
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
