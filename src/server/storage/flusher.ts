/**
 * Moves logged numeric writes into the chunks, in the background. A write is logged (durable) and
 * queued here by series; a flush starts a new log generation for the writes that come meanwhile
 * and applies the ended one series by series, in slices of about FLUSH_SLICE_MS between which the
 * node goes on answering. Its last slice records the generation as applied, and then its file is
 * deleted. Flushes start when enough records are waiting and every FLUSH_INTERVAL_MS; a failed
 * one is retried by the next tick. Reads and sweeps take a series' waiting records from here
 * (collect, dropWaiting) instead of waiting for a flush.
 */
import type Database from 'better-sqlite3';
import { ProtocolError } from '../../protocol/index.js';
import { ENTRY } from '../chunks.js';
import type { StoredParts } from '../packed-write.js';
import { isDiskFull, type DiskSpace } from './disk-full.js';
import type { IngestLog } from './ingest-log.js';
import type { RollupWriter } from './rollup-writer.js';
import { concatRecords, enqueue, inTimeOrder, keepFrom, splitOrdered, type SeriesRecords } from './series-records.js';
import type { Statements } from './statements.js';
import type { Wal } from './wal.js';

/** How often logged writes are moved into the chunks even when few are waiting. */
const FLUSH_INTERVAL_MS = 2000;
/** Waiting records that start a flush right after the write that logged them. */
export const FLUSH_RECORDS = 250_000;
/** How long one slice of a flush may hold the event loop (its commit comes on top). */
const FLUSH_SLICE_MS = 10;
/** Waiting records past which writes are refused (503 overloaded) until a flush catches up. */
const MAX_PENDING_RECORDS = 4 * FLUSH_RECORDS;
/** Records of one series a flush slice applies at most (a large backlog of one series is applied in pieces). */
const FLUSH_PIECE_RECORDS = 2048;

/** What a flush did, for tests and `tsnode serve --trace-flush`. */
export type FlushEvent =
  { event: 'start'; generation: number; records: number; series: number } | { event: 'done'; generation: number; ms: number } | { event: 'failed'; error: string };

export interface FlusherOptions {
  db: Database.Database;
  statements: Statements;
  /** The ingest log (null: an in-memory store, which logs nothing). */
  log: IngestLog | null;
  writer: RollupWriter;
  disk: DiskSpace;
  wal: Wal;
  /** Waiting records that start a flush. */
  flushRecords: number;
  /** A pause before each slice, and one series per slice (ms; 0: slices of ~FLUSH_SLICE_MS, only the event loop's turn between them). */
  flushPauseMs: number;
  onError: (err: unknown) => void;
  onNotice: (message: string) => void;
  onFlush: (e: FlushEvent) => void;
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

export class Flusher {
  /** Logged writes not yet in a flush, per series in arrival order (filled as they come: a flush takes them at once). */
  private pending = new Map<number, SeriesRecords>();
  private pendingRecords = 0;
  /** The log holds frames no flush has taken yet (reads and sweeps may have applied their records already). */
  private logDirty = false;
  /** The flush under way, if any. */
  private job: FlushJob | null = null;
  /** Why the last flush attempt failed (cleared by one that works). */
  private lastFailure: Error | null = null;
  private timer: NodeJS.Timeout | null = null;

  constructor(private readonly o: FlusherOptions) {}

  /** Why the last flush attempt failed, or null when flushes work. */
  get failure(): Error | null {
    return this.lastFailure;
  }

  /** Whether the log holds records no finished flush has marked applied (a sweep then leaves a skip row). */
  get logUnapplied(): boolean {
    return this.logDirty || this.job !== null;
  }

  /** Starts the timer, and a flush at once when the log held a backlog. */
  run(): void {
    this.timer = setInterval(() => this.tick(), FLUSH_INTERVAL_MS);
    this.timer.unref();
    // A backlog read back from the log is applied in the background, starting now.
    if (this.logDirty) setImmediate(() => this.startQuietly());
  }

  stop(): void {
    if (this.timer !== null) clearInterval(this.timer);
  }

  /** Throws the 503 when too much waits (or flushes keep failing for another reason than a full disk). */
  refuseIfBehind(): void {
    // A flush that keeps failing for another reason: writes go on into the log up to one flush's worth.
    if (this.lastFailure !== null && this.pendingRecords >= this.o.flushRecords) {
      throw new ProtocolError(503, 'store_unavailable', 'the node cannot move logged writes into its database right now (see its log); nothing was stored: retry later');
    }
    if (this.pendingRecords >= MAX_PENDING_RECORDS) {
      throw new ProtocolError(503, 'overloaded', `the node has ${this.pendingRecords} records waiting to be applied; nothing was stored: retry in a moment`);
    }
  }

  /** Queues a logged write (series resolved); starts a flush when enough waits. */
  add(entries: Float64Array, parts: Map<number, StoredParts> | null): void {
    if (this.o.log) this.logDirty = true;
    this.pendingRecords += enqueue(this.pending, entries, parts);
    // The write is durable already: a flush that cannot start must not fail it.
    if (this.pendingRecords >= this.o.flushRecords) this.startQuietly();
  }

  /** Queues writes read back from the log at start (those `keep` accepts); returns how many records. */
  addLogged(entries: Float64Array, parts: Map<number, StoredParts> | null, keep: (sid: number, ts: number) => boolean): number {
    this.logDirty = true;
    const n = enqueue(this.pending, entries, parts, keep);
    this.pendingRecords += n;
    return n;
  }

