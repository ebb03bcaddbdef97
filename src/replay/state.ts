import { closeSync, fsyncSync, openSync, readFileSync, renameSync, rmSync, writeSync } from 'node:fs';
import type { Position } from '../records/batch.js';
import type { RecordFormat, SourceInfo } from '../records/reader.js';

/** Where one input stands: every record up to `record` (ending at `byte`, `line`) is acknowledged or in the rejects file. */
export interface InputState extends Position {
  format: RecordFormat;
  size: number | null;
  mtimeMs: number | null;
  gzip: boolean;
  done: boolean;
}

export interface ReplayState {
  version: 1;
  updated: string;
  rejects: string;
  inputs: Record<string, InputState>;
}

/** A resume that cannot go ahead safely (missing or changed input, unreadable state). */
export class ReplayStateError extends Error {
  readonly code = 'state';
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
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
  if (s.version !== 1 || typeof s.inputs !== 'object' || s.inputs === null) {
    throw new ReplayStateError(`state file ${path} is not a tsnode write state (version 1)`, 'delete it to start over, or pass the right --state');
  }
  return s as ReplayState;
}

/** Writes the state atomically: a reader (or a resume after SIGKILL) sees the old or the new file, never half of one. */
export function saveState(path: string, state: ReplayState): void {
  const tmp = `${path}.${process.pid}.tmp`;
  const fd = openSync(tmp, 'w');
  try {
    writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
    fsyncSync(fd);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, path);
}

export function removeState(path: string): void {
  rmSync(path, { force: true });
}

/**
 * Checks a saved input against the file now on disk. A changed file means the saved byte
 * offset may point into the middle of a different record: refuse unless forced.
 */
export function checkInput(saved: InputState, info: SourceInfo, force: boolean): string | undefined {
  if (info.stdin) return 'standard input cannot be checked: resuming assumes it carries the same records in the same order';
  const changed: string[] = [];
  if (saved.size !== null && info.size !== undefined && saved.size !== info.size) changed.push(`size ${saved.size} -> ${info.size}`);
  if (saved.mtimeMs !== null && info.mtimeMs !== undefined && Math.abs(saved.mtimeMs - info.mtimeMs) > 1) {
    changed.push(`modified ${new Date(saved.mtimeMs).toISOString()} -> ${new Date(info.mtimeMs).toISOString()}`);
  }
  if (changed.length === 0) return undefined;
  if (!force) {
    throw new ReplayStateError(
      `${info.name} changed since the saved run (${changed.join(', ')}): its saved position (record ${saved.record}, byte ${saved.byte}) may no longer be right`,
      'pass --force to resume anyway (records are skipped by position), or drop --resume to start over',
    );
  }
  return `${info.name} changed since the saved run (${changed.join(', ')}); resuming anyway because of --force`;
}

/** The acknowledged prefix of one input: batches finish out of order, the position moves only over a contiguous run of them. */
export class LowWater {
  private next = 0;
  private readonly finished = new Map<number, Position>();
  position: Position;

  constructor(start: Position) {
    this.position = start;
  }

  /** Marks batch `seq` done; returns true when the acknowledged prefix moved. */
  ack(seq: number, end: Position): boolean {
    this.finished.set(seq, end);
    let moved = false;
    for (let p = this.finished.get(this.next); p !== undefined; p = this.finished.get(this.next)) {
      this.position = p;
      this.finished.delete(this.next);
      this.next++;
      moved = true;
    }
    return moved;
  }
}
