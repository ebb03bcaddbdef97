/**
 * The store of the reference node: SQLite (better-sqlite3) for the data, an ingest log in front of
 * the numeric data. WAL with synchronous=NORMAL: a committed transaction survives a crash of the
 * node process (not necessarily a power loss), which is what a write acknowledgement promises.
 *
 * A numeric write is appended to the ingest log (storage/ingest-log.ts), durable when the write
 * returns, and queued in memory; the flusher (storage/flusher.ts) moves the queued writes into the
 * chunks in the background. Nothing waits for a flush: a read of a series with records waiting
 * computes what the flush would make of them on a scratch layer over the chunks and reads through
 * it, writing nothing; a sweep of such a series applies its waiting records first (or, deleting
 * the raw data too, drops the ones before its time), and leaves an nnt_skip row so a replay after
 * a crash does not bring them back. Text and histogram writes go straight to their tables.
 *
 * This file wires the parts together and answers the Store interface; docs/reference-node.md
 * describes the design module by module.
 */
import type Database from 'better-sqlite3';
import type { DataType, HistogramRecord, NntRecord, TextRecord } from '../protocol/index.js';
import { LOG_ENTRY, packRecords, type PackedWrite } from './packed-write.js';
import { memberRowsOf, rawRowsOf, rollupRowsOf } from './storage/chunk-rows.js';
import { ChunkTable } from './storage/chunk-table.js';
import { DiskSpace } from './storage/disk-full.js';
import { Flusher, FLUSH_RECORDS, type FlushEvent } from './storage/flusher.js';
import type { IngestLog } from './storage/ingest-log.js';
import { replayLog } from './storage/log-replay.js';
import { encodeLog } from './storage/log-payload.js';
import { closeStorage, openStorage, reportLogFindings, type OpenedStorage } from './storage/open.js';
import { RollupWriter } from './storage/rollup-writer.js';
import { KIND_BIT } from './storage/schema.js';
import { SeriesIds } from './storage/series-ids.js';
import { ShardIndex } from './storage/shard-index.js';
import { ChunkGrid, describeLayout, shardLayout, shardStart, type ShardKind, type ShardLayout, type ShardSpan } from './shards.js';
import { inTimeOrder } from './storage/series-records.js';
import { Statements } from './storage/statements.js';
import { Wal } from './storage/wal.js';
import { STORED_MEMBERS, type IndexedSeries, type RawRowArray, type RollupRowArray, type SeriesRef, type StoredMember, type Store } from './store.js';

export { LOCK_FILE } from './storage/data-dir-lock.js';
export { DB_FILE } from './storage/schema.js';
export { StoreOpenError } from './storage/store-open-error.js';
export type { FlushEvent };

export interface SqliteStoreOptions {
  /** Directory for the database file, or null for memory. */
  dataDir: string | null;
  rollups: readonly number[];
  histogramRollups: readonly number[];
  /** Time shard sizes (default: the store's sample config for the rollups given; see shards.ts). */
  shards?: ShardLayout;
  /** Told when a background flush fails (the logged writes stay and are retried). */
  onError?: (err: unknown) => void;
  /** Told what the operator should know: a torn log tail dropped, a disk full, a backlog applied. */
  onNotice?: (message: string) => void;
  /** Apply the intact frames of a damaged ingest log instead of refusing to start (see IngestLog). */
  salvageLog?: boolean;
  /** Bytes kept back in `tsnode.reserve` for a full disk (see disk-reserve.ts); default 0 (none). */
  reserveBytes?: number;
  /** The SQLite page cache, bytes (default 8 MiB: `serve --cache-size`). */
  cacheBytes?: number;
  /** Most series ids kept in memory (default 65,536). */
  seriesCacheSize?: number;
  /** Waiting records that start a flush (default FLUSH_RECORDS). */
  flushRecords?: number;
  /** A pause before each slice of a flush, and one series per slice (ms; default 0: slices of ~20 ms, only the event loop's turn between them). */
  flushPauseMs?: number;
  onFlush?: (e: FlushEvent) => void;
}

