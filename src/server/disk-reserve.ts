/**
 * Room kept back for a full disk. A node whose disk fills up refuses writes, but it must still
 * be able to run the sweeps that free space, and to start again: both write (SQLite's WAL, the
 * ingest log's next file). So the node keeps `tsnode.reserve`, a file of zeros it deletes the
 * moment the disk is full (or at start when the disk is nearly full), and writes again once
 * there is room. Without it a disk filled to the last byte could only be freed by hand.
 */
import { closeSync, existsSync, openSync, renameSync, rmSync, statfsSync, writeSync } from 'node:fs';
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

  get held(): boolean {
    return this.bytes > 0 && existsSync(this.file);
  }

  /** Bytes free on the data directory's file system (for an unprivileged process). */
  freeBytes(): number {
    const s = statfsSync(this.dir);
    return s.bavail * s.bsize;
  }

  /** Deletes the reserve; true when there was one to give back. */
  release(): boolean {
    if (!this.held) return false;
    rmSync(this.file, { force: true });
    return true;
  }

  /**
   * Writes the reserve when it is missing and the disk has room for it and as much again; true
   * when it is in place afterwards. A failure (the disk filled meanwhile) leaves no partial file.
   */
  ensure(): boolean {
    if (this.bytes === 0 || this.held) return this.bytes === 0 || this.held;
    if (this.freeBytes() < 2 * this.bytes) return false;
    const tmp = `${this.file}.tmp`;
    let fd: number | undefined;
    try {
      fd = openSync(tmp, 'w', 0o600);
      const zeros = Buffer.alloc(Math.min(this.bytes, 1 << 20));
      for (let at = 0; at < this.bytes; ) {
        const n = writeSync(fd, zeros, 0, Math.min(zeros.length, this.bytes - at), at);
        if (n <= 0) throw new Error('short write');
        at += n;
      }
      closeSync(fd);
      fd = undefined;
      // Renamed into place whole: a reserve file is always the full size.
      renameSync(tmp, this.file);
      return true;
    } catch {
      if (fd !== undefined) closeSync(fd);
      rmSync(tmp, { force: true });
      return false;
    }
  }
}
