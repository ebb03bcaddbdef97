/**
 * Room kept back for a full disk. A node whose disk fills up refuses writes, but it must still
 * be able to run the sweeps that free space, and to start again: both write (SQLite's WAL and
 * its -shm file, the ingest log's next file). So the node keeps `tsnode.reserve`, a file of
 * zeros, and gives it back in two steps: half the moment the disk is full (room for the sweeps
 * and the flush of what was acknowledged), the rest at a start on a nearly full disk (room to
 * open the database). It is written again once the disk has room for it twice over. Without it,
 * a disk filled to the last byte could only be freed by hand.
 */
import { closeSync, openSync, renameSync, rmSync, statfsSync, statSync, truncateSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const RESERVE_FILE = 'tsnode.reserve';

export class DiskReserve {
  readonly file: string;

  constructor(
    private readonly dir: string,
    /** Bytes to keep back; 0 turns the reserve off. */
    readonly bytes: number,
  ) {
    this.file = join(dir, RESERVE_FILE);
  }

  /** Bytes the reserve holds now (0 when there is none). */
  size(): number {
    try {
      return statSync(this.file).size;
    } catch {
      return 0;
    }
  }

  /** Bytes free on the data directory's file system (for an unprivileged process). */
  freeBytes(): number {
    const s = statfsSync(this.dir);
    return s.bavail * s.bsize;
  }

  /** Gives back half of the reserve (the disk just filled up); the bytes freed. */
  halve(): number {
    const size = this.size();
    const half = Math.floor(this.bytes / 2);
    if (size <= half) return 0;
    truncateSync(this.file, half);
    return size - half;
  }

  /** Gives back all of it (a start on a nearly full disk); the bytes freed. */
  release(): number {
    const size = this.size();
    if (size > 0) rmSync(this.file, { force: true });
    return size;
  }

  /**
   * Writes the reserve whole when it is not, and the disk has room for it twice over; true when
   * it is in place afterwards (always with a reserve of 0). A failure leaves no partial file.
   */
  ensure(): boolean {
    if (this.size() >= this.bytes) return true;
    if (this.freeBytes() < 2 * this.bytes) return false;
    const tmp = `${this.file}.tmp`;
    let fd: number | undefined;
    try {
      fd = openSync(tmp, 'w', 0o600);
      const zeros = Buffer.alloc(Math.min(this.bytes, 1 << 20));
      for (let at = 0; at < this.bytes;) {
        const n = writeSync(fd, zeros, 0, Math.min(zeros.length, this.bytes - at), at);
        if (n <= 0) throw new Error('short write');
        at += n;
      }
      closeSync(fd);
      fd = undefined;
      // Renamed into place whole: the reserve is always the size it claims.
      renameSync(tmp, this.file);
      return true;
    } catch {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
      return false;
    }
  }
}
