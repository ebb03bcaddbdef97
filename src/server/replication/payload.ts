/**
 * The payload of one replication-journal frame (the frame itself, its checksum and the files are
 * the ingest log's: storage/ingest-log.ts). One frame holds the records of one client write that
 * one peer owns, as the JSON the peer's write endpoint takes, without the enclosing brackets, so
 * the replayer can send several frames as one body by joining them with commas (the records are
 * the bytes the client sent, copied once, not encoded again):
 *
 * `[u8 kind][u8 version][f64 journaled at, epoch ms][f64 oldest record offset, epoch s][u32 records][JSON records]`
 */
import type { DataType } from '../../protocol/index.js';

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
  /** The records, JSON objects joined by commas (a view into the frame's payload). */
  json: Buffer;
}

/** One frame's payload: the head, then the JSON pieces joined by commas (each piece one record or a run of them). */
export function encodeEntry(head: EntryHead, json: readonly Uint8Array[]): Buffer {
  let size = HEAD + Math.max(0, json.length - 1);
  for (const piece of json) size += piece.byteLength;
  const out = Buffer.allocUnsafe(size);
  out.writeUInt8(KINDS.indexOf(head.kind), 0);
  out.writeUInt8(VERSION, 1);
  out.writeDoubleLE(head.journaledAt, 2);
  out.writeDoubleLE(head.oldestOffset, 10);
  out.writeUInt32LE(head.records, 18);
  let at = HEAD;
  for (let i = 0; i < json.length; i++) {
    if (i > 0) out[at++] = 0x2c; // ,
    out.set(json[i]!, at);
    at += json[i]!.byteLength;
  }
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
    json: payload.subarray(HEAD),
  };
}
