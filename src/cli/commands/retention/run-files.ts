/**
 * Run files: one per `retention apply` run, `$XDG_STATE_HOME/tsnode/retention/<run_id>.json`
 * (directory 0700, file 0600), holding the plan with its pinned cut-offs and every node's steps.
 * Rewritten atomically (temp file, fsync, rename, fsync of the directory) before every DELETE, so
 * a tsnode killed at any moment leaves either the old or the new state, and a step that may have
 * been sent is marked in flight. A lock file beside a run keeps two processes off it.
 */
import { mkdirSync, openSync, closeSync, readFileSync, readdirSync, statSync, unlinkSync, writeFileSync } from 'node:fs';
import { open, rename } from 'node:fs/promises';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { stateModes } from '../../../run/state-files.js';
import { parseRunState, RetentionError, runFingerprint, serializeRunState, summariseRun, type RunState } from '../../../retention/index.js';
import { UsageError } from '../../errors.js';
import { stateDir } from '../../journal.js';
import { pidState } from '../../pid.js';

/** `retention/` in the state directory (`--state-dir`, `$TSNODE_STATE_DIR`, `$XDG_STATE_HOME/tsnode`, `~/.local/state/tsnode`). */
export function runDir(env: NodeJS.ProcessEnv): string {
  return join(stateDir(env), 'retention');
}

export function runFilePath(dir: string, runId: string): string {
  return join(dir, `${runId}.json`);
}

/** A run file is small; anything far larger is not one (and is not read into memory). */
const MAX_RUN_FILE_BYTES = 64 * 1024 * 1024;

/** Writes the state durably and atomically: after it resolves, a crash leaves this state or a later one. */
export async function writeRunFile(path: string, state: RunState): Promise<void> {
  const dir = join(path, '..');
  mkdirSync(dir, { recursive: true, mode: stateModes(dirname(dir)).dir });
  const tmp = `${path}.${process.pid}.tmp`;
  const fh = await open(tmp, 'w', stateModes(dir).file);
  try {
    await fh.writeFile(serializeRunState(state), 'utf8');
    await fh.sync();
  } finally {
    await fh.close();
  }
  await rename(tmp, path);
  // The rename itself must survive a crash too. (Some file systems cannot sync a directory.)
  try {
    const d = await open(dir, 'r');
    try {
      await d.sync();
    } finally {
      await d.close();
    }
  } catch {
    // best effort
  }
}

/** Reads a run file; a damaged one is exit 2 (RetentionError invalid_run_state names the file and the problem). */
export function readRunFile(path: string): RunState {
  let text: string;
  try {
    if (statSync(path).size > MAX_RUN_FILE_BYTES) throw new RetentionError('invalid_run_state', `${path}: larger than 64MiB: not a run file`);
    text = readFileSync(path, 'utf8');
  } catch (err) {
    // Kept: the size check's own error passes; a file system error is said with --resume's hint.
    if (err instanceof RetentionError) throw err;
    const code = (err as NodeJS.ErrnoException).code;
    const why = code === 'ENOENT' ? 'no such run' : code === 'EACCES' ? 'permission denied' : (err as Error).message;
    throw new UsageError(`--resume: cannot read ${path}: ${why}`, 'tsnode history lists the runs; the run files are in the state directory (retention/<run>.json)');
  }
  const state = parseRunState(text, path);
  // The id names the file the run is rewritten to: it must be this file's own name.
  if (`${state.runId}.json` !== basename(path)) {
    throw new RetentionError(
      'invalid_run_state',
      `${path}: run_id ${JSON.stringify(state.runId)} is not this file's name (${basename(path)}): refused (nothing was sent)`,
      'a run file is named after its run: <run_id>.json',
    );
  }
  return state;
}

export interface SavedRun {
  path: string;
  state: RunState;
  fingerprint: string;
  outcome: ReturnType<typeof summariseRun>['outcome'];
}

/** The run files in `dir`, newest first (run ids start with their UTC time, so names sort by time). */
export function runFiles(dir: string): string[] {
  let names: string[];
  try {
    names = readdirSync(dir).filter((n) => /^r-[A-Za-z0-9._-]+\.json$/.test(n));
  } catch {
    return [];
  }
  return names
    .sort()
    .reverse()
    .map((n) => join(dir, n));
}

function saved(path: string, state: RunState): SavedRun {
  return { path, state, fingerprint: runFingerprint(state.plan), outcome: summariseRun(state).outcome };
}

