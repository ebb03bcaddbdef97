/**
 * The operator's journal: one JSON line per event, appended to `sweeps.jsonl` in the user's
 * state directory, so "what was deleted where, and is anything left to catch up" has an answer
 * after the terminal is gone. The library emits results; only cli/ writes this file.
 *
 * Format (one object per line, every line has `v`, `kind`, `run` and `at`):
 * - `sweep.start`: before any DELETE goes out (a tsnode killed mid-run still leaves this);
 * - `sweep.end`: the same `run`, with every node's final state and reason and the catch-up;
 * - `sweep.cancel`: one line per `tsnode sweep cancel`;
 * - `retention.start`: before a `retention apply` run (or a resume of it: same `run`, next
 *   `attempt`) sends its first DELETE; `retention.step`: each step of each node as it ends;
 *   `retention.end`: the run's outcome, every node's progress and the catch-up;
 * - `run.refused`: a sweep, cancel or retention run that stopped before sending anything (busy,
 *   unreachable, coverage, spans, lock), with the reason.
 * Readers skip kinds they do not know. The journal never stops a sweep: a write that fails is a warning.
 */
import { closeSync, createReadStream, mkdirSync, openSync, writeSync } from 'node:fs';
import { homedir, hostname, userInfo } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { createInterface } from 'node:readline';
import { randomBytes } from 'node:crypto';
import type { JournalEntry } from '../run/records.js';

export const JOURNAL_VERSION = 1;

/** tsnode's state directory: `$XDG_STATE_HOME/tsnode`, else `~/.local/state/tsnode`. */
export function stateDir(env: NodeJS.ProcessEnv): string {
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'tsnode');
}

/** Where the journal lives: `--journal`, else `$XDG_STATE_HOME/tsnode/sweeps.jsonl`, else `~/.local/state/tsnode/sweeps.jsonl`. */
export function journalPath(opts: { flag?: string | undefined; env: NodeJS.ProcessEnv; cwd: string }): string {
  if (opts.flag !== undefined && opts.flag.trim() !== '') return resolve(opts.cwd, opts.flag);
  return join(stateDir(opts.env), 'sweeps.jsonl');
}

/** `user@host`, for the `by` field (best effort: a container may have no user name). */
export function whoAmI(env: NodeJS.ProcessEnv): string {
  let user = env.USER || env.LOGNAME || '';
  if (!user) {
    try {
      user = userInfo().username;
    } catch {
      user = 'unknown';
    }
  }
  return `${user}@${hostname()}`;
}

export function newRunId(): string {
  return randomBytes(6).toString('hex');
}

/**
 * Appends entries to one journal file: the directory is created 0700, the file 0600, each entry
 * is one `write` of one line in append mode. The first failure is reported through `warn` (later
 * ones are not repeated); nothing here throws.
 */
export class Journal {
  private warned = false;
  private fd: number | undefined;
  constructor(
    readonly path: string,
    private readonly warn: (message: string) => void,
    private readonly now: () => number = Date.now,
    /** Keep the file open between appends (a run that journals hundreds of lines); call close(). */
    private readonly keepOpen = false,
  ) {}

  append(entry: JournalEntry): boolean {
    const line = `${JSON.stringify({ v: JOURNAL_VERSION, at: new Date(this.now()).toISOString(), ...entry })}\n`;
    let fd = this.fd;
    try {
      if (fd === undefined) {
        mkdirSync(dirname(this.path), { recursive: true, mode: 0o700 });
        fd = openSync(this.path, 'a', 0o600);
      }
      writeSync(fd, line);
      return true;
    } catch (err) {
      if (!this.warned) this.warn(`cannot write the journal ${this.path}: ${(err as Error).message} (the sweep goes on; this run is not journaled)`);
      this.warned = true;
      return false;
    } finally {
      if (fd !== undefined) {
        if (this.keepOpen) this.fd = fd;
        else closeSync(fd);
      }
    }
  }

  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}

/** A line of the journal as read back: its entry, or why it could not be read. */
export type JournalLine = { line: number; entry: JournalEntry & { v?: unknown; at?: unknown } } | { line: number; error: string };

/** Reads a journal line by line (a stream, not the whole file at once). A missing file reads as empty. */
export async function* readJournal(path: string): AsyncGenerator<JournalLine> {
  const stream = createReadStream(path, { encoding: 'utf8' });
  const opened = await new Promise<boolean>((res, rej) => {
    stream.once('ready', () => res(true));
    stream.once('error', (err: NodeJS.ErrnoException) => (err.code === 'ENOENT' ? res(false) : rej(err)));
  });
  if (!opened) return;
  const lines = createInterface({ input: stream, crlfDelay: Infinity });
  let n = 0;
  for await (const text of lines) {
    n++;
    if (text.trim() === '') continue;
    let value: unknown;
    try {
      value = JSON.parse(text);
    } catch {
      yield { line: n, error: 'not JSON' };
      continue;
    }
    if (!value || typeof value !== 'object' || Array.isArray(value)) {
      yield { line: n, error: 'not an object' };
      continue;
    }
    const e = value as Record<string, unknown>;
    // Only `kind` is common to every writer; what else a kind needs is its reader's business.
    if (typeof e.kind !== 'string') {
      yield { line: n, error: 'no kind' };
      continue;
    }
    yield { line: n, entry: e as JournalEntry };
  }
}

// The entry shapes are the run core's (src/run/records.ts): it builds them, this file writes them.
export type * from '../run/records.js';