const SERIES_CACHE_SIZE = 65_536;
/** Waiting records of one series past which a read applies them instead of computing them on a scratch layer. */
const VIEW_RECORDS = 512;

export class SqliteStore implements Store {
  readonly rollups: readonly number[];
  readonly histogramRollups: readonly number[];
  readonly smallest: number;
  readonly shardLayout: ShardLayout;
  private readonly db: Database.Database;
  private readonly s: Statements;
  private readonly log: IngestLog | null;
  private readonly storage: OpenedStorage;
  private readonly seriesIds: SeriesIds;
  private readonly chunks: ChunkTable;
  private readonly writer: RollupWriter;
  private readonly wal: Wal;
  private readonly disk: DiskSpace;
  private readonly flusher: Flusher;
  private readonly shards: ShardIndex;
  /** The latest time a sweep of the smallest span alone hid its entries before (0: never). */
  private hiddenBefore = 0;
  /** Per larger span, the latest delete time a sweep of it had (a missing bucket before it was swept). */
  private readonly sweptBefore = new Map<number, number>();
  /** The latest delete time of a sweep that deleted the raw records too (every span; 0: never). */
  private rawSweptBefore = 0;
  private readonly onError: (err: unknown) => void;
  private closed: Promise<void> | undefined;

  constructor(opts: SqliteStoreOptions) {
    this.rollups = [...opts.rollups];
    this.histogramRollups = [...opts.histogramRollups];
    this.smallest = this.rollups[0]!;
    this.shardLayout = opts.shards ?? shardLayout(this.rollups, this.histogramRollups);
    this.onError = opts.onError ?? (() => {});
    const onNotice = opts.onNotice ?? (() => {});
    this.storage = openStorage({
      dataDir: opts.dataDir,
      rollups: this.rollups,
      shards: describeLayout(this.shardLayout),
      salvageLog: opts.salvageLog === true,
      reserveBytes: opts.reserveBytes ?? 0,
      ...(opts.cacheBytes !== undefined ? { cacheBytes: opts.cacheBytes } : {}),
      onNotice,
    });
    const { db, log, reserve } = this.storage;
    this.db = db;
    this.log = log;
    try {
      this.s = new Statements(db);
      for (const span of this.rollups.slice(1)) {
        const t = this.s.getMeta.get(`swept_before:${span}`);
        if (t !== undefined) this.sweptBefore.set(span, Number(t));
      }
      this.hiddenBefore = Number(this.s.getMeta.get('hidden_before') ?? 0);
      this.rawSweptBefore = Number(this.s.getMeta.get('raw_swept_before') ?? 0);
      const grid = new ChunkGrid(this.shardLayout, this.smallest);
      this.shards = new ShardIndex(this.s, this.shardLayout, this.smallest, this.histogramRollups[0], () => this.hiddenBefore);
      this.seriesIds = new SeriesIds(this.s, opts.seriesCacheSize ?? SERIES_CACHE_SIZE);
      this.chunks = new ChunkTable(this.s, grid);
      this.writer = new RollupWriter(this.chunks, this.rollups, this.sweptBefore, grid);
      this.wal = new Wal(db, this.storage.file);
      this.disk = new DiskSpace(reserve, this.wal, () => log?.unappliedBytes() ?? 0, onNotice, this.storage.startedFull);
      this.flusher = new Flusher({
        db,
        statements: this.s,
        log,
        writer: this.writer,
        disk: this.disk,
        wal: this.wal,
        flushRecords: opts.flushRecords ?? FLUSH_RECORDS,
        flushPauseMs: opts.flushPauseMs ?? 0,
        onError: this.onError,
        onNotice,
        onFlush: opts.onFlush ?? (() => {}),
      });
      if (log !== null) {
        reportLogFindings(log, onNotice);
        const queued = replayLog(log.pendingFrames.splice(0), this.s, db.name, this.flusher);
        if (queued > 0) onNotice(`applying ${queued} logged record(s) from before the last stop in the background`);
        this.wal.startCheckpointer(this.onError);
        if (!this.disk.full) reserve?.ensure();
      }
    } catch (err) {
      // Nothing stays open or locked after a failed start.
      closeStorage(this.storage);
      throw err;
    }
    this.flusher.run();
  }