/**
 * The newest readable run for which `wanted` says yes, reading the files newest first and stopping
 * there: a state directory keeps a file per run (a nightly job makes hundreds), and the run wanted is
 * nearly always among the newest. `cheap`, when given, skips a file from its raw JSON before the
 * full (validating) read. Unreadable files are handed to `skip`.
 */
export function findSavedRun(
  dir: string,
  wanted: (r: SavedRun) => boolean,
  opts: { cheap?: (raw: unknown) => boolean; skip?: (path: string, why: string) => void } = {},
): SavedRun | undefined {
  for (const path of runFiles(dir)) {
    try {
      if (opts.cheap) {
        if (statSync(path).size > MAX_RUN_FILE_BYTES) throw new RetentionError('invalid_run_state', `${path}: larger than 64MiB: not a run file`);
        let raw: unknown;
        try {
          raw = JSON.parse(readFileSync(path, 'utf8'));
        } catch {
          raw = undefined; // the full read says what is wrong
        }
        if (raw !== undefined && !opts.cheap(raw)) continue;
      }
      const r = saved(path, readRunFile(path));
      if (wanted(r)) return r;
    } catch (err) {
      opts.skip?.(path, err instanceof Error ? err.message : String(err));
    }
  }
  return undefined;
}

/** Every readable run in `dir`, newest first; unreadable files are handed to `skip`. */
export function listRuns(dir: string, skip: (path: string, why: string) => void = () => {}): SavedRun[] {
  const runs: SavedRun[] = [];
  for (const path of runFiles(dir)) {
    try {
      runs.push(saved(path, readRunFile(path)));
    } catch (err) {
      skip(path, err instanceof Error ? err.message : String(err));
    }
  }
  return runs;
}

/** From a run file's raw JSON: does some step still need work (not done, not needed)? */
export function rawHasWorkLeft(raw: unknown): boolean {
  const nodes = (raw as { nodes?: unknown })?.nodes;
  if (!Array.isArray(nodes)) return true;
  return nodes.some((n: unknown) => {
    const steps = (n as { steps?: unknown } | null)?.steps;
    return (
      !Array.isArray(steps) ||
      steps.some((s: unknown) => {
        const state = (s as { state?: unknown } | null)?.state;
        return state !== 'done' && state !== 'not_needed';
      })
    );
  });
}

/** Outcomes a re-run of the same command continues by itself: stopped by a signal or a crash. */
export const CONTINUABLE: ReadonlySet<string> = new Set(['interrupted', 'running']);

export interface RunLock {
  release(): void;
}

/**
 * Takes the lock of a run (`<run>.lock`, created exclusively). A lock left by a process of this
 * host that no longer runs is taken over; a live one is exit 2: another tsnode applies the run.
 */
export function lockRun(dir: string, runId: string, warn: (m: string) => void): RunLock {
  mkdirSync(dir, { recursive: true, mode: stateModes(dirname(dir)).dir });
  const path = join(dir, `${runId}.lock`);
  const mine = JSON.stringify({ pid: process.pid, host: hostname(), at: new Date().toISOString() });
  for (let attempt = 0; attempt < 2; attempt++) {
    try {
      const fd = openSync(path, 'wx', stateModes(dir).file);
      try {
        writeFileSync(fd, mine);
      } finally {
        closeSync(fd);
      }
      let released = false;
      return {
        release: () => {
          if (released) return;
          released = true;
          try {
            unlinkSync(path);
          } catch {
            // gone already
          }
        },
      };
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw new UsageError(`cannot lock run ${runId} (${path}): ${(err as Error).message}`);
    }
    let holder: { pid?: unknown; host?: unknown } = {};
    try {
      holder = JSON.parse(readFileSync(path, 'utf8')) as typeof holder;
    } catch {
      // unreadable: treated as held
    }
    const pid = typeof holder.pid === 'number' ? holder.pid : undefined;
    if (holder.host === hostname() && pid !== undefined && pidState(pid) === 'gone') {
      warn(`run ${runId} was locked by process ${pid}, which no longer runs: taking the lock over`);
      try {
        unlinkSync(path);
      } catch {
        // someone else took it over first: the next attempt says so
      }
      continue;
    }
    const who = pid !== undefined ? `process ${pid}${typeof holder.host === 'string' ? ` on ${holder.host}` : ''}` : 'another process';
    throw new UsageError(
      `run ${runId} is being applied by ${who} (lock ${path}): nothing was sent`,
      'wait for it to finish (tsnode history shows its steps), or remove the lock file if that process is gone',
    );
  }
  throw new UsageError(`cannot lock run ${runId}: the lock keeps changing hands (nothing was sent)`);
}
