/**
 * One peer's replication journal: the entries this node still has to deliver to that peer, on disk
 * in the ingest log's format (a file per generation, checksummed frames; storage/ingest-log.ts) under
 * `<journal dir>/<peer id>/`. An append returns once the frame reached the OS, so an acknowledged
 * write survives a crash of this process, as the node's own ingest log does.
 *
 * Delivery is in order: the replayer takes a batch from the front (`next`), and only once the peer
 * acknowledged it calls `ack`, which moves the cursor (`cursor.json`: the last generation delivered
 * whole, and the offset reached in the one after it) and deletes generations delivered whole. A
 * crash between the peer's answer and the cursor write sends that batch again: delivery is
 * at-least-once, and the receiving node applies a record twice to the same effect.
 *
 * Entries a peer refuses for good (4xx) go to `dead-letters.ndjson` beside the journal, with the answer.
 * Damaged frames are skipped (their intact neighbours still replay) and reported through onNotice.
 */
import { appendFileSync, existsSync, mkdirSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { IngestLog, readFrames } from '../storage/ingest-log.js';
import { decodeEntry, encodeEntry, type JournalEntry } from './payload.js';

const PREFIX = 'journal';
const CURSOR = 'cursor.json';
export const DEAD_LETTERS = 'dead-letters.ndjson';
/** A generation is ended (and its file becomes replayable) once it holds this many bytes. */
const ROTATE_BYTES = 4 * 1024 * 1024;

/** An entry waiting for delivery: where it is and what the counters need. */
interface Pending {
  generation: number;
  offset: number;
  records: number;
  bytes: number;
  journaledAt: number;
  oldestOffset: number;
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
  /** Frames read from the generation being delivered, not yet acknowledged. */
  private loaded: Deliverable[] = [];
  private loadedGeneration = -1;
  private cursor: Cursor;
  private pendingBytes = 0;
  private pendingRecords = 0;
  deadLetters = 0;

  constructor(
    readonly dir: string,
    private readonly onNotice: (message: string) => void,
  ) {
    mkdirSync(dir, { recursive: true });
    this.cursor = readCursor(join(dir, CURSOR));
    this.log = new IngestLog(dir, this.cursor.applied, { salvage: true, prefix: PREFIX });
    for (const t of this.log.findings.tornTails) onNotice(`replication journal ${t.file}: dropped ${t.bytes} bytes of an append a crash cut off (never acknowledged)`);
    for (const s of this.log.findings.salvaged)
      onNotice(`replication journal ${s.file} is damaged: ${s.frames} intact frames replay, the damaged bytes are skipped (a copy is kept as ${s.copy})`);
    for (const f of this.log.pendingFrames) {
      if (f.generation === this.cursor.generation && f.offset < this.cursor.offset) continue;
      this.track(f, decodeEntry(f.payload));
    }
    this.log.pendingFrames.length = 0;
    this.deadLetters = countLines(join(dir, DEAD_LETTERS));
  }

  private track(f: { generation: number; offset: number; payload: Buffer }, entry: JournalEntry | null): Pending | null {
    if (!entry) {
      this.onNotice(`replication journal ${this.log.pathOf(f.generation)}: the frame at ${f.offset} is no journal entry (another version?); skipped`);
      return null;
    }
    const p: Pending = {
      generation: f.generation,
      offset: f.offset,
      records: entry.records,
      bytes: f.payload.byteLength,
      journaledAt: entry.journaledAt,
      oldestOffset: entry.oldestOffset,
    };
    this.pending.push(p);
    this.pendingBytes += p.bytes;
    this.pendingRecords += p.records;
    return p;
  }

  /** Journals one entry; when this returns it survives a crash of this process (throws ENOSPC and keeps nothing when the disk is full). */
  append(entry: JournalEntry): void {
    const payload = encodeEntry(entry);
    const at = this.log.position();
    this.log.append(payload);
    this.track({ ...at, payload }, entry);
    if (at.offset + payload.byteLength > ROTATE_BYTES) this.log.rotate();
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

  /** Reads the generation of the oldest pending entry (ending it first if it is the one appended to). */
  private load(): boolean {
    const first = this.pending[0];
    if (!first) return false;
    const g = first.generation;
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
    }
    this.loadedGeneration = g;
    if (this.loaded.length === 0) this.finishGeneration(g);
    return this.loaded.length > 0 || this.load();
  }

  private drop(gone: Set<Pending>): void {
    for (let i = this.pending.length - 1; i >= 0; i--) {
      const p = this.pending[i]!;
      if (!gone.has(p)) continue;
      this.pending.splice(i, 1);
      this.pendingBytes -= p.bytes;
      this.pendingRecords -= p.records;
    }
  }

  /** The peer took these entries (the front of next()): they are delivered. */
  ack(delivered: readonly Deliverable[]): void {
    if (delivered.length === 0) return;
    for (const d of delivered) {
      const head = this.pending.shift()!;
      this.pendingBytes -= head.bytes;
      this.pendingRecords -= head.records;
      if (head.offset !== d.offset || head.generation !== d.generation) throw new Error('replication journal: acknowledged out of order');
    }
    this.loaded.splice(0, delivered.length);
    const last = delivered[delivered.length - 1]!;
    if (this.loaded.length === 0) this.finishGeneration(last.generation);
    else this.saveCursor({ ...this.cursor, generation: last.generation, offset: last.offset + 1 });
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

  private finishGeneration(g: number): void {
    this.loaded = [];
    this.loadedGeneration = -1;
    this.saveCursor({ applied: g, generation: g + 1, offset: 0 });
    this.log.discardThrough(g);
  }

  private saveCursor(c: Cursor): void {
    this.cursor = c;
    const file = join(this.dir, CURSOR);
    writeFileSync(`${file}.tmp`, JSON.stringify(c), { mode: 0o600 });
    renameSync(`${file}.tmp`, file);
  }

  close(): void {
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
