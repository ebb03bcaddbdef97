/**
 * `tsnode history prune --older-than <age>`: keeps a journal (and the run files beside it) in
 * check. A run whose latest line is older than the age goes whole: its lines, its receipt, its
 * retention run file. The journal is rewritten to a temporary file and renamed over the old one
 * (a crash leaves one or the other); lines other processes append meanwhile are carried over (and
 * a writer that finds its file renamed away writes its line again: journal.ts). Refused while a
 * run holds a lock in the state directory: a running run is still writing its lines.
 */
import { closeSync, constants, existsSync, fstatSync, fsyncSync, openSync, readdirSync, readFileSync, readSync, renameSync, rmSync, unlinkSync, writeSync } from 'node:fs';
import { hostname } from 'node:os';
import { basename, dirname, join } from 'node:path';
import { RUN_ID } from '../../../retention/run-state.js';
import { describeHolder, type LockHolder } from '../../../run/lock.js';
import type { CliContext } from '../../context.js';
import { UsageError } from '../../errors.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';
import { checkJournalFile, journalPath, readJournal, stateDir } from '../../journal.js';
import { pidState } from '../../pid.js';
import { askYesNo } from '../../prompt.js';
import { printable } from '../../render/printable.js';
import { renderCsv, renderJson, renderTable, tableWidth } from '../../render/table.js';
import { describeTime } from '../../time.js';
import type { HistoryOptions } from './options.js';

export interface PruneOptions extends HistoryOptions {
  olderThan: number | undefined;
  dryRun: boolean;
  yes: boolean;
}

/** One run found in the journal: its lines (1-based numbers) and the times of its first and latest line. */
interface JournalRun {
  run: string;
  command: string;
  firstMs: number;
  lastMs: number;
  lines: number[];
}

/** A lock in the state dir held by a process that may still run (another host's: cannot tell, so held). */
function heldLocks(dir: string): Array<{ path: string; holder: Partial<LockHolder> | null }> {
  const held: Array<{ path: string; holder: Partial<LockHolder> | null }> = [];
  for (const sub of ['locks', 'retention']) {
    let names: string[];
    try {
      names = readdirSync(join(dir, sub)).filter((n) => n.endsWith('.lock'));
    } catch {
      continue;
    }
    for (const name of names) {
      const path = join(dir, sub, name);
      let holder: Partial<LockHolder> | null = null;
      try {
        holder = JSON.parse(readFileSync(path, 'utf8')) as Partial<LockHolder>;
      } catch {
        // unreadable: held, as the run core reads it
      }
      const gone = holder !== null && holder.host === hostname() && typeof holder.pid === 'number' && pidState(holder.pid) === 'gone';
      if (!gone) held.push({ path, holder });
    }
  }
  return held;
}

/** Pass 1: every run of the journal with its line numbers; lines that cannot be read belong to no run (they are kept). */
async function scanRuns(path: string): Promise<{ runs: Map<string, JournalRun>; lines: number }> {
  const runs = new Map<string, JournalRun>();
  let lines = 0;
  for await (const line of readJournal(path)) {
    lines = line.line;
    if ('error' in line) continue;
    const e = line.entry as { run?: unknown; at?: unknown; kind: string; command?: unknown };
    if (typeof e.run !== 'string' || typeof e.at !== 'string') continue;
    const at = Date.parse(e.at);
    // A refused run names its command; the others are their kind's (`retention.start`: retention).
    const command = e.kind === 'run.refused' && typeof e.command === 'string' ? e.command.slice(0, 40) : e.kind.split('.')[0]!;
    const r = runs.get(e.run) ?? { run: e.run, command, firstMs: at, lastMs: at, lines: [] };
    r.firstMs = Math.min(r.firstMs, at);
    r.lastMs = Math.max(r.lastMs, at);
    r.lines.push(line.line);
    runs.set(e.run, r);
  }
  return { runs, lines };
}

/** A line longer than this is copied in pieces (no journal line is: the reader skips lines over 4 MiB). */
const MAX_HELD = 8 * 1024 * 1024;

