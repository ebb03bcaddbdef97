/**
 * The ingest log: how a numeric write is made durable before it is acknowledged. A write is one
 * frame appended to a plain file, whatever the number of series it touches; the chunks are
 * updated later, many writes at a time (see flusher.ts), so a chunk is rewritten once per
 * flush instead of once per write. An append reaches the OS before the 200, so it survives a
 * crash of the node process, the same promise as SQLite's WAL with synchronous=NORMAL.
 *
 * The log is a file per generation (`nnt-<generation>.log`): `[header: magic, version,
 * generation][frames...]`, a frame `[magic, payload bytes, crc32][payload]`. A flush starts a
 * new generation for the writes that arrive meanwhile, applies the ended one, records it as
 * applied in its last transaction, and then deletes its file; a crash between the two leaves a
 * file the next start skips.
 *
 * Reading a file back tells two kinds of bad bytes apart. Bad bytes with no intact frame after
 * them are a torn tail: an append a crash cut off, never acknowledged, dropped. Bad bytes with
 * intact frames after them cannot come from a crash (appends only ever extend the end): that is
 * damage, and the intact frames after it are acknowledged writes. Opening such a log throws
 * LogDamageError and changes nothing, unless the caller asks to salvage: then every intact frame
 * is read (the search resumes at the next frame magic with a valid length and checksum) and a copy
 * of the damaged file is kept. Frames are found by position (generation, byte offset), which damage
 * does not shift: the store's skip rows (nnt_skip) name positions.
 *
 * A frame's payload is opaque here (see log-payload.ts).
 */
import { closeSync, copyFileSync, ftruncateSync, openSync, readdirSync, readFileSync, rmSync, statSync, writeSync, writevSync } from 'node:fs';
import { join } from 'node:path';
import { crc32 } from 'node:zlib';
import { TsnodeError } from '../../tsnode-error.js';

const FILE_MAGIC = 0x4c4e5354; // "TSNL"
const FRAME_MAGIC = 0x46524d31;
const VERSION = 1;
const HEADER = 16;
const FRAME_HEADER = 12;

/** Where a frame sits in the log: its generation and the byte offset of its start in that file. */
export interface LogPosition {
  generation: number;
  offset: number;
}

/** One frame read back from the log. */
export interface LoggedFrame extends LogPosition {
  payload: Buffer;
}

/** A run of bytes in a log file that holds no readable frame, with intact frames after it. */
export interface LogDamage {
  from: number;
  to: number;
  /** Intact frames before it in the same file. */
  framesBefore: number;
}

/**
 * A log file with damage in front of intact frames: a torn write only ever leaves damage at the
 * end, so this is corruption, and intact acknowledged writes follow it. The file is left as it is.
 */
export class LogDamageError extends TsnodeError {
  declare readonly code: 'log_damaged';
  constructor(
    readonly file: string,
    readonly damage: LogDamage[],
    /** The intact frames after the first damage (acknowledged writes a silent start would drop). */
    readonly framesAfter: LoggedFrame[],
  ) {
    super('log_damaged', `${file} is damaged`);
    this.name = 'LogDamageError';
  }
}

/** What opening the log found besides the frames: torn tails dropped, damage salvaged around. */
export interface LogFindings {
  /** Files whose last bytes were a write cut off (never acknowledged), dropped: file and bytes. */
  tornTails: Array<{ file: string; from: number; bytes: number }>;
  /** With `salvage`: the damaged files, their damage, and where a copy of each was kept. */
  salvaged: Array<{ file: string; copy: string; damage: LogDamage[]; frames: number }>;
}

/** The log files of one data directory. Not safe for two processes (the store's lock guards it). */
export class IngestLog {
  private fd: number;
  private size = HEADER;
  /** The generation being appended to. */
  generation: number;
  /** What earlier processes logged and the database has not applied, oldest first (read once, at open). */
  readonly pendingFrames: LoggedFrame[] = [];
  readonly findings: LogFindings = { tornTails: [], salvaged: [] };
  /** Bytes of the ended generations whose files are still there (not applied yet), by generation. */
  private readonly ended = new Map<number, number>();
  /** File names are `<prefix>-<generation>.log` (`nnt` for the ingest log; replication journals use their own). */
  private readonly prefix: string;

