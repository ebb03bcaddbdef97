/**
 * One destructive run per node from a host: before anything is sent, a run takes a lock file per
 * node of its target set (`<dir>/<node key>.lock`, created exclusively), each naming the holder.
 * Two runs whose node sets overlap cannot both go on: the second is refused, naming the first, so
 * two `retention apply` of one policy never cancel each other's sweeps. A lock left by a process of
 * this host that no longer runs is taken over (a `kill -9` must not block the next night).
 */
import { createHash } from 'node:crypto';
import { closeSync, mkdirSync, openSync, readFileSync, unlinkSync, writeFileSync } from 'node:fs';
import { hostname } from 'node:os';
import { dirname, join } from 'node:path';
import { stateModes } from './state-files.js';
import { RunError } from './errors.js';

/** Who holds a lock, as its file says. */
export interface LockHolder {
  pid: number;
  host: string;
  /** The command and its run id: `retention apply r-2026...`. */
  command: string;
  by: string;
  /** ISO time the lock was taken. */
  at: string;
}

export interface TargetLock {
  /** The lock files held (one per node). */
  paths: string[];
  release(): void;
}

/**
 * Another run holds a node of this run's target set: nothing was sent. `run` is the command
 * refused (`sweep`, `delete`, `retention apply`), for a caller that says which run it refused.
 */
export class RunLockedError extends RunError {
  constructor(
    readonly node: string,
    readonly path: string,
    readonly holder: Partial<LockHolder> | null,
    readonly run?: string,
  ) {
    super(
      'run_locked',
      `${node} is the target of another destructive run: ${describeHolder(holder)} (lock ${path}); nothing was sent`,
      'wait for that run to end (tsnode history shows it), or remove the lock file if that process is gone',
    );
    this.name = 'RunLockedError';
  }
}

export function describeHolder(h: Partial<LockHolder> | null): string {
  if (!h) return 'a holder whose lock file cannot be read';
  const who = [
    h.command ? `tsnode ${h.command}` : 'tsnode',
    h.pid !== undefined ? `process ${h.pid}` : '',
    h.host ? `on ${h.host}` : '',
    h.by ? `by ${h.by}` : '',
    h.at ? `since ${h.at}` : '',
  ]
    .filter(Boolean)
    .join(' ');
  return who;
}

/** A node's key in lock file names: the URL's origin, lower case, hashed (any spelling of one origin is one lock). */
export function nodeLockKey(node: string): string {
  let origin = node.toLowerCase();
  try {
    origin = new URL(node).origin.toLowerCase();
  } catch {
    // not a URL: the text itself
  }
  return createHash('sha256').update(origin).digest('hex').slice(0, 24);
}

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch (err) {
    return (err as NodeJS.ErrnoException).code === 'EPERM';
  }
}

function readHolder(path: string): Partial<LockHolder> | null {
  try {
    const v = JSON.parse(readFileSync(path, 'utf8')) as unknown;
    return v && typeof v === 'object' ? v : null;
  } catch {
    return null;
  }
}

function tryCreate(path: string, body: string): boolean {
  let fd: number;
  try {
    fd = openSync(path, 'wx', stateModes(dirname(path)).file);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'EEXIST') return false;
    throw err;
  }
  try {
    writeFileSync(fd, body);
  } finally {
    closeSync(fd);
  }
  return true;
}

/** Takes one node's lock, taking over a stale one once; throws RunLockedError when it is held. */
function lockOne(dir: string, node: string, body: string, onTakeOver: (m: string) => void, run: string | undefined): string {
  const path = join(dir, `${nodeLockKey(node)}.lock`);
  for (let attempt = 0; attempt < 2; attempt++) {
    if (tryCreate(path, body)) return path;
    const holder = readHolder(path);
    const stale = holder !== null && holder.host === hostname() && typeof holder.pid === 'number' && !alive(holder.pid);
    if (!stale) throw new RunLockedError(node, path, holder, run);
    onTakeOver(`${node} was locked by ${describeHolder(holder)}, which no longer runs: taking the lock over`);
    try {
      unlinkSync(path);
    } catch {
      // another run took it over first: the next attempt says so
    }
  }
  throw new RunLockedError(node, path, readHolder(path), run);
}

/**
 * Locks every node of `nodes` for this process (all or none). `holder` names the run in the
 * files (and `run`, the command, in a RunLockedError); `onTakeOver` hears of stale locks taken over.
 */
export function lockTargets(
  dir: string,
  nodes: readonly string[],
  holder: Pick<LockHolder, 'command' | 'by'> & { run?: string },
  onTakeOver: (m: string) => void = () => {},
): TargetLock {
  mkdirSync(dir, { recursive: true, mode: stateModes(dirname(dir)).dir });
  const body = JSON.stringify({ pid: process.pid, host: hostname(), command: holder.command, by: holder.by, at: new Date().toISOString() } satisfies LockHolder);
  const held: string[] = [];
  const release = (): void => {
    for (const p of held.splice(0)) {
      try {
        unlinkSync(p);
      } catch {
        // gone already
      }
    }
  };
  // Sorted by key, so two runs over overlapping sets take them in one order. The keys are lower-case
  // hex, so a plain code-unit compare gives localeCompare's order without its ICU set-up (~6 ms).
  const unique = [...new Map(nodes.map((n) => [nodeLockKey(n), n])).entries()].sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
  try {
    for (const [, node] of unique) held.push(lockOne(dir, node, body, onTakeOver, holder.run));
  } catch (err) {
    release();
    throw err;
  }
  return { paths: [...held], release };
}
