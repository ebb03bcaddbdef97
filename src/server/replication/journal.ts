/**
 * One peer's replication journal: the entries this node still has to deliver to that peer, on disk
 * in the ingest log's format (a file per generation, checksummed frames; storage/ingest-log.ts) under
 * `<journal dir>/<peer id>/`. An append returns once the frame reached the OS, so an acknowledged
 * write survives a crash of this process, as the node's own ingest log does.
 *
 * Delivery is in order: the replayer takes a batch from the front (`next`), and only once the peer
 * acknowledged it calls `ack`. The most recent entries' payloads also stay in memory (up to
 * KEEP_BYTES), so a replayer that keeps up sends them without reading its file back; older ones, and
 * everything a restarted node finds on disk, are read from their files.
 *
 * The cursor (`cursor.json`: the last generation delivered whole, and the offset reached in the one
 * after it) says where a restarted node resumes. It is written once CURSOR_EVERY_BYTES were
 * delivered since it last was, and at close, not after every batch: a crash sends at most about
 * that much again. A generation delivered whole has its file deleted at once (a restart cannot
 * send what is gone). Delivery is at-least-once anyway (a crash between the peer's answer and the
 * cursor write sends that batch again), and the receiving node applies a record twice to the same
 * effect.
 *
 * Entries a peer refuses for good (4xx) go to `dead-letters.ndjson` beside the journal, with the answer.
 * Damaged frames are skipped (their intact neighbours still replay) and reported through onNotice.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import type { DataType } from '../../protocol/index.js';
import { IngestLog, readFrames, type LogPosition } from '../storage/ingest-log.js';
import { decodeEntry, entryParts, type EntryHead, type JournalEntry } from './payload.js';

const PREFIX = 'journal';
const CURSOR = 'cursor.json';
export const DEAD_LETTERS = 'dead-letters.ndjson';
/** A generation is ended (and its file becomes replayable) once it holds this many bytes. */
const ROTATE_BYTES = 4 * 1024 * 1024;
/** Payload bytes of the newest entries kept in memory for delivery (beyond them, the replayer reads the files). */
const KEEP_BYTES = 16 * 1024 * 1024;
/** Bytes delivered before the cursor is written again: about what a crash may send twice. */
const CURSOR_EVERY_BYTES = 16 * 1024 * 1024;

export interface JournalLimits {
  keepBytes: number;
  cursorEveryBytes: number;
}
/** Entries taken from memory at once for delivery. */
const LOAD_ENTRIES = 1024;
const COMMA = Buffer.from(',');

/** The memory views hold on to: each distinct buffer they are views of, whole. */
function heldBytes(views: readonly Uint8Array[]): number {
  let n = 0;
  const seen = new Set<ArrayBufferLike>();
  for (const v of views) {
    if (seen.has(v.buffer)) continue;
    seen.add(v.buffer);
    n += v.buffer.byteLength;
  }
  return n;
}

/** An entry waiting for delivery: where it is and what the counters need. */
interface Pending {
  kind: DataType;
  generation: number;
  offset: number;
  records: number;
  bytes: number;
  journaledAt: number;
  oldestOffset: number;
  /** The records while they are kept in memory (see KEEP_BYTES); null: read them from the file. */
  json: readonly Uint8Array[] | null;
  /** Memory the kept records hold on to (the buffers they are views of). */
  keptBytes: number;
}

/** A frame read back for delivery. */
export interface Deliverable extends Pending {
  entry: JournalEntry;
}

interface Cursor {
  /** Every generation up to this one is delivered whole. */
  applied: number;
  /** In `generation`, the frames before `offset` are delivered. */
  generation: number;
  offset: number;
}

export class PeerJournal {
  private readonly log: IngestLog;
  private readonly pending: Pending[] = [];
  /** The front entries taken for delivery (from memory or from their file), not yet acknowledged. */
  private loaded: Deliverable[] = [];
  /** The last generation delivered whole (its file deleted). */
  private delivered: number;
  private pendingBytes = 0;
  private pendingRecords = 0;
  private keptBytes = 0;
  /** Bytes delivered since the cursor was last written. */
  private unsavedBytes = 0;
  deadLetters = 0;

