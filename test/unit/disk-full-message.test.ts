/**
 * The 507 a node in disk-full mode answers says what writes wait for (issue 25): how much must be
 * free on its disk, how much is free now, and how much logged data is still to apply. The disk is
 * real (the test's temp dir); only its free space is pinned, which a real disk cannot be made to
 * hold steady for a unit test (test/reliability/disk-full.test.ts fills a real tmpfs).
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { ProtocolError } from '../../src/protocol/index.js';
import { DiskSpace } from '../../src/server/storage/disk-full.js';
import { DiskReserve } from '../../src/server/storage/disk-reserve.js';
import type { Wal } from '../../src/server/storage/wal.js';

const MiB = 1024 * 1024;

/** A real reserve in a temp dir whose file system reports `free` bytes free. */
function reserveWithFree(bytes: number, free: () => number): DiskReserve {
  const r = new DiskReserve(mkdtempSync(join(tmpdir(), 'tsnode-reserve-')), bytes);
  r.freeBytes = free;
  return r;
}

function refusalOf(disk: DiskSpace): ProtocolError {
  try {
    disk.refuseIfFull(null);
  } catch (err) {
    if (err instanceof ProtocolError) return err;
    throw err;
  }
  throw new Error('writes were not refused');
}

const wal = { truncateIfLarge: () => {}, giveBackSpace: () => {} } as unknown as Wal;

describe('507 disk_full: what writes wait for', () => {
  it('after the disk filled up (half the reserve given back): twice the reserve free, and the log applied', () => {
    let free = 1.5 * MiB;
    const reserve = reserveWithFree(8 * MiB, () => free);
    reserve.ensure = () => false;
    const backlog = 3 * MiB;
    const disk = new DiskSpace(
      reserve,
      wal,
      () => backlog,
      () => {},
      true,
    );
    const err = refusalOf(disk);
    expect(err.status).toBe(507);
    expect(err.message).toContain('Writes resume once 16.0 MiB must be free on its disk (1.5 MiB free now) and its 3.0 MiB of logged writes are applied.');
    expect(err.toBody()).toMatchObject({ code: 'disk_full', free_bytes: 1.5 * MiB, needed_free_bytes: 16 * MiB, unapplied_bytes: 3 * MiB });
    // After space was freed: the answer follows the disk.
    free = 20 * MiB;
    expect(refusalOf(disk).message).toContain('Writes resume once 16.0 MiB are free on its disk (20.0 MiB free now) and its 3.0 MiB of logged writes are applied.');
  });

  it('without a reserve, only the log', () => {
    const disk = new DiskSpace(
      null,
      wal,
      () => 512 * 1024,
      () => {},
      true,
    );
    const err = refusalOf(disk);
    expect(err.message).toContain('Writes resume once its 0.5 MiB of logged writes are applied.');
    expect(err.toBody()).toMatchObject({ free_bytes: null, needed_free_bytes: null, unapplied_bytes: 512 * 1024 });
  });
});
