/**
 * The payload of one replication-journal frame (the frame itself, its checksum and the files are
 * the ingest log's: storage/ingest-log.ts). One frame holds the records of one client write that
 * one peer owns, as the JSON the peer's write endpoint takes, without the enclosing brackets, so
 * the replayer can send several frames as one body by joining them with commas (the records are
 * the bytes the client sent, not encoded again: the frame is written from the request's body):
 *
 * `[u8 kind][u8 version][f64 journaled at, epoch ms][f64 oldest record offset, epoch s][u32 records][JSON records]`
 */
import type { DataType } from '../../protocol/index.js';

// The kind byte of a frame on disk and on the wire: its own list, so DATA_TYPES may grow or reorder.
const KINDS: readonly DataType[] = ['nnt', 'text', 'histogram'];
const VERSION = 1;
const HEAD = 22;

/** What an entry says about its records. */
export interface EntryHead {
  kind: DataType;
  /** When the entry was journaled (epoch ms): its age is the peer's lag. */
  journaledAt: number;
  /** The smallest record time in it (epoch seconds). */
  oldestOffset: number;
  records: number;
}

export interface JournalEntry extends EntryHead {
  /** The records: JSON pieces (one record or a run of them each) to be joined by commas. */
  json: readonly Uint8Array[];
}

const COMMA = Buffer.from(',');
const OPEN = Buffer.from('[');
const CLOSE = Buffer.from(']');

/** A frame's payload in parts: the head, then the JSON pieces with commas between them. */
export function entryParts(head: EntryHead, json: readonly Uint8Array[]): Uint8Array[] {
  const out = Buffer.allocUnsafe(HEAD);
  out.writeUInt8(KINDS.indexOf(head.kind), 0);
  out.writeUInt8(VERSION, 1);
  out.writeDoubleLE(head.journaledAt, 2);
  out.writeDoubleLE(head.oldestOffset, 10);
  out.writeUInt32LE(head.records, 18);
  const parts: Uint8Array[] = [out];
  for (let i = 0; i < json.length; i++) {
    if (i > 0) parts.push(COMMA);
    parts.push(json[i]!);
  }
  return parts;
}

/** The entry of a frame; null when the payload is not one (another version, a bad kind). */
export function decodeEntry(payload: Buffer): JournalEntry | null {
  if (payload.byteLength < HEAD || payload.readUInt8(1) !== VERSION) return null;
  const kind = KINDS[payload.readUInt8(0)];
  if (kind === undefined) return null;
  return {
    kind,
    journaledAt: payload.readDoubleLE(2),
    oldestOffset: payload.readDoubleLE(10),
    records: payload.readUInt32LE(18),
    json: [payload.subarray(HEAD)],
  };
}

/** A JSON array of the records of these entries, in pieces (nothing copied): a replayed batch's body. */
export function recordsArray(entries: readonly JournalEntry[]): Uint8Array[] {
  const out: Uint8Array[] = [OPEN];
  for (const e of entries) {
    for (const piece of e.json) {
      if (out.length > 1) out.push(COMMA);
      out.push(piece);
    }
  }
  out.push(CLOSE);
  return out;
}
