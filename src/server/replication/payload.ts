/**
 * The payload of one replication-journal frame (the frame itself, its checksum and the files are
 * the ingest log's: storage/ingest-log.ts). One frame holds the records of one client write that
 * one peer owns, as the JSON the peer's write endpoint takes, without the enclosing brackets, so
 * the replayer can send several frames as one body by joining them with commas:
 *
 * `[u8 kind][u8 version][f64 journaled at, epoch ms][f64 oldest record offset, epoch s][u32 records][JSON records]`
 */
import type { DataType } from '../../protocol/index.js';

// The kind byte of a frame on disk and on the wire: its own list, so DATA_TYPES may grow or reorder.
const KINDS: readonly DataType[] = ['nnt', 'text', 'histogram'];
const VERSION = 1;
const HEAD = 22;

export interface JournalEntry {
  kind: DataType;
  /** When the entry was journaled (epoch ms): its age is the peer's lag. */
  journaledAt: number;
  /** The smallest record time in it (epoch seconds). */
  oldestOffset: number;
  records: number;
  /** The records, JSON objects joined by commas. */
  json: string;
}

export function encodeEntry(e: JournalEntry): Buffer {
  const json = Buffer.from(e.json, 'utf8');
  const out = Buffer.allocUnsafe(HEAD + json.byteLength);
  out.writeUInt8(KINDS.indexOf(e.kind), 0);
  out.writeUInt8(VERSION, 1);
  out.writeDoubleLE(e.journaledAt, 2);
  out.writeDoubleLE(e.oldestOffset, 10);
  out.writeUInt32LE(e.records, 18);
  json.copy(out, HEAD);
  return out;
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
    json: payload.toString('utf8', HEAD),
  };
}