  constructor(
    readonly dir: string,
    private readonly onNotice: (message: string) => void,
    private readonly limits: JournalLimits = { keepBytes: KEEP_BYTES, cursorEveryBytes: CURSOR_EVERY_BYTES },
  ) {
    mkdirSync(dir, { recursive: true });
    const cursor = readCursor(join(dir, CURSOR));
    this.delivered = cursor.applied;
    this.log = new IngestLog(dir, cursor.applied, { salvage: true, prefix: PREFIX });
    for (const t of this.log.findings.tornTails) onNotice(`replication journal ${t.file}: dropped ${t.bytes} bytes of an append a crash cut off (never acknowledged)`);
    for (const s of this.log.findings.salvaged)
      onNotice(`replication journal ${s.file} is damaged: ${s.frames} intact frames replay, the damaged bytes are skipped (a copy is kept as ${s.copy})`);
    for (const f of this.log.pendingFrames) {
      if (f.generation === cursor.generation && f.offset < cursor.offset) continue;
      this.track(f, f.payload.byteLength, decodeEntry(f.payload), null);
    }
    this.log.pendingFrames.length = 0;
    this.deadLetters = countLines(join(dir, DEAD_LETTERS));
    // The cursor on disk may be older than the files (it is written now and then): written afresh
    // now, it never names a generation this process appends to with offsets it would skip.
    this.moveCursor(true);
  }

  private track(at: LogPosition, bytes: number, entry: EntryHead | null, keep: readonly Uint8Array[] | null): Pending | null {
    if (!entry) {
      this.onNotice(`replication journal ${this.log.pathOf(at.generation)}: the frame at ${at.offset} is no journal entry (another version?); skipped`);
      return null;
    }
    const p: Pending = {
      kind: entry.kind,
      generation: at.generation,
      offset: at.offset,
      records: entry.records,
      bytes,
      journaledAt: entry.journaledAt,
      oldestOffset: entry.oldestOffset,
      json: keep,
      keptBytes: keep ? heldBytes(keep) : 0,
    };
    this.keptBytes += p.keptBytes;
    this.pending.push(p);
    this.pendingBytes += p.bytes;
    this.pendingRecords += p.records;
    return p;
  }

  /**
   * Journals one entry, its records the JSON pieces `json` (joined by commas); when this returns it
   * survives a crash of this process (throws ENOSPC and keeps nothing when the disk is full).
   */
  append(head: EntryHead, json: readonly Uint8Array[]): void {
    // Many small pieces (records scattered through a write) are joined: one copy beats many tiny writes.
    const pieces = json.length > 64 ? [Buffer.concat(json.flatMap((p, i) => (i > 0 ? [COMMA, p] : [p])))] : json;
    const parts = entryParts(head, pieces);
    const at = this.log.position();
    this.log.appendParts(parts);
    let bytes = 0;
    for (const p of parts) bytes += p.byteLength;
    const keep = this.keptBytes + heldBytes(pieces) <= this.limits.keepBytes ? pieces : null;
    this.track(at, bytes, head, keep);
    if (at.offset + bytes > ROTATE_BYTES) this.log.rotate();
  }

  get records(): number {
    return this.pendingRecords;
  }

  get bytes(): number {
    return this.pendingBytes;
  }

  /** The oldest entry not delivered yet. */
  get oldest(): { journaledAt: number; oldestOffset: number } | null {
    return this.pending[0] ?? null;
  }

  /**
   * The next entries to deliver, in order, all of one kind, up to `maxRecords` records and
   * `maxBytes` bytes (at least one entry); empty when nothing is pending.
   */
  next(maxRecords: number, maxBytes: number): Deliverable[] {
    if (this.loaded.length === 0 && !this.load()) return [];
    const out: Deliverable[] = [];
    let records = 0;
    let bytes = 0;
    for (const d of this.loaded) {
      if (out.length > 0 && (d.entry.kind !== out[0]!.entry.kind || records + d.records > maxRecords || bytes + d.bytes > maxBytes)) break;
      out.push(d);
      records += d.records;
      bytes += d.bytes;
    }
    return out;
  }

  /** Takes the front entries for delivery: from memory while they are kept there, else from their file. */
  private load(): boolean {
    const first = this.pending[0];
    if (!first) return false;
    if (!first.json) return this.loadGeneration(first.generation);
    this.loaded = [];
    for (const p of this.pending) {
      if (!p.json || this.loaded.length >= LOAD_ENTRIES) break;
      this.loaded.push({ ...p, entry: { kind: p.kind, journaledAt: p.journaledAt, oldestOffset: p.oldestOffset, records: p.records, json: p.json } });
    }
    return true;
  }

