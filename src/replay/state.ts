import { TsnodeError } from '../tsnode-error.js';
import { readFileSync, unlinkSync } from 'node:fs';
import type { Position } from '../records/batch.js';
import { RECORD_KINDS, type RecordKind } from '../records/kinds.js';
import type { RecordFormat, SourceInfo } from '../records/reader.js';
import { writePrivateAtomic } from './private-file.js';

/**
 * What the settled prefix of an input came to, summed over every run that worked on it: a
 * resumed run reports (and exits by) these too, so records rejected before a stop are not
 * forgotten because a later run had none of its own.
 */
export interface SettledCounts {
  /** Acknowledged; with `--to all`, by every node. */
  written: number;
  /** `--to all`: acknowledged by some nodes, not by all. */
  writtenToSome: number;
  /** In the rejects file: invalid, refused by a node, in a batch that failed after retries. */
  invalid: number;
  refused: number;
  notWritten: number;
}

export function noCounts(): SettledCounts {
  return { written: 0, writtenToSome: 0, invalid: 0, refused: 0, notWritten: 0 };
}

export function addCounts(into: SettledCounts, more: Partial<SettledCounts>): SettledCounts {
  for (const k of Object.keys(into) as (keyof SettledCounts)[]) into[k] += more[k] ?? 0;
  return into;
}

/** Records of these counts that are in the rejects file. */
export function rejectedOf(c: SettledCounts): number {
  return c.invalid + c.refused + c.notWritten;
}

/** Where one input stands: every record up to `record` (ending at `byte`, `line`) is acknowledged or in the rejects file. */
export interface InputState extends Position {
  format: RecordFormat;
  size: number | null;
  mtimeMs: number | null;
  gzip: boolean;
  done: boolean;
  /** The counts of that prefix (absent in state files of older versions: counted as zero). */
  settled?: SettledCounts;
}

export interface ReplayState {
  version: 1;
  updated: string;
  rejects: string;
  /** The kind of records the run wrote (absent in files of older versions: numeric). */
  kind?: RecordKind;
  inputs: Record<string, InputState>;
}

/** A resume that cannot go ahead safely (missing or changed input, unreadable state). */
export class ReplayStateError extends TsnodeError {
  declare readonly code: 'state';
  constructor(message: string, hint?: string) {
    super('state', message, { hint });
    this.name = 'ReplayStateError';
  }
}

export function loadState(path: string): ReplayState | undefined {
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw new ReplayStateError(`state file ${path}: cannot read: ${(err as Error).message}`);
  }
  let state: unknown;
  try {
    state = JSON.parse(text);
  } catch {
    throw new ReplayStateError(`state file ${path} is not valid JSON`, 'delete it to start over, or pass the right --state');
  }
  const s = state as Partial<ReplayState>;
  if (s.version !== 1 || typeof s.inputs !== 'object' || s.inputs === null || Array.isArray(s.inputs)) {
    throw new ReplayStateError(`state file ${path} is not a tsnode write state (version 1)`, 'delete it to start over, or pass the right --state');
  }
  if (s.kind !== undefined && !RECORD_KINDS.includes(s.kind)) {
    throw new ReplayStateError(
      `state file ${path}: kind ${JSON.stringify(s.kind)} is not one of ${RECORD_KINDS.join(', ')}`,
      'delete the state file to start over, or restore the one tsnode wrote',
    );
  }
  for (const [name, input] of Object.entries(s.inputs)) checkSaved(path, name, input);
  return s as ReplayState;
}

const isCount = (v: unknown): v is number => typeof v === 'number' && Number.isSafeInteger(v) && v >= 0;

