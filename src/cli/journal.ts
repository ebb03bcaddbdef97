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
import { closeSync, constants, createReadStream, fstatSync, lstatSync, mkdirSync, openSync, writeSync } from 'node:fs';
import { homedir, hostname, userInfo } from 'node:os';
import { dirname, isAbsolute, join, resolve } from 'node:path';
import { randomBytes } from 'node:crypto';
import type { JournalEntry } from '../run/records.js';
import { stateModes } from '../run/state-files.js';
import { InvalidValueError } from './errors.js';

export const JOURNAL_VERSION = 1;

/**
 * tsnode's state directory (journal, run files, locks; receipts are journal lines):
 * `$TSNODE_STATE_DIR` (the global `--state-dir` sets it: one audit trail for a team on a shared
 * host), else `$XDG_STATE_HOME/tsnode`, else `~/.local/state/tsnode`.
 */
export function stateDir(env: NodeJS.ProcessEnv): string {
  const own = env.TSNODE_STATE_DIR;
  if (own !== undefined && own !== '') {
    // A relative directory would move with the working directory (cron's is $HOME): refused.
    if (!isAbsolute(own))
      throw new InvalidValueError(
        'TSNODE_STATE_DIR',
        own,
        `${JSON.stringify(own)} is not an absolute path`,
        'give the state directory as an absolute path (--state-dir takes a relative one)',
      );
    return resolve(own);
  }
  // The XDG spec says a relative XDG_STATE_HOME is invalid and must be ignored.
  const xdg = env.XDG_STATE_HOME;
  const base = xdg && isAbsolute(xdg) ? xdg : join(env.HOME || homedir(), '.local', 'state');
  return join(base, 'tsnode');
}