  /** Reads generation g, the oldest pending entry's (ending it first if it is the one appended to). */
  private loadGeneration(g: number): boolean {
    if (g === this.log.generation) this.log.rotate();
    const read = readFrames(this.log.pathOf(g), g);
    if (read.damage.length > 0)
      this.onNotice(
        `replication journal ${this.log.pathOf(g)} is damaged at ${read.damage.map((d) => `${d.from}-${d.to}`).join(', ')}: the damaged bytes are skipped, the intact frames replay`,
      );
    const wanted = new Map<number, Pending>();
    let n = 0;
    while (n < this.pending.length && this.pending[n]!.generation === g) {
      wanted.set(this.pending[n]!.offset, this.pending[n]!);
      n++;
    }
    const found = new Set<number>();
    this.loaded = [];
    for (const f of read.frames) {
      const p = wanted.get(f.offset);
      const entry = p ? decodeEntry(f.payload) : null;
      if (!p || !entry) continue;
      found.add(f.offset);
      this.loaded.push({ ...p, entry });
    }
    // Entries their file no longer holds intact: lost to damage, said so, and no longer counted.
    const lost = [...wanted.values()].filter((p) => !found.has(p.offset));
    if (lost.length > 0) {
      this.onNotice(`replication journal ${this.log.pathOf(g)}: ${lost.length} entries (${lost.reduce((s, p) => s + p.records, 0)} records) are damaged and cannot be delivered`);
      this.drop(new Set(lost));
      this.moveCursor();
    }
    return this.loaded.length > 0 || this.load();
  }

  private drop(gone: Set<Pending>): void {
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (!gone.has(p)) continue;
      this.pending.splice(i, 1);
      this.forget(p);
    }
  }

  private forget(p: Pending): void {
    this.pendingBytes -= p.bytes;
    this.pendingRecords -= p.records;
    this.unsavedBytes += p.bytes;
    this.keptBytes -= p.keptBytes;
  }

  /** The peer took these entries (the front of next()): they are delivered. */
  ack(delivered: readonly Deliverable[]): void {
    if (delivered.length === 0) return;
    for (const d of delivered) {
      const head = this.pending.shift()!;
      this.forget(head);
      if (head.offset !== d.offset || head.generation !== d.generation) throw new Error('replication journal: acknowledged out of order');
    }
    this.loaded.splice(0, delivered.length);
    this.moveCursor();
  }

  /**
   * The front entry, handled: the records the peer refused for good (each with its answer) go to the
   * dead-letter file, then the entry leaves the journal. An empty `refused` just acknowledges it.
   */
  settle(d: Deliverable, refused: ReadonlyArray<{ record: unknown; status: number; answer: string }>): void {
    for (const r of refused) {
      const line = JSON.stringify({ at: new Date().toISOString(), status: r.status, answer: r.answer, kind: d.entry.kind, records: [r.record] });
      appendFileSync(join(this.dir, DEAD_LETTERS), `${line}\n`, { mode: 0o600 });
      this.deadLetters++;
    }
    this.ack([d]);
  }

  /**
   * The front moved: deletes the files of generations delivered whole, and writes the cursor when
   * enough was delivered since it last was, or when `force`d.
   */
  private moveCursor(force = false): void {
    const front = this.pending[0];
    const at = front ?? this.log.position();
    const c: Cursor = { applied: at.generation - 1, generation: at.generation, offset: at.offset };
    if (c.applied > this.delivered) {
      this.log.discardThrough(c.applied);
      this.delivered = c.applied;
    }
    if (force || this.unsavedBytes >= this.limits.cursorEveryBytes) this.saveCursor(c);
  }

  private saveCursor(c: Cursor): void {
    this.unsavedBytes = 0;
    const file = join(this.dir, CURSOR);
    writeFileSync(`${file}.tmp`, JSON.stringify(c), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }

  close(): void {
    this.moveCursor(true);
    this.log.close();
  }
}

function readCursor(file: string): Cursor {
  if (!existsSync(file)) return { applied: 0, generation: 1, offset: 0 };
  const c = JSON.parse(readFileSync(file, 'utf8')) as Cursor;
  if (![c.applied, c.generation, c.offset].every((n) => Number.isSafeInteger(n) && n >= 0)) throw new Error(`${file} is not a replication cursor`);
  return c;
}

function countLines(file: string): number {
  if (!existsSync(file)) return 0;
  let n = 0;
  for (const b of readFileSync(file)) if (b === 0x0a) n++;
  return n;
}