/** One input's entry, as a hand edit or a bad disk may have left it: every number a whole count. */
function checkSaved(path: string, name: string, input: unknown): asserts input is InputState {
  const bad = (what: string): never => {
    throw new ReplayStateError(`state file ${path}: input ${JSON.stringify(name)}: ${what}`, 'delete the state file to start over, or restore the one tsnode wrote');
  };
  if (typeof input !== 'object' || input === null) bad('is not an object');
  const i = input as Record<string, unknown>;
  for (const key of ['record', 'byte'] as const) if (!isCount(i[key])) bad(`${key} ${JSON.stringify(i[key])} is not a whole number >= 0`);
  if (!isCount(i.line) || i.line < 1) bad(`line ${JSON.stringify(i.line)} is not a whole number >= 1`);
  if (i.format !== 'json' && i.format !== 'ndjson') bad(`format ${JSON.stringify(i.format)} is not json or ndjson`);
  if (i.size !== null && !isCount(i.size)) bad(`size ${JSON.stringify(i.size)} is not a whole number >= 0 or null`);
  if (i.settled !== undefined) {
    const c = i.settled as Record<string, unknown> | null;
    if (typeof c !== 'object' || c === null) bad('settled is not an object');
    for (const key of Object.keys(noCounts())) if (!isCount(c![key])) bad(`settled.${key} ${JSON.stringify(c![key])} is not a whole number >= 0`);
  }
}

/**
 * Checks a saved position against the input now on disk: a byte offset past the end of a file
 * would skip every record and report success. (Inputs read from the start, gzip and stdin, are
 * checked as they are read: see openRecords.)
 */
export function checkPosition(saved: InputState, info: SourceInfo): void {
  if (info.stdin || info.gzip || info.size === undefined) return;
  if (saved.byte > info.size) {
    throw new ReplayStateError(
      `${info.name}: the saved position (record ${saved.record}, byte ${saved.byte}) is past the end of the file (${info.size} bytes)`,
      'the state file belongs to another input or was edited: delete it to start over, or pass the right --state',
    );
  }
}

/** Writes the state atomically (0600, never through a planted link): a reader or a resume after SIGKILL sees the old or the new file, never half of one. */
export function saveState(path: string, state: ReplayState): void {
  writePrivateAtomic(path, `${JSON.stringify(state, null, 2)}\n`, 'state file');
}

export function removeState(path: string): void {
  // unlinkSync, not rmSync: rmSync loads Node's rimraf on first use (~1 ms of every write).
  try {
    unlinkSync(path);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
}

/**
 * Checks a saved input against the file now on disk. A changed file means the saved byte
 * offset may point into the middle of a different record: refuse unless allowed.
 */
export function checkInput(saved: InputState, info: SourceInfo, allowChanged: boolean): string | undefined {
  if (info.stdin) return 'standard input cannot be checked: resuming assumes it carries the same records in the same order';
  const changed: string[] = [];
  if (saved.size !== null && info.size !== undefined && saved.size !== info.size) changed.push(`size ${saved.size} -> ${info.size}`);
  if (saved.mtimeMs !== null && info.mtimeMs !== undefined && Math.abs(saved.mtimeMs - info.mtimeMs) > 1) {
    changed.push(`modified ${new Date(saved.mtimeMs).toISOString()} -> ${new Date(info.mtimeMs).toISOString()}`);
  }
  if (changed.length === 0) return undefined;
  if (!allowChanged) {
    throw new ReplayStateError(
      `${info.name} changed since the saved run (${changed.join(', ')}): its saved position (record ${saved.record}, byte ${saved.byte}) may no longer be right`,
      'pass --allow-changed-input to resume anyway (records are skipped by position), or drop --resume to start over',
    );
  }
  return `${info.name} changed since the saved run (${changed.join(', ')}); resuming anyway because of --allow-changed-input`;
}

/**
 * The acknowledged prefix of one input: batches finish out of order, the position moves only
 * over a contiguous run of them, and `settled` adds up the counts of the batches it moved over.
 */
export class LowWater {
  private next = 0;
  private readonly finished = new Map<number, { end: Position; counts: Partial<SettledCounts> | undefined }>();
  position: Position;
  readonly settled: SettledCounts;

  constructor(start: Position, settled?: SettledCounts) {
    this.position = start;
    this.settled = { ...noCounts(), ...settled };
  }

  /** Marks batch `seq` done, with what became of its records; returns true when the acknowledged prefix moved. */
  ack(seq: number, end: Position, counts?: Partial<SettledCounts>): boolean {
    this.finished.set(seq, { end, counts });
    let moved = false;
    for (let f = this.finished.get(this.next); f !== undefined; f = this.finished.get(this.next)) {
      this.position = f.end;
      if (f.counts) addCounts(this.settled, f.counts);
      this.finished.delete(this.next);
      this.next++;
      moved = true;
    }
    return moved;
  }
}