/**
 * Copies the whole lines of `from` (from byte `start`) to `to`, leaving out the lines numbered in
 * `drop` (counting from `firstLine`); returns the bytes copied or dropped. An unfinished last line
 * is left where it is: a writer may be in the middle of it, and copying half a line would glue it
 * to the next. The next pass takes it, or its writer writes it again to the renamed journal.
 */
function copyLines(from: number, start: number, to: number, drop: ReadonlySet<number>, firstLine = 1): number {
  let buf = Buffer.allocUnsafe(256 * 1024);
  let line = firstLine;
  let pos = start; // the first byte not yet copied (nor dropped)
  let held = 0; // bytes read from `pos` on, at the front of `buf`
  for (;;) {
    if (held === buf.length) {
      if (held >= MAX_HELD) {
        writeAll(to, buf.subarray(0, held));
        pos += held;
        held = 0;
      } else {
        const bigger = Buffer.allocUnsafe(buf.length * 2);
        buf.copy(bigger, 0, 0, held);
        buf = bigger;
      }
    }
    const n = readSync(from, buf, held, buf.length - held, pos + held);
    if (n === 0) return pos - start;
    held += n;
    let at = 0;
    for (let nl = buf.indexOf(10, at); nl !== -1 && nl < held; nl = buf.indexOf(10, at)) {
      if (!drop.has(line)) writeAll(to, buf.subarray(at, nl + 1));
      line++;
      at = nl + 1;
    }
    buf.copy(buf, 0, at, held);
    held -= at;
    pos += at;
  }
}

function writeAll(fd: number, bytes: Buffer): void {
  for (let off = 0; off < bytes.length;) off += writeSync(fd, bytes, off);
}

/**
 * Pass 2: the journal without the `drop` lines, renamed over it. Lines appended while it is
 * copied are carried over before and after the rename (the old file stays open to read them).
 */
function rewriteJournal(path: string, drop: ReadonlySet<number>): void {
  const src = openSync(path, constants.O_RDONLY | constants.O_NOFOLLOW);
  const tmp = join(dirname(path), `.${basename(path)}.prune-${process.pid}.tmp`);
  try {
    const out = openSync(tmp, constants.O_WRONLY | constants.O_CREAT | constants.O_EXCL, fstatSync(src).mode & 0o777);
    let copied: number;
    try {
      copied = copyLines(src, 0, out, drop);
      // New lines (new runs) written meanwhile: kept whole.
      for (let more = copyLines(src, copied, out, new Set()); more > 0; more = copyLines(src, copied, out, new Set())) copied += more;
      fsyncSync(out);
    } finally {
      closeSync(out);
    }
    renameSync(tmp, path);
    const dirFd = openSync(dirname(path), constants.O_RDONLY);
    try {
      fsyncSync(dirFd);
    } finally {
      closeSync(dirFd);
    }
    // A line written to the old file in the instant of the rename: appended to the new one.
    const tail = fstatSync(src).size - copied;
    if (tail > 0) {
      const dst = openSync(path, constants.O_WRONLY | constants.O_APPEND | constants.O_NOFOLLOW);
      try {
        copyLines(src, copied, dst, new Set());
      } finally {
        closeSync(dst);
      }
    }
  } catch (err) {
    rmSync(tmp, { force: true });
    throw err;
  } finally {
    closeSync(src);
  }
}

/** The retention run file of `run` (and its stale lock), when there is one; never a path outside the run dir. */
function removeRunFiles(dir: string, run: string, dryRun: boolean): string | null {
  if (!RUN_ID.test(run)) return null;
  const file = join(dir, 'retention', `${run}.json`);
  if (!existsSync(file)) return null;
  if (!dryRun) {
    unlinkSync(file);
    rmSync(join(dir, 'retention', `${run}.lock`), { force: true });
  }
  return file;
}