  /** The waiting records of one series (those of the flush under way first), or null. */
  collect(sid: number): SeriesRecords | null {
    const fromJob = this.job?.series.get(sid);
    const fromPending = this.pending.get(sid);
    if (fromJob === undefined) return fromPending ?? null;
    if (fromPending === undefined) return fromJob;
    return concatRecords(fromJob, fromPending);
  }

  /** Forgets waiting records of a series with ts < before (all with Infinity): a read or sweep dealt with them. */
  dropWaiting(sid: number, before: number): void {
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

  /** Calls `visit` with the ts of every waiting record (the flush under way's too): what the chunks do not show yet. */
  waitingTimes(visit: (ts: number) => void): void {
    for (const queue of this.job ? [this.job.series, this.pending] : [this.pending]) {
      for (const q of queue.values()) for (let o = 0; o < q.n * ENTRY; o += ENTRY) visit(q.entries[o]!);
    }
  }

  /** Moves every waiting write into the chunks before returning (close, tests). */
  flushAll(): void {
    while (this.job !== null) this.applySlice(Infinity);
    this.start();
    while (this.job !== null) this.applySlice(Infinity);
  }

  /** The timer: goes on with the flush (or retries a failed one), and lets disk-full mode end when it can. */
  private tick(): void {
    if (this.job) this.sliceQuietly();
    else this.startQuietly();
    if (!this.o.db.open) return;
    const caughtUp = this.lastFailure === null && this.job === null && this.pending.size === 0 && !this.logDirty;
    this.o.disk.tick(caughtUp);
  }

  /** Starts a flush of the waiting writes, applied in slices; no-op when one runs. */
  private start(): void {
    // A flush also runs for a log whose records reads or sweeps applied already: it marks them applied.
    if (this.job !== null || (this.pending.size === 0 && !this.logDirty) || !this.o.db.open) return;
    const generation = this.o.log?.rotate() ?? 0;
    this.logDirty = false;
    const series = this.pending;
    this.job = { generation, series, sids: [...series.keys()].sort((x, y) => x - y), next: 0, started: performance.now() };
    this.o.onFlush({ event: 'start', generation, records: this.pendingRecords, series: series.size });
    this.pending = new Map();
    this.pendingRecords = 0;
    this.nextSlice();
  }

  /** start for the timer and the writes: a failure is reported, and the timer tries again. */
  private startQuietly(): void {
    try {
      this.start();
    } catch (err) {
      this.failed(err);
    }
  }

  private nextSlice(): void {
    if (this.o.flushPauseMs > 0) setTimeout(() => this.sliceQuietly(), this.o.flushPauseMs).unref();
    else setImmediate(() => this.sliceQuietly());
  }

  /** One slice of the flush under way, then the next one after the event loop had its turn. */
  private sliceQuietly(): void {
    if (this.job === null || !this.o.db.open) return;
    if (!this.o.disk.full && this.o.wal.shouldWait()) {
      setTimeout(() => this.sliceQuietly(), 5).unref();
      return;
    }
    try {
      // On a full disk the WAL must not outgrow what a checkpoint can copy into the database.
      this.o.disk.keepWalSmall();
      // Paced (tests): one series per slice, so a flush lasts long enough to be killed in.
      this.applySlice(this.o.flushPauseMs > 0 ? 0 : FLUSH_SLICE_MS);
    } catch (err) {
      // Rolled back: the slice is retried by the next timer tick (or close).
      this.failed(err);
      return;
    }
    if (this.job !== null) this.nextSlice();
    else if (this.pendingRecords >= this.o.flushRecords) this.startQuietly();
  }

  /** A flush that failed: reported once per episode; a full disk turns on disk-full mode. */
  private failed(err: unknown): void {
    const e = err instanceof Error ? err : new Error(String(err));
    if (isDiskFull(e)) this.o.disk.enter(e);
    if (this.lastFailure === null || this.lastFailure.message !== e.message) {
      this.o.onError(
        new Error(`flush failed (retried every ${FLUSH_INTERVAL_MS / 1000} s; writes are refused while it fails on a full disk, or once a flush's worth waits): ${e.message}`),
      );
      this.o.onFlush({ event: 'failed', error: e.message });
    }
    this.lastFailure = e;
  }

  /** Applies series of the flush under way for about `budgetMs`, in one transaction; the last slice ends the flush. */
  private applySlice(budgetMs: number): void {
    const job = this.job;
    if (job === null) return;
    const { db, statements: s, log, writer } = this.o;
    const until = performance.now() + budgetMs;
    let next = job.next;
    const applied: number[] = [];
    /** A series applied in part: what is left of it. */
    let rest: [number, SeriesRecords] | null = null;
    db.transaction(() => {
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
            writer.apply(sid, piece);
            rest = [sid, left];
            break;
          }
          writer.apply(sid, ordered);
          applied.push(sid);
        }
        next++;
        if (performance.now() >= until) break;
      }
      if (next === job.sids.length && log) {
        s.putMeta.run('log_applied', String(job.generation));
        s.dropSkips.run(job.generation);
      }
    }).immediate();
    job.next = next;
    for (const sid of applied) job.series.delete(sid);
    if (rest !== null) job.series.set(rest[0], rest[1]);
    if (this.lastFailure !== null) {
      this.lastFailure = null;
      this.o.onNotice('flushes work again');
    }
    if (next < job.sids.length) return;
    this.job = null;
    this.o.onFlush({ event: 'done', generation: job.generation, ms: Math.round(performance.now() - job.started) });
    // A crash before this leaves files the database already applied, which the next start deletes.
    log?.discardThrough(job.generation);
    this.o.wal.truncateIfOverLimit();
  }
}