/** Where the journal lives: `--journal`, else `sweeps.jsonl` in the state directory (stateDir). */
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
 * Appends entries to one journal file: the directory is created 0700, the file 0600 (group-shared
 * in a group-writable state dir: run/state-files.ts), each entry is one `write` of one line in
 * append mode, so several processes (a team sharing a state dir) append to one journal safely. The first failure is reported through `warn` (later
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
    const line = Buffer.from(`${JSON.stringify({ v: JOURNAL_VERSION, at: new Date(this.now()).toISOString(), ...entry })}\n`);
    let fd = this.fd;
    try {
      fd ??= this.open();
      this.writeLine(fd, line);
      // `history prune` renamed a rewritten journal over this one while the line went out: the
      // file this line is in has no name any more, so it goes to the journal that has.
      if (fstatSync(fd).nlink === 0) {
        closeSync(fd);
        this.fd = undefined;
        fd = this.open();
        this.writeLine(fd, line);
      }
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

  private open(): number {
    const dir = dirname(this.path);
    mkdirSync(dir, { recursive: true, mode: stateModes(dirname(dir)).dir });
    // O_NOFOLLOW: the journal is never written through a symbolic link (ELOOP, reported below).
    return openSync(this.path, constants.O_WRONLY | constants.O_APPEND | constants.O_CREAT | constants.O_NOFOLLOW, stateModes(dir).file);
  }

  /**
   * One line, one write(2) in append mode: the kernel places each write at the end of the file
   * as one piece, so lines of processes appending at once never interleave (tested with two
   * processes). A short write (a full disk) is an error, not half a line followed by another.
   */
  private writeLine(fd: number, line: Buffer): void {
    const n = writeSync(fd, line);
    if (n !== line.length) throw new Error(`only ${n} of ${line.length} bytes of a line were written (disk full?)`);
  }
}

/** A line of the journal as read back: its entry, or why it could not be read. */
export type JournalLine = { line: number; entry: JournalEntry & { v?: unknown; at?: unknown } } | { line: number; error: string };

/** The longest journal line read (a run with thousands of nodes writes ~100 KiB); longer ones are skipped, never held whole. */
export const MAX_JOURNAL_LINE = 4 * 1024 * 1024;

/**
 * Refuses a journal path that is a symbolic link or not a regular file (`/dev/zero`, a FIFO, a
 * directory): the journal is an audit trail, and a link could point it at anything. A missing
 * file is fine (nothing journaled yet). Throws an Error whose message says what the path is.
 */
export function checkJournalFile(path: string): void {
  let st;
  try {
    st = lstatSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  if (st.isSymbolicLink()) throw new Error('it is a symbolic link (refused: give the file it points to, if you mean it)');
  if (!st.isFile()) throw new Error('it is not a regular file');
}

/** Splits a byte stream into lines without ever holding more than MAX_JOURNAL_LINE bytes of one. */
async function* boundedLines(stream: AsyncIterable<Buffer>): AsyncGenerator<{ text: string } | { tooLong: number }> {
  let parts: Buffer[] = [];
  let held = 0;
  let dropped = 0; // bytes of the current line thrown away (0: the line is still whole)
  const push = (b: Buffer): void => {
    if (dropped || held + b.length > MAX_JOURNAL_LINE) {
      dropped += held + b.length;
      parts = [];
      held = 0;
    } else {
      parts.push(b);
      held += b.length;
    }
  };
  const finish = (): { text: string } | { tooLong: number } => {
    const out = dropped ? { tooLong: dropped } : { text: Buffer.concat(parts, held).toString('utf8') };
    parts = [];
    held = 0;
    dropped = 0;
    return out;
  };
  for await (const chunk of stream) {
    let from = 0;
    for (let nl = chunk.indexOf(10, from); nl !== -1; nl = chunk.indexOf(10, from)) {
      push(chunk.subarray(from, nl));
      yield finish();
      from = nl + 1;
    }
    if (from < chunk.length) push(chunk.subarray(from));
  }
  if (held || dropped) yield finish();
}

/**
 * Reads a journal line by line (a stream, bounded per line, never the whole file). A missing
 * file reads as empty; a symbolic link or a file that is not regular is refused (checkJournalFile).
 * Lines that are not JSON objects with a `kind`, that are too long, or whose times or node lists
 * cannot be what their kind writes, come back as errors for the reader to count.
 */
export async function* readJournal(path: string): AsyncGenerator<JournalLine> {
  checkJournalFile(path);
  let fd: number;
  try {
    fd = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return;
    throw err;
  }
  const stream = createReadStream('', { fd, highWaterMark: 256 * 1024 });
  let n = 0;
  for await (const line of boundedLines(stream as AsyncIterable<Buffer>)) {
    n++;
    if ('tooLong' in line) {
      yield { line: n, error: `longer than ${MAX_JOURNAL_LINE / 1024 / 1024} MiB (${line.tooLong} bytes)` };
      continue;
    }
    const text = line.text;
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
    const problem = entryProblem(e);
    if (problem !== null) {
      yield { line: n, error: problem };
      continue;
    }
    yield { line: n, entry: e as JournalEntry };
  }
}

/** Epoch seconds a Date can hold (JavaScript's range is +-8.64e15 ms). */
const MAX_EPOCH_SECONDS = 8.64e12;

function badSeconds(v: unknown): boolean {
  return v !== undefined && v !== null && (typeof v !== 'number' || !Number.isFinite(v) || Math.abs(v) > MAX_EPOCH_SECONDS);
}

/**
 * Why a line cannot be what its kind writes, or null: an `at` that is no time, an epoch field
 * outside what a date can hold, or a node list that is no list. Such a line is skipped whole
 * (a `sweep.end` whose `nodes` is not a list must not read as "finished, nothing left").
 */
export function entryProblem(e: Record<string, unknown>): string | null {
  if (e.at !== undefined && (typeof e.at !== 'string' || Number.isNaN(Date.parse(e.at)))) return 'its time (at) is not a valid time';
  for (const field of ['before', 'now'] as const) if (badSeconds(e[field])) return `its ${field} is not an epoch time in range`;
  if (Array.isArray(e.steps) && e.steps.some((s) => Boolean(s) && typeof s === 'object' && badSeconds((s as { cutoff?: unknown }).cutoff))) {
    return 'a step cut-off is not an epoch time in range';
  }
  if (/^(sweep|retention)\.(start|end)$|^sweep\.cancel$/.test(e.kind as string) && !Array.isArray(e.nodes)) return 'its nodes field is not a list';
  return null;
}

// The entry shapes are the run core's (src/run/records.ts): it builds them, this file writes them.
export type * from '../run/records.js';
