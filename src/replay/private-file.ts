/**
 * The replay's own files (rejects, state) hold the user's records and positions: they are
 * created readable by the user alone (0600), and never through a symbolic link someone else
 * planted at the path (a rejects file next to an input in a shared directory would otherwise
 * overwrite whatever the link points to).
 */
import { TsnodeError } from '../tsnode-error.js';
import { closeSync, constants, fchmodSync, fstatSync, fsyncSync, openSync, renameSync, rmSync, writeSync } from 'node:fs';

export const PRIVATE_MODE = 0o600;

/** A replay file that cannot be opened safely; the message names the path and why. */
export class UnsafeFileError extends TsnodeError {
  declare readonly code: 'unsafe_file';
  constructor(
    readonly path: string,
    message: string,
  ) {
    super('unsafe_file', message);
    this.name = 'UnsafeFileError';
  }
}

function failure(path: string, what: string, err: unknown): Error {
  const code = (err as NodeJS.ErrnoException).code;
  // O_NOFOLLOW on a symbolic link fails with ELOOP (Linux, macOS) or EMLINK (FreeBSD).
  if (code === 'ELOOP' || code === 'EMLINK')
    return new UnsafeFileError(path, `${what} ${path} is a symbolic link: refusing to write through it (remove it, or choose another path)`);
  return new UnsafeFileError(path, `${what} ${path}: ${(err as Error).message}`);
}

/**
 * Opens `path` for writing (appending, or from empty) without following a symbolic link at it,
 * created with mode 0600. An existing file must be a regular file; if it is ours and readable
 * by others, it is narrowed to 0600 too.
 */
export function openPrivate(path: string, how: 'append' | 'truncate', what = 'file'): number {
  const flags = constants.O_WRONLY | constants.O_CREAT | constants.O_NOFOLLOW | (how === 'append' ? constants.O_APPEND : constants.O_TRUNC);
  let fd: number;
  try {
    // O_NONBLOCK: a FIFO planted at the path fails the regular-file check below instead of hanging the open.
    fd = openSync(path, flags | constants.O_NONBLOCK, PRIVATE_MODE);
  } catch (err) {
    throw failure(path, what, err);
  }
  try {
    const st = fstatSync(fd);
    if (!st.isFile()) throw new UnsafeFileError(path, `${what} ${path} is not a regular file`);
    if ((st.mode & 0o077) !== 0 && typeof process.getuid === 'function' && st.uid === process.getuid()) fchmodSync(fd, PRIVATE_MODE);
  } catch (err) {
    closeSync(fd);
    throw err instanceof UnsafeFileError ? err : failure(path, what, err);
  }
  return fd;
}

let temporaries = 0;

/**
 * A new file beside `path` (0600, O_EXCL, not through a link). Its name is unique to this process
 * and call, not random: node:crypto costs a small write ~4 ms to load. O_EXCL still refuses a file
 * planted (or left by a killed process with the same pid) at that name; the next name is tried.
 */
function openTemporary(path: string, what: string): [string, number] {
  for (let attempt = 0; ; attempt++) {
    const tmp = `${path}.${process.pid}-${Date.now().toString(36)}-${temporaries++}.tmp`;
    try {
      return [tmp, openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL | constants.O_NOFOLLOW, PRIVATE_MODE)];
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST' || attempt >= 16) throw failure(tmp, what, err);
    }
  }
}

/**
 * Replaces `path` with `text` atomically: a new file (0600, O_EXCL under a name of its own, so
 * nothing planted can be written through), synced, then renamed over `path` (a rename replaces
 * a link at `path` itself, never its target). A reader, or a resume after SIGKILL, sees the
 * old file or the new one, never half of one.
 */
export function writePrivateAtomic(path: string, text: string, what = 'file'): void {
  const [tmp, fd] = openTemporary(path, what);
  try {
    writeSync(fd, text);
    fsyncSync(fd);
  } catch (err) {
    closeSync(fd);
    rmSync(tmp, { force: true });
    throw failure(path, what, err);
  }
  closeSync(fd);
  try {
    renameSync(tmp, path);
  } catch (err) {
    rmSync(tmp, { force: true });
    throw failure(path, what, err);
  }
}