function printPruned(ctx: CliContext, opts: PruneOptions, path: string, cutoffMs: number, pruned: ReadonlyArray<JournalRun & { runFile: string | null }>, kept: number): void {
  const iso = (ms: number): string => new Date(ms).toISOString();
  if (opts.output === 'json') {
    ctx.stdout.write(
      renderJson({
        journal: path,
        older_than_seconds: (opts.olderThan ?? 0) / 1000,
        cutoff: iso(cutoffMs),
        dry_run: opts.dryRun,
        runs: pruned.map((r) => ({ run: r.run, command: r.command, first_at: iso(r.firstMs), last_at: iso(r.lastMs), lines: r.lines.length, run_file: r.runFile })),
        kept_runs: kept,
      }),
    );
  } else if (opts.output === 'csv') {
    ctx.stdout.write(
      renderCsv(
        ['run', 'command', 'first_at', 'last_at', 'lines', 'run_file'],
        pruned.map((r) => [r.run, r.command, iso(r.firstMs), iso(r.lastMs), r.lines.length, r.runFile ?? '']),
      ),
    );
  } else if (pruned.length) {
    // Run ids and commands come from a file anyone may have edited: escaped before the terminal.
    const rows = pruned.map((r) => [printable(r.run), printable(r.command), describeTime(r.lastMs), r.lines.length, r.runFile ? 'yes' : '-']);
    ctx.stdout.write(
      renderTable(['run', 'command', 'last line', 'lines', 'run file'], rows, { colour: ctx.colour, width: tableWidth(ctx), align: [undefined, undefined, undefined, 'right'] }),
    );
  }
}

export async function historyPruneAction(opts: PruneOptions, ctx: CliContext): Promise<ExitCode> {
  if (opts.olderThan === undefined) throw new UsageError('history prune needs --older-than <age>', 'e.g. tsnode history prune --older-than 90d --dry-run');
  const path = journalPath({ flag: opts.journal, env: ctx.env, cwd: ctx.cwd });
  const state = stateDir(ctx.env);
  const cutoffMs = ctx.now() - opts.olderThan;
  const held = heldLocks(state);
  if (held.length && opts.dryRun) ctx.log.warn(`a run holds a lock (${held.map((h) => describeHolder(h.holder)).join('; ')}): a prune now would be refused`);
  if (held.length && !opts.dryRun) {
    throw new UsageError(
      `refusing to prune ${path}: a run holds a lock (${held.map((h) => `${describeHolder(h.holder)}, ${h.path}`).join('; ')}); nothing was changed`,
      'wait for it to end (tsnode history shows it), or remove the lock file if that process is gone',
    );
  }
  let scan;
  try {
    checkJournalFile(path);
    scan = await scanRuns(path);
  } catch (err) {
    throw new UsageError(`cannot read the journal ${path}: ${(err as Error).message}`, 'pass another file with --journal');
  }
  const old = [...scan.runs.values()].filter((r) => r.lastMs < cutoffMs).sort((a, b) => a.lastMs - b.lastMs);
  const pruned = old.map((r) => ({ ...r, runFile: removeRunFiles(state, r.run, true) }));
  const kept = scan.runs.size - old.length;
  const lines = old.reduce((n, r) => n + r.lines.length, 0);
  const what = `${old.length} run${old.length === 1 ? '' : 's'} (${lines} line${lines === 1 ? '' : 's'}, ${pruned.filter((r) => r.runFile).length} run file(s)) whose latest line is before ${new Date(cutoffMs).toISOString()}`;
  ctx.log.info(`journal: ${path}`);
  if (opts.dryRun || old.length === 0) {
    printPruned(ctx, opts, path, cutoffMs, pruned, kept);
    ctx.log.info(old.length === 0 ? `nothing to prune: no run older than that (${kept} kept)` : `dry run: would remove ${what}; ${kept} kept; nothing was changed`);
    return EXIT.ok;
  }
  const answer = opts.yes ? 'yes' : await askYesNo(ctx, `remove ${what} from ${path}?`);
  if (answer === 'interrupted') return EXIT.interrupted;
  if (answer === 'no-tty') throw new UsageError(`history prune would remove ${what}; nothing was changed`, 'add --yes to prune without a terminal (--dry-run lists the runs)');
  if (answer === 'no') throw new UsageError('history prune not confirmed: nothing was changed');
  rewriteJournal(path, new Set(old.flatMap((r) => r.lines)));
  for (const r of pruned) if (r.runFile) removeRunFiles(state, r.run, false);
  printPruned(ctx, { ...opts }, path, cutoffMs, pruned, kept);
  ctx.log.info(`removed ${what}; ${kept} kept`);
  return EXIT.ok;
}
