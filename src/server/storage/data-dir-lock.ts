/**
 * One node per data directory, enforced by a lock the OS holds for the process: `tsnode.lock` is
 * an (empty) SQLite file on which the node keeps an exclusive transaction open for its lifetime.
 * SQLite takes it with fcntl() byte-range locks, which the kernel drops when the process dies
 * (kill -9 included), so no lock is ever stale and no pid is ever judged: a file left behind by
 * a dead node, or one naming a pid that now belongs to another process or a zombie, blocks nothing.
 *
 * Why SQLite: Node has no flock(), and fcntl() locks belong to the process, not to the file
 * descriptor: a second open in the same process would get them too, and closing *any* descriptor
 * of the file in this process drops them all. SQLite's unix VFS handles both: it tracks the
 * locks of every connection of the process per inode (a second open in this process gets
 * SQLITE_BUSY, as another process does) and keeps its own descriptors open while a lock is held.
 * What it cannot guard against is other code of this process opening the lock file with fs and
 * closing it: nothing in tsnode does (test/integration/server-store-open.test.ts checks the rest).
 */
import { DataDirLockError } from '../errors.js';
import Database from 'better-sqlite3';
import { chmodSync, existsSync, readFileSync, statSync, truncateSync } from 'node:fs';
import { join } from 'node:path';

export const LOCK_FILE = 'tsnode.lock';

export interface DataDirLock {
  readonly file: string;
  /** Lets go of the lock (closing the connection ends the transaction and its fcntl locks). */
  release(): void;
}

/** Takes the lock of `dir` (which must exist) or throws DataDirLockError at once; never waits. */
export function lockDataDir(dir: string): DataDirLock {
  const file = join(dir, LOCK_FILE);
  for (let attempt = 0; ; attempt++) {
    const existed = existsSync(file);
    let db: Database.Database | undefined;
    try {
      // timeout 0: a lock held by another node is an answer, not something to wait for.
      db = new Database(file, { timeout: 0 });
      // chmod works on the path: no descriptor of ours is opened and closed (see the top).
      if (!existed) chmodSync(file, 0o600);
      // No -journal file: the transaction never writes, and a journal left by a killed node
      // would be a "hot journal" the next one has to roll back.
      db.pragma('journal_mode = MEMORY');
      db.pragma('locking_mode = EXCLUSIVE');
      db.exec('BEGIN EXCLUSIVE');
      const held = db;
      return {
        file,
        release: () => {
          if (held.open) held.close();
        },
      };
    } catch (err) {
      db?.close();
      const code = (err as { code?: string }).code;
      if (code === 'SQLITE_BUSY') throw new DataDirLockError(inUseMessage(dir, file));
      if (code === 'SQLITE_NOTADB' && attempt < 2) {
        const legacy = legacyPidFile(file);
        // The pid file of a tsnode before this lock. Emptying it keeps the inode, so nodes
        // racing here all end up locking the same file, and one of them wins. (Empty already:
        // a racing node emptied it after we read it.)
        if (legacy === 'pid') truncateSync(file, 0);
        if (legacy !== 'no') continue;
      }
      if (code === 'SQLITE_NOTADB') {
        throw new DataDirLockError(`cannot lock the data directory ${dir}: ${file} is not a tsnode lock file; if no node runs on this directory, delete it and start again`);
      }
      throw new DataDirLockError(`cannot lock the data directory ${dir}: ${(err as Error).message}`);
    }
  }
}

function inUseMessage(dir: string, file: string): string {
  const pid = lockHolder(file);
  const who = pid === undefined ? 'another process' : pid === process.pid ? `this process (${pid})` : `process ${pid}`;
  return `the data directory ${dir} is in use by ${who} (another tsnode serve?): stop it, or use another --data-dir`;
}

/** Whether the lock file is one a tsnode before this lock wrote (a pid and a newline), or is empty now. */
function legacyPidFile(file: string): 'pid' | 'empty' | 'no' {
  try {
    if (statSync(file).size > 32) return 'no';
    const text = readFileSync(file, 'latin1');
    return text === '' ? 'empty' : /^\d+\s*$/.test(text) ? 'pid' : 'no';
  } catch {
    return 'no';
  }
}

/**
 * The pid holding a lock on `file`, from /proc/locks (Linux), for the error message only: the
 * lock itself never depends on it. Lines read `1: POSIX  ADVISORY  WRITE <pid> <maj>:<min>:<inode> <start> <end>`.
 */
export function lockHolder(file: string): number | undefined {
  try {
    const st = statSync(file);
    // st_dev as the kernel encodes it for user space (new_encode_dev).
    const dev = st.dev;
    const major = (dev >>> 8) & 0xfff;
    const minor = (dev & 0xff) | ((dev >>> 12) & 0xfff00);
    const want = `${major.toString(16).padStart(2, '0')}:${minor.toString(16).padStart(2, '0')}:${st.ino}`;
    for (const line of readFileSync('/proc/locks', 'latin1').split('\n')) {
      const f = line.trim().split(/\s+/);
      // With a blocked waiter, /proc/locks has "->" lines; they have one more field.
      const at = f[1] === '->' ? 1 : 0;
      if (f[1 + at] === 'POSIX' && f[5 + at] === want) return Number(f[4 + at]);
    }
  } catch {
    // not Linux, or gone meanwhile
  }
  return undefined;
}