  /**
   * Opens the log in `dir`. `applied` is the last generation the database has applied: files
   * of later generations are read into pendingFrames, older ones deleted, and a new generation
   * begins. A damaged file (see LogDamageError) stops the open, unless `salvage` is set: then its
   * intact frames are read, and a copy of the file is kept as `nnt-<generation>.log.damaged`.
   */
  constructor(
    private readonly dir: string,
    applied: number,
    opts: { salvage?: boolean; prefix?: string } = {},
  ) {
    this.prefix = opts.prefix ?? 'nnt';
    let last = applied;
    const generations = logGenerations(dir, this.prefix);
    for (const generation of generations) {
      if (generation <= applied) continue;
      const path = this.pathOf(generation);
      const read = readFrames(path, generation);
      if (read.damage.length > 0) {
        if (!opts.salvage)
          throw new LogDamageError(
            path,
            read.damage,
            read.frames.filter((f) => f.offset >= read.damage[0]!.to),
          );
        const copy = `${path}.damaged`;
        copyFileSync(path, copy);
        this.findings.salvaged.push({ file: path, copy, damage: read.damage, frames: read.frames.length });
      }
      if (read.torn) this.findings.tornTails.push({ file: path, ...read.torn });
      this.pendingFrames.push(...read.frames);
      if (read.frames.length > 0) this.ended.set(generation, read.bytes);
      last = Math.max(last, generation);
    }
    // Only once every file read well: a refused start deletes nothing.
    for (const generation of generations) {
      if (generation <= applied) rmSync(this.pathOf(generation), { force: true });
    }
    for (const generation of generations) {
      // A file without a whole frame holds nothing acknowledged (a start without writes leaves one).
      if (generation > applied && !this.pendingFrames.some((f) => f.generation === generation)) rmSync(this.pathOf(generation), { force: true });
    }
    this.generation = last + 1;
    this.fd = this.create(this.generation);
  }

  pathOf(generation: number): string {
    return join(this.dir, `${this.prefix}-${generation}.log`);
  }

  private create(generation: number): number {
    const fd = openSync(this.pathOf(generation), 'w', 0o600);
    const head = Buffer.alloc(HEADER);
    head.writeUInt32LE(FILE_MAGIC, 0);
    head.writeUInt32LE(VERSION, 4);
    head.writeDoubleLE(generation, 8);
    try {
      writeAll(fd, head, 0);
    } catch (err) {
      closeSync(fd);
      rmSync(this.pathOf(generation), { force: true });
      throw err;
    }
    this.size = HEADER;
    return fd;
  }

  /** Where the next frame goes: every frame logged so far lies before it. */
  position(): LogPosition {
    return { generation: this.generation, offset: this.size };
  }

  /** Appends one write; when this returns the write survives a crash of this process. */
  append(payload: Buffer): void {
    const frame = Buffer.allocUnsafe(FRAME_HEADER);
    frame.writeUInt32LE(FRAME_MAGIC, 0);
    frame.writeUInt32LE(payload.byteLength, 4);
    frame.writeUInt32LE(crc32(payload), 8);
    const before = this.size;
    try {
      writeAll(this.fd, frame, before);
      writeAll(this.fd, payload, before + FRAME_HEADER);
    } catch (err) {
      // No half frame in front of the next one. The writes name their position: the file
      // offset stays past a truncated end, and a write there would leave a hole that ends replay.
      ftruncateSync(this.fd, before);
      throw err;
    }
    this.size = before + FRAME_HEADER + payload.byteLength;
  }

  /**
   * Appends one frame whose payload is `parts` joined, without joining them first (one system
   * call; the checksum runs over the parts in turn). Same promise as append.
   */
  appendParts(parts: readonly Uint8Array[]): void {
    let bytes = 0;
    let crc = 0;
    for (const part of parts) {
      bytes += part.byteLength;
      crc = crc32(part, crc);
    }
    const frame = Buffer.allocUnsafe(FRAME_HEADER);
    frame.writeUInt32LE(FRAME_MAGIC, 0);
    frame.writeUInt32LE(bytes, 4);
    frame.writeUInt32LE(crc, 8);
    const before = this.size;
    try {
      const n = writevSync(this.fd, [frame, ...parts], before);
      if (n !== FRAME_HEADER + bytes) throw Object.assign(new Error(`ingest log: wrote ${n} of ${FRAME_HEADER + bytes} bytes (disk full?)`), { code: 'ENOSPC' });
    } catch (err) {
      ftruncateSync(this.fd, before); // as in append: no half frame in front of the next one
      throw err;
    }
    this.size = before + FRAME_HEADER + bytes;
  }

  /** Starts the next generation; returns the one that ends (everything logged so far). */
  rotate(): number {
    const ended = this.generation;
    const size = this.size;
    const fd = this.create(ended + 1);
    closeSync(this.fd);
    this.fd = fd;
    this.generation = ended + 1;
    this.ended.set(ended, size);
    return ended;
  }

  /** Deletes the files of every generation up to `generation` (the database has applied them). */
  discardThrough(generation: number): void {
    for (const g of logGenerations(this.dir, this.prefix)) if (g <= generation && g !== this.generation) rmSync(this.pathOf(g), { force: true });
    for (const g of this.ended.keys()) if (g <= generation) this.ended.delete(g);
  }