  /** Series ids held in memory (bounded by seriesCacheSize). */
  get cachedSeries(): number {
    return this.seriesIds.size;
  }

  findSeries(uuid: string, metric: string): number | undefined {
    return this.seriesIds.find(uuid, metric)?.id;
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
      const id = this.seriesIds.cachedId(series.id[k]!, series.metric[k]!, KIND_BIT.nnt);
      if (id !== undefined) sids[k] = id;
      else known = false;
    }
    // A transaction (which takes the write lock) only when a series is new to the cache.
    if (!known) {
      this.atomically(() => {
        for (let k = 0; k < sids.length; k++) sids[k] = this.seriesIds.idFor(series.id[k]!, series.metric[k]!, KIND_BIT.nnt);
      });
    }
    for (let o = 0; o < entries.length; o += LOG_ENTRY) entries[o] = sids[entries[o]!]!;
    // New series are committed first, so the series ids the log holds always exist.
    try {
      this.log?.append(encodeLog(entries, parts));
    } catch (err) {
      throw this.disk.asStorageError(err);
    }
    this.flusher.add(entries, parts);
    return n;
  }

  writeText(records: readonly TextRecord[]): number {
    if (records.length === 0) return 0;
    this.refuseWrites();
    this.atomically(() => {
      for (const r of records) this.s.putText.run(this.seriesIds.idFor(r.id, r.metric, KIND_BIT.text), r.offset, r.value);
    });
    return records.length;
  }

  writeHistogram(records: readonly HistogramRecord[]): number {
    if (records.length === 0) return 0;
    this.refuseWrites();
    this.atomically(() => {
      for (const r of records) this.s.putHistogram.run(this.seriesIds.idFor(r.id, r.metric, KIND_BIT.histogram), r.period, r.offset, r.histogram);
    });
    return records.length;
  }

  /** Throws the refusal when the node cannot take writes now (back-pressure): 507 for room, 503 for a backlog. */
  private refuseWrites(): void {
    this.disk.refuseIfFull(this.flusher.failure);
    this.flusher.refuseIfBehind();
  }

  /** Runs `fn` in one transaction; on rollback the series created inside it are forgotten. */
  private atomically(fn: () => void): void {
    try {
      this.db.transaction(fn).immediate();
    } catch (err) {
      this.seriesIds.forget();
      throw this.disk.asStorageError(err);
    }
  }

  /** Moves every waiting write into the chunks before returning (close, tests). */
  flush(): void {
    this.flusher.flushAll();
  }

  rollupRows(seriesId: number, span: number, fromTs: number, toTs: number): RollupRowArray[] {
    return this.viewing(seriesId, () => rollupRowsOf(this.chunks.chunksIn(seriesId, span, fromTs, toTs), fromTs, toTs, span === this.smallest));
  }

  rollupColumn(seriesId: number, span: number, member: StoredMember, fromTs: number, toTs: number): Array<[number, number]> {
    if (!(STORED_MEMBERS as readonly string[]).includes(member)) throw new Error(`not a stored member: ${member}`);
    return this.viewing(seriesId, () => memberRowsOf(this.chunks.chunksIn(seriesId, span, fromTs, toTs), member, fromTs, toTs, span === this.smallest));
  }

  rawRows(seriesId: number, fromTs: number, toTs: number): RawRowArray[] {
    return this.viewing(seriesId, () => rawRowsOf(this.chunks.chunksIn(seriesId, this.smallest, fromTs, toTs), fromTs, toTs, () => this.chunks.partsIn(seriesId, fromTs, toTs)));
  }

  /**
   * Runs a read of one series through the scratch layer holding what the flush will make of its
   * waiting records, so the read sees every acknowledged write without writing anything.
   */
  private viewing<T>(sid: number, read: () => T): T {
    let records = this.flusher.collect(sid);
    if (records === null) return read();
    if (records.n > VIEW_RECORDS && !this.disk.full && this.flusher.failure === null && !this.wal.waiting) {
      // Many waiting records (a hot series read again and again): applied for real, once, as the
      // flush would (a replay applying them again changes nothing); the next read starts from here.
      const all = records;
      try {
        this.db.transaction(() => this.writer.apply(sid, inTimeOrder(all))).immediate();
        this.flusher.dropWaiting(sid, Infinity);
        return read();
      } catch {
        records = this.flusher.collect(sid);
        if (records === null) return read();
      }
    }
    const waiting = records;
    return this.chunks.withScratch(() => {
      this.writer.apply(sid, inTimeOrder(waiting));
      return read();
    });
  }

  textRows(seriesId: number, fromTs: number, toTs: number): Array<[number, string]> {
    return this.s.textRange.all(seriesId, fromTs, toTs);
  }

  histogramRows(seriesId: number, period: number, fromTs: number, toTs: number): Array<[number, number, string]> {
    return this.s.histogramRange.all(seriesId, period, fromTs, toTs);
  }

  listSeries(afterId: number, limit: number, type: DataType): SeriesRef[] {
    return this.s.listSeries.all(afterId, KIND_BIT[type], limit);
  }

  sweepNnt(seriesId: number, before: number, spans: readonly number[], raw: boolean): number {
    try {
      this.disk.keepWalSmall();
    } catch {
      // the sweep may still fit; it frees pages either way
    }
    // The series' waiting records are part of what the sweep acts on.
    const waiting = this.flusher.collect(seriesId);
    const at = this.log?.position();
    let n = 0;
    this.db
      .transaction(() => {
        for (const span of spans) {
          if (span !== this.smallest && before > (this.sweptBefore.get(span) ?? 0)) {
            this.sweptBefore.set(span, before);
            this.s.putMeta.run(`swept_before:${span}`, String(before));
          }
        }
        // Deleting the raw data too: the waiting records before the time need not be stored at
        // all (a full disk is when this matters). Otherwise they are applied first, then swept.
        if (waiting !== null && !raw) this.writer.apply(seriesId, inTimeOrder(waiting));
        // Whatever the log still holds of the series (waiting, or applied early by a read) must not
        // come back with a replay after a crash.
        if (at !== undefined && this.flusher.logUnapplied) this.s.putSkip.run(seriesId, at.generation, at.offset, raw ? before : null);
        if (raw) {
          n += this.chunks.dropBefore(seriesId, this.smallest, before);
          this.chunks.dropPartsBefore(seriesId, before);
          if (before > this.rawSweptBefore) {
            this.rawSweptBefore = before;
            this.s.putMeta.run('raw_swept_before', String(before));
          }
        } else if (spans.includes(this.smallest)) {
          // The smallest span shares its entries with the raw records: hide them.
          n += this.chunks.hideBefore(seriesId, this.smallest, before);
          if (before > this.hiddenBefore) {
            this.hiddenBefore = before;
            this.s.putMeta.run('hidden_before', String(before));
          }
        }
        const larger = spans.filter((span) => span !== this.smallest);
        for (const span of larger) n += this.chunks.dropBefore(seriesId, span, before);
        this.writer.keepStraddling(seriesId, larger, before);
      })
      .immediate();
    if (waiting !== null) this.flusher.dropWaiting(seriesId, raw ? before : Infinity);
    return n;
  }

  sweepCutoffs(): { spans: ReadonlyMap<number, number>; raw: number } {
    const spans = new Map(this.sweptBefore);
    if (this.hiddenBefore > 0) spans.set(this.smallest, this.hiddenBefore);
    return { spans, raw: this.rawSweptBefore };
  }

  sweepText(seriesId: number, before: number): number {
    return this.s.sweepText.run(seriesId, before).changes;
  }

  sweepHistogram(seriesId: number, before: number, periods: readonly number[]): number {
    let n = 0;
    this.db
      .transaction(() => {
        for (const period of periods) n += this.s.sweepHistogram.run(seriesId, period, before).changes;
      })
      .immediate();
    return n;
  }

  indexedSeries(afterId: number, limit: number): IndexedSeries[] {
    return this.s.indexedSeries.all(afterId, limit);
  }

  hasData(seriesId: number, type: DataType, fromTs: number, toTs: number): boolean {
    if (type === 'text') return this.s.textAny.get(seriesId, fromTs, toTs) !== undefined;
    if (type === 'histogram') return this.s.histogramAny.get(seriesId, fromTs, toTs) !== undefined;
    return this.rawRows(seriesId, fromTs, toTs).length > 0;
  }

  /**
   * A full delete: every row of the series goes in one transaction, its index entry is cleared
   * (kinds 0), and as in sweepNnt the records the ingest log still holds of it are marked dealt
   * with, so a replay after a crash does not bring them back. The series row itself stays: the log
   * may still name its id.
   */
  deleteSeries(seriesId: number): void {
    const at = this.log?.position();
    this.db
      .transaction(() => {
        if (at !== undefined && this.flusher.logUnapplied) this.s.putSkip.run(seriesId, at.generation, at.offset, null);
        for (const drop of this.s.dropSeriesData) drop.run(seriesId);
        this.s.clearKinds.run(seriesId);
      })
      .immediate();
    this.flusher.dropWaiting(seriesId, Infinity);
    const row = this.s.seriesById.get(seriesId);
    if (row !== undefined) this.seriesIds.cleared(row.uuid, row.metric);
  }

  /** The shards holding data: those of the stored rows, and those the waiting records will fill. */
  listShards(kind: ShardKind, period: number): ShardSpan[] {
    const listed = this.shards.list(kind, period);
    const size = this.shards.sizeOf(kind, period);
    if (kind === 'histogram' || kind === 'histogram_raw' || size === undefined) return listed;
    const starts = new Set(listed.map((s) => s.start));
    this.flusher.waitingTimes((ts) => starts.add(shardStart(ts, size)));
    if (starts.size === listed.length) return listed;
    return [...starts].sort((a, b) => a - b).map((start) => ({ start, end: start + size }));
  }

  removeShard(kind: ShardKind, period: number, shard: ShardSpan): number {
    // Records waiting for the shard are applied first, so none of them brings it back afterwards.
    if (kind === 'nnt' || kind === 'raw') {
      let waiting = false;
      this.flusher.waitingTimes((ts) => (waiting ||= ts >= shard.start && ts < shard.end));
      if (waiting) this.flusher.flushAll();
    }
    let n = 0;
    this.db
      .transaction(() => {
        n = this.shards.remove(kind, period, shard);
        // A late record into the removed range finds its buckets missing: like a swept bucket, it
        // is rebuilt from the raw entries rather than merged into nothing.
        if (kind === 'nnt' && period !== this.smallest && shard.end > (this.sweptBefore.get(period) ?? 0)) {
          this.sweptBefore.set(period, shard.end);
          this.s.putMeta.run(`swept_before:${period}`, String(shard.end));
        }
      })
      .immediate();
    return n;
  }

  close(): Promise<void> {
    this.closed ??= this.closeNow();
    return this.closed;
  }

  private closeNow(): Promise<void> {
    this.flusher.stop();
    try {
      this.flusher.flushAll();
    } catch (err) {
      // The writes stay in the log; the next start applies them.
      this.onError(err);
    }
    closeStorage(this.storage);
    // The checkpointer's connection closes last and may still touch the -wal/-shm files as it
    // goes: whoever removes the data dir waits for this.
    return this.wal.close();
  }
}
