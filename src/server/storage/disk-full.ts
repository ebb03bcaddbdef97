/**
 * Disk-full mode. When the disk of the data dir fills up (a write or flush fails for lack of space,
 * or free space falls below the reserve plus twice the log still to apply) the node stops taking
 * writes, so the log never outgrows what the database can take, and goes on answering reads and
 * sweeps: it gives back half the reserve (disk-reserve.ts) for them, keeps its WAL small, and gives
 * the pages sweeps free back to the file system. Once the logged writes are applied and the reserve
 * can be written again, writes are accepted again.
 */
import { ProtocolError } from '../../protocol/index.js';
import type { DiskReserve } from './disk-reserve.js';
import type { Wal } from './wal.js';

/** How long one tick in disk-full mode may spend giving space back. */
const GIVE_BACK_MS = 200;

export class DiskSpace {
  /** The disk filled up: writes are refused until the flush caught up and there is room again. */
  full: boolean;

  constructor(
    private readonly reserve: DiskReserve | null,
    private readonly wal: Wal,
    /** Bytes of log still to apply (the room they will need in the database). */
    private readonly unappliedBytes: () => number,
    private readonly onNotice: (message: string) => void,
    /** The node started on a nearly full disk (see releaseReserveAtStart). */
    startedFull: boolean,
  ) {
    this.full = startedFull;
  }

  /** Throws the 507 when the node cannot take writes for want of room (`failure`: why the last flush failed). */
  refuseIfFull(failure: Error | null): void {
    if (!this.full && this.reserve !== null && this.reserve.bytes > 0) {
      // Stop before the disk is full: what is acknowledged must still fit in the database.
      const free = this.reserve.freeBytes();
      const backlog = this.unappliedBytes();
      if (free < this.reserve.bytes + 2 * backlog) {
        this.enter(new Error(`${free} bytes free, below the ${this.reserve.bytes}-byte reserve plus twice the ${backlog} bytes of log still to apply`));
      }
    }
    if (this.full || (failure !== null && isDiskFull(failure))) throw this.refusal();
  }

  /**
   * What must happen before writes are accepted again (tick): the logged writes applied, and,
   * with a reserve, room to write it back whole (twice its size free when it was given back,
   * else its size). Read from the disk now, for the 507's message and details.
   */
  resumeNeeds(): { freeBytes: number | null; neededFreeBytes: number | null; unappliedBytes: number } {
    const unappliedBytes = this.unappliedBytes();
    if (this.reserve === null || this.reserve.bytes === 0) return { freeBytes: null, neededFreeBytes: null, unappliedBytes };
    let freeBytes: number | null = null;
    try {
      freeBytes = this.reserve.freeBytes();
    } catch {
      // the file system cannot be asked: say what is needed without what is there
    }
    const whole = this.reserve.size() >= this.reserve.bytes;
    return { freeBytes, neededFreeBytes: whole ? this.reserve.bytes + 2 * unappliedBytes : 2 * this.reserve.bytes, unappliedBytes };
  }

  private refusal(): ProtocolError {
    return diskFullRefusal(this.resumeNeeds());
  }

  /** A disk-full error from storage becomes the 507 (and disk-full mode); others pass. */
  asStorageError(err: unknown): unknown {
    if (!isDiskFull(err)) return err;
    this.enter(err as Error);
    return this.refusal();
  }

  enter(err: Error): void {
    if (this.full) return;
    this.full = true;
    let freed = 0;
    try {
      freed = this.reserve?.halve() ?? 0;
    } catch {
      // no reserve to give back
    }
    this.onNotice(
      `disk full (${err.message}): writes are refused with 507 disk_full until the logged writes are applied and there is room again; reads and sweeps go on` +
        (freed > 0 && this.reserve !== null ? `; gave back ${freed} bytes of the reserve (${this.reserve.file}) for them` : ''),
    );
  }

  /** In disk-full mode, the WAL cut to nothing when it grew (throws when it cannot be yet). */
  keepWalSmall(): void {
    if (this.full) this.wal.truncateIfLarge();
  }

  /** The flush timer's turn: gives space back, and leaves disk-full mode once `caughtUp` and there is room. */
  tick(caughtUp: boolean): void {
    if (this.full) this.wal.giveBackSpace(GIVE_BACK_MS);
    if (this.full && caughtUp) {
      // Room again: the reserve can be written back, with as much again free (or there is none to keep).
      if (this.reserve === null || this.reserve.ensure()) {
        this.full = false;
        this.onNotice('room on the disk again: writes are accepted');
      }
    } else if (!this.full && this.reserve !== null) {
      this.reserve.ensure();
    }
  }
}

/**
 * A start on a nearly full disk: what is left of the reserve is given back so the database and the
 * log can open; the node then starts in disk-full mode (returns true).
 */
export function releaseReserveAtStart(reserve: DiskReserve, dataDir: string, onNotice: (message: string) => void): boolean {
  if (reserve.size() === 0 || reserve.freeBytes() >= reserve.bytes) return false;
  const freed = reserve.release();
  onNotice(
    `the disk of ${dataDir} is nearly full: gave back the reserve (${freed} bytes of ${reserve.file}) so the node can start and sweep; writes are refused until there is room again`,
  );
  return true;
}

/** ENOSPC from a file write, SQLITE_FULL from SQLite. */
export function isDiskFull(err: unknown): boolean {
  const code = (err as { code?: unknown } | null)?.code;
  if (code === 'ENOSPC' || code === 'SQLITE_FULL' || code === 'EDQUOT') return true;
  return /\b(ENOSPC|SQLITE_FULL)\b|disk is full|no space left/i.test(String((err as Error | null)?.message ?? ''));
}

/**
 * The 507, saying what writes wait for: `free_bytes` (null: not known), `needed_free_bytes` (null:
 * no reserve, so only the log), `unapplied_bytes` (logged writes still to apply).
 */
function diskFullRefusal(needs: { freeBytes: number | null; neededFreeBytes: number | null; unappliedBytes: number }): ProtocolError {
  const waits: string[] = [];
  if (needs.neededFreeBytes !== null) {
    const now = needs.freeBytes !== null ? ` (${mib(needs.freeBytes)} free now)` : '';
    waits.push(`${mib(needs.neededFreeBytes)} ${needs.freeBytes !== null && needs.freeBytes >= needs.neededFreeBytes ? 'are' : 'must be'} free on its disk${now}`);
  }
  if (needs.unappliedBytes > 0) waits.push(`its ${mib(needs.unappliedBytes)} of logged writes are applied`);
  const resume = waits.length ? ` Writes resume once ${waits.join(' and ')}.` : ' Writes resume once its logged writes are applied.';
  return new ProtocolError(
    507,
    'disk_full',
    `the node cannot store more data: its disk is full. Nothing was stored; reads and sweeps still work: sweep old data (or free space), then retry.${resume}`,
    { free_bytes: needs.freeBytes, needed_free_bytes: needs.neededFreeBytes, unapplied_bytes: needs.unappliedBytes },
  );
}

/** Bytes in MiB for a person: `12.5 MiB` (`0.1 MiB` at least, so a few bytes do not read as none). */
function mib(bytes: number): string {
  const m = bytes / (1024 * 1024);
  return `${m >= 100 ? Math.round(m) : m > 0 && m < 0.1 ? '0.1' : m.toFixed(1)} MiB`;
}
