/**
 * Whether replay towards a peer is paused (`cluster pause`), kept beside that peer's journal as
 * `<journal dir>/<peer id>/paused.json`, so a restarted node stays paused until `cluster resume`.
 * The file is there exactly while the peer is paused; it is written to a temporary name, synced and
 * renamed into place, and its directory synced, so the pause (and a resume's removal) survives a
 * crash or a power loss once the admin call has answered.
 */
import { closeSync, existsSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import { join } from 'node:path';

export const PAUSED_FILE = 'paused.json';

/** What the file says: when the pause began (null when it cannot be read: it is still a pause). */
export function readPaused(peerDir: string): { since: string | null } | null {
  const file = join(peerDir, PAUSED_FILE);
  if (!existsSync(file)) return null;
  try {
    const doc = JSON.parse(readFileSync(file, 'utf8')) as { since?: unknown };
    return { since: typeof doc.since === 'string' ? doc.since : null };
  } catch {
    return { since: null };
  }
}

/** Records a pause (or removes it) durably; throws, changing nothing, when it cannot. */
export function writePaused(peerDir: string, paused: boolean, now: Date): void {
  const file = join(peerDir, PAUSED_FILE);
  if (paused) {
    const tmp = `${file}.${process.pid}.tmp`;
    const fd = openSync(tmp, 'w', 0o600);
    try {
      writeSync(fd, `${JSON.stringify({ paused: true, since: now.toISOString() })}\n`);
      fsyncSync(fd);
    } catch (err) {
      closeSync(fd);
      rmSync(tmp, { force: true });
      throw err;
    }
    closeSync(fd);
    renameSync(tmp, file);
  } else {
    if (!existsSync(file)) return;
    rmSync(file);
  }
  syncDir(peerDir);
}

function syncDir(dir: string): void {
  const fd = openSync(dir, 'r');
  try {
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
}