  /** Bytes of log the database has not applied yet (on disk until it has). */
  unappliedBytes(): number {
    let n = this.size;
    for (const b of this.ended.values()) n += b;
    return n;
  }

  close(): void {
    closeSync(this.fd);
  }
}

/** The generations of the log files in `dir`, ascending. */
function logGenerations(dir: string, prefix = 'nnt'): number[] {
  const re = new RegExp(`^${prefix}-(\\d+)\\.log$`);
  return readdirSync(dir)
    .map((name) => re.exec(name))
    .filter((m): m is RegExpExecArray => m !== null)
    .map((m) => Number(m[1]))
    .sort((x, y) => x - y);
}

/** The log files of `dir` that hold at least one frame's worth of bytes. */
export function logFilesWithData(dir: string): string[] {
  return logGenerations(dir)
    .map((g) => join(dir, `nnt-${g}.log`))
    .filter((f) => statSync(f).size > HEADER);
}

/** The intact frame at `at`, or its length when there is one: magic, a length inside the file, and its checksum. */
function frameAt(file: Buffer, at: number): number {
  if (at + FRAME_HEADER > file.length || file.readUInt32LE(at) !== FRAME_MAGIC) return -1;
  const bytes = file.readUInt32LE(at + 4);
  if (at + FRAME_HEADER + bytes > file.length) return -1;
  if (crc32(file.subarray(at + FRAME_HEADER, at + FRAME_HEADER + bytes)) !== file.readUInt32LE(at + 8)) return -1;
  return FRAME_HEADER + bytes;
}

const FRAME_MAGIC_BYTES = Buffer.from(new Uint32Array([FRAME_MAGIC]).buffer);

/** The start of the next intact frame at or after `from`, or -1. */
function nextFrame(file: Buffer, from: number): number {
  for (let at = file.indexOf(FRAME_MAGIC_BYTES, from); at >= 0; at = file.indexOf(FRAME_MAGIC_BYTES, at + 1)) {
    if (frameAt(file, at) > 0) return at;
  }
  return -1;
}

/**
 * The intact frames of one log file. Bytes that are no frame are a torn tail when no intact frame
 * follows them (a write cut off by a crash: never acknowledged, dropped), and damage otherwise.
 */
export function readFrames(path: string, generation: number): { frames: LoggedFrame[]; damage: LogDamage[]; torn: { from: number; bytes: number } | null; bytes: number } {
  const file = readFileSync(path);
  const read = readFramesOf(file, path, generation);
  return { ...read, bytes: file.length };
}

function readFramesOf(file: Buffer, path: string, generation: number): { frames: LoggedFrame[]; damage: LogDamage[]; torn: { from: number; bytes: number } | null } {
  const frames: LoggedFrame[] = [];
  const damage: LogDamage[] = [];
  // A crash between creating the file and writing its header leaves fewer bytes than a header.
  if (file.length < HEADER) return { frames, damage, torn: file.length > 0 ? { from: 0, bytes: file.length } : null };
  let at = HEADER;
  if (file.readUInt32LE(0) !== FILE_MAGIC || file.readDoubleLE(8) !== generation) {
    // A damaged header: damage if intact frames follow, else nothing was ever acknowledged here.
    const next = nextFrame(file, HEADER);
    if (next < 0) return { frames, damage, torn: { from: 0, bytes: file.length } };
    damage.push({ from: 0, to: next, framesBefore: 0 });
    at = next;
  } else if (file.readUInt32LE(4) !== VERSION) {
    throw new Error(`${path}: ingest log version ${file.readUInt32LE(4)}, expected ${VERSION} (written by another tsnode version; the file is kept)`);
  }
  while (at < file.length) {
    const len = frameAt(file, at);
    if (len > 0) {
      // A view, not a copy: every frame of a file is read together and let go together.
      frames.push({ generation, offset: at, payload: file.subarray(at + FRAME_HEADER, at + len) });
      at += len;
      continue;
    }
    const next = nextFrame(file, at + 1);
    if (next < 0) return { frames, damage, torn: { from: at, bytes: file.length - at } };
    damage.push({ from: at, to: next, framesBefore: frames.length });
    at = next;
  }
  return { frames, damage, torn: null };
}

/** A short write (disk full) is an error, not a partial success. */
function writeAll(fd: number, buf: Buffer, position: number): void {
  const n = writeSync(fd, buf, 0, buf.byteLength, position);
  if (n !== buf.byteLength) throw Object.assign(new Error(`ingest log: wrote ${n} of ${buf.byteLength} bytes (disk full?)`), { code: 'ENOSPC' });
}
