/**
 * The database's WAL: checkpointed by a thread of its own (checkpointer.ts), and cut back by the
 * node itself when that is not enough: after a flush that left it very large, and on a full disk,
 * where a WAL that grows while checkpoints fail fills the disk for good. An in-memory store has no
 * WAL file: every method is then a no-op.
 */
import type Database from 'better-sqlite3';
import { statSync } from 'node:fs';
import { Checkpointer } from './checkpointer.js';

/** How often the checkpointer thread checkpoints the WAL. */
const CHECKPOINT_INTERVAL_MS = 500;
/** A WAL this large means the checkpointer is behind: the flush checkpoints it itself. */
const WAL_LIMIT_BYTES = 256 * 1024 * 1024;
/** On a full disk, the WAL a flush or sweep may leave before it checkpoints. */
const WAL_TIGHT_BYTES = 256 * 1024;
/** A WAL this large makes flush slices wait for the checkpointer to copy every frame (at most WAL_WAIT_MS). */
const WAL_WAIT_BYTES = 64 * 1024 * 1024;
const WAL_WAIT_MS = 50;

export class Wal {
  private checkpointer: Checkpointer | null = null;
  /** Since when flush slices wait for the checkpointer (see shouldWait). */
  private waitSince: number | null = null;

  /** The WAL file, or null (in memory). */
  private readonly file: string | null;

  constructor(
    private readonly db: Database.Database,
    /** The database file (on disk), or null (in memory). */
    private readonly dbFile: string | null,
  ) {
    this.file = dbFile === null ? null : `${dbFile}-wal`;
  }

  /** Starts the checkpointer thread (on disk). */
  startCheckpointer(onError: (err: unknown) => void): void {
    if (this.dbFile !== null) this.checkpointer = new Checkpointer(this.dbFile, CHECKPOINT_INTERVAL_MS, onError);
  }

  /** Whether flush slices are waiting for the checkpointer now. */
  get waiting(): boolean {
    return this.waitSince !== null;
  }

  /**
   * Whether flush slices should wait for the checkpointer: the WAL is large and frames are left
   * to copy. A write that begins once every frame is copied reuses the WAL from its start; one
   * that comes sooner makes it grow, and the blocking ways to cut it back (a TRUNCATE here, a
   * RESTART there) held the event loop for 100-250 ms. Waits at most WAL_WAIT_MS at a time.
   */
  shouldWait(): boolean {
    if (this.checkpointer === null || this.file === null) return false;
    if (!this.checkpointer.behind || fileSize(this.file) < WAL_WAIT_BYTES) {
      this.waitSince = null;
      return false;
    }
    this.waitSince ??= performance.now();
    return performance.now() - this.waitSince < WAL_WAIT_MS;
  }

  /** After a flush: a WAL past WAL_LIMIT_BYTES (the checkpointer fell behind) is copied and cut here. */
  truncateIfOverLimit(): void {
    if (this.file !== null && fileSize(this.file) > WAL_LIMIT_BYTES) this.db.pragma('wal_checkpoint(TRUNCATE)');
  }

  /**
   * Copies the WAL into the database and cuts it to nothing when it holds more than WAL_TIGHT
   * bytes (disk-full mode: a WAL that grows while checkpoints fail fills the disk for good).
   * Throws when that fails (no room, or in use): the caller stops writing until the next tick.
   */
  truncateIfLarge(): void {
    if (this.file !== null && fileSize(this.file) > WAL_TIGHT_BYTES) {
      const [busy] = this.db.pragma('wal_checkpoint(TRUNCATE)', { simple: false }) as Array<{ busy: number }>;
      if (busy?.busy) throw Object.assign(new Error('the WAL could not be checkpointed yet (in use)'), { code: 'SQLITE_BUSY' });
    }
  }

  /**
   * Gives space back to the file system, for at most `ms`: the WAL cut to nothing once copied into
   * the database, and (a database made with auto_vacuum) pages sweeps freed. Failures are left for
   * the next call.
   */
  giveBackSpace(ms: number): void {
    if (this.file === null) return;
    const until = performance.now() + ms;
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

  /** Stops the checkpointer; resolves once its thread (and its connection) is gone. */
  close(): Promise<void> {
    return this.checkpointer?.close() ?? Promise.resolve();
  }
}

function fileSize(path: string): number {
  try {
    return statSync(path).size;
  } catch {
    return 0;
  }
}
