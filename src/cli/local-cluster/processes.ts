/**
 * The node processes of a local cluster: whether a recorded pid is still one of our nodes, how
 * one is stopped (SIGTERM, then SIGKILL), and waiting for a node's ready line.
 */
import { execFileSync, type spawn } from 'node:child_process';
import { existsSync, readFileSync } from 'node:fs';
import { isAbsolute } from 'node:path';
import { pidState } from '../pid.js';
import { ClusterError } from './state.js';

/**
 * Whether `pid` is a live process that is one of our nodes (not a reused pid, not any process a
 * hand-edited cluster.json names): its command line must be a `tsnode serve` whose `--data-dir`
 * argument is exactly the recorded, absolute data dir. A command line that cannot be read is not
 * trusted: nothing is signalled on a guess.
 */
export function isOurNode(pid: number, dataDir: string): boolean {
  if (!Number.isInteger(pid) || pid <= 1 || typeof dataDir !== 'string' || !isAbsolute(dataDir)) return false;
  // ESRCH: gone. EPERM: alive but not ours to signal, so not a node this user started.
  if (!alive(pid)) return false;
  const argv = argvOf(pid);
  if (argv === undefined) return false;
  const serve = argv.indexOf('serve');
  if (serve < 0) return false;
  return argv.some((a, i) => i > serve && ((a === '--data-dir' && argv[i + 1] === dataDir) || a === `--data-dir=${dataDir}`));
}

/** The process's arguments: /proc/<pid>/cmdline (NUL-separated, exact), else `ps` (split on spaces, best effort). */
function argvOf(pid: number): string[] | undefined {
  if (existsSync('/proc/self/cmdline')) {
    try {
      return readFileSync(`/proc/${pid}/cmdline`, 'utf8').split('\0');
    } catch {
      return undefined; // gone between the signal check and now (or a zombie): not a running node
    }
  }
  try {
    return execFileSync('ps', ['-p', String(pid), '-o', 'command='], { encoding: 'utf8', stdio: ['ignore', 'pipe', 'ignore'] })
      .trim()
      .split(/\s+/);
  } catch {
    return undefined;
  }
}

/** A live process this user may signal (EPERM: another user's, so not a node this user started). */
const alive = (pid: number): boolean => pidState(pid) === 'ours';

const sleep = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/**
 * Stops one process: SIGTERM, wait up to `graceMs`, then SIGKILL. `exited` (for our own children)
 * resolves on exit, which is more exact than polling a pid a zombie may still hold.
 */
export async function stopProcess(pid: number, opts: { graceMs?: number; exited?: Promise<void>; isRunning?: () => boolean } = {}): Promise<'stopped' | 'killed' | 'gone'> {
  const running = opts.isRunning ?? (() => alive(pid));
  if (!running()) return 'gone';
  try {
    process.kill(pid, 'SIGTERM');
  } catch {
    return 'gone';
  }
  const graceMs = opts.graceMs ?? 5000;
  const waitGone = async (ms: number): Promise<boolean> => {
    const deadline = Date.now() + ms;
    let done = false;
    void opts.exited?.then(() => (done = true));
    while (Date.now() < deadline) {
      if (done || !running()) return true;
      await sleep(25);
    }
    return done || !running();
  };
  if (await waitGone(graceMs)) return 'stopped';
  try {
    process.kill(pid, 'SIGKILL');
  } catch {
    return 'stopped';
  }
  await waitGone(5000);
  return 'killed';
}

/** Polls the node's log (from `fromByte` on) for its ready line, failing fast if the process exits first. */
export async function waitForReady(child: ReturnType<typeof spawn>, logFile: string, opts: { timeoutMs: number; signal?: AbortSignal; fromByte?: number }): Promise<string> {
  const deadline = Date.now() + opts.timeoutMs;
  for (;;) {
    let text = '';
    try {
      // From `fromByte`: a restarted node's log still holds its earlier run's ready line.
      text = readFileSync(logFile)
        .subarray(opts.fromByte ?? 0)
        .toString('utf8');
    } catch {
      // not created yet
    }
    const m = /listening on (https?:\/\/\S+)/.exec(text);
    if (m) return m[1]!;
    if (child.exitCode !== null || child.signalCode !== null) {
      throw new Error(`it exited (${child.exitCode !== null ? `code ${child.exitCode}` : child.signalCode}) before it was ready`);
    }
    if (opts.signal?.aborted) throw new ClusterError('interrupted', 'interrupted while starting the cluster');
    if (Date.now() > deadline) throw new Error(`no ready line within ${opts.timeoutMs} ms`);
    await sleep(20);
  }
}

export function readTail(file: string, lines = 8): string {
  try {
    return readFileSync(file, 'utf8').trimEnd().split('\n').slice(-lines).join('\n');
  } catch {
    return '';
  }
}

export const indent = (s: string): string =>
  s
    .split('\n')
    .map((l) => `    ${l}`)
    .join('\n');
