import { TsnodeError } from '../tsnode-error.js';
import { createReadStream, promises as fsp } from 'node:fs';
import { createRequire } from 'node:module';
import type { Readable } from 'node:stream';
import type * as Zlib from 'node:zlib';
import { JsonArraySplitter } from './json-array-splitter.js';
import { NdjsonSplitter, spanRecords } from './ndjson-splitter.js';
import { chunkSize, rawChunk, RecordSyntaxError, type RawRecord, type RecordChunk, type SplitterStart } from './splitter.js';

// node:zlib is required only for gzip input: loading it costs every plain-file write ~2 ms of start-up.
const require = createRequire(import.meta.url);

export type RecordFormat = 'json' | 'ndjson';
export type FormatChoice = RecordFormat | 'auto';

/** One input: a path, or `-` for standard input. */
export interface SourceInfo {
  /** As the user named it (`-` for stdin). */
  name: string;
  stdin: boolean;
  gzip: boolean;
  /** Bytes on disk (compressed size for .gz); undefined for stdin. */
  size: number | undefined;
  mtimeMs: number | undefined;
}

/** A problem opening or reading an input (missing, unreadable, bad gzip). */
export class SourceError extends TsnodeError {
  declare readonly code: 'source';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super('source', `${file}: ${message}`);
    this.name = 'SourceError';
  }
}

export const READ_CHUNK_BYTES = 256 * 1024;

/** Format from the name alone: `.json`, `.ndjson`, `.jsonl` (also before `.gz`). */
export function formatFromName(name: string): RecordFormat | undefined {
  const base = name.toLowerCase().replace(/\.gz$/, '');
  if (base.endsWith('.json')) return 'json';
  if (base.endsWith('.ndjson') || base.endsWith('.jsonl')) return 'ndjson';
  return undefined;
}

/** Format from the first non-space byte: `[` is a JSON array, `{` is NDJSON. */
export function formatFromBytes(bytes: Uint8Array): RecordFormat | undefined {
  for (const b of bytes) {
    if (b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09 || b === 0xef || b === 0xbb || b === 0xbf) continue;
    if (b === 0x5b) return 'json';
    if (b === 0x7b) return 'ndjson';
    return undefined;
  }
  return undefined;
}

export async function statSource(name: string): Promise<SourceInfo> {
  if (name === '-') return { name, stdin: true, gzip: false, size: undefined, mtimeMs: undefined };
  let st;
  try {
    st = await fsp.stat(name);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new SourceError(name, code === 'ENOENT' ? 'no such file' : `cannot read: ${(err as Error).message}`);
  }
  if (!st.isFile() && !st.isFIFO()) throw new SourceError(name, 'is not a file');
  let gzip = /\.gz$/i.test(name);
  if (!gzip && st.isFile() && st.size >= 2) {
    const fh = await fsp.open(name, 'r');
    try {
      const head = Buffer.alloc(2);
      await fh.read(head, 0, 2, 0);
      gzip = head[0] === 0x1f && head[1] === 0x8b;
    } finally {
      await fh.close();
    }
  }
  return { name, stdin: false, gzip, size: st.isFile() ? st.size : undefined, mtimeMs: st.isFile() ? st.mtimeMs : undefined };
}

export interface ReadOptions {
  format?: FormatChoice;
  /** Continue after an acknowledged prefix (resume). */
  start?: SplitterStart;
  /** Standard input, for `-` (tests pass their own). */
  stdin?: Readable;
  signal?: AbortSignal;
}

/** What `readRecords` learned about an input once it started reading it. */
export interface ReadHandle {
  format: RecordFormat;
  /** Whether the reader seeked straight to `start.byte` (plain files) instead of skipping records. */
  seeked: boolean;
  /** Bytes of the input consumed so far (compressed bytes for gzip), counting a seeked-over prefix. */
  bytesRead(): number;
  /** Records yielded in groups (one group per chunk read) to keep per-record overhead low. */
  groups: AsyncGenerator<RawRecord[], void, undefined>;
}

/** An input opened by openRecordChunks: its records by chunk, as the reader completed them. */
export interface ChunkHandle extends Omit<ReadHandle, 'groups'> {
  /** Each chunk valid only until the next is asked for (RecordChunk). */
  chunks: AsyncGenerator<RecordChunk, void, undefined>;
}

/** A read error of one input in words: gzip damage named as such, anything else as a failed read. */
function readFailure(name: string, err: unknown): SourceError {
  if (err instanceof SourceError || err instanceof RecordSyntaxError) return err as SourceError;
  const e = err as NodeJS.ErrnoException;
  if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR' || e.code === 'ERR_ZLIB_INITIALIZATION_FAILED' || /unexpected end of file/i.test(e.message ?? '')) {
    return new SourceError(name, `not valid gzip, or truncated: ${e.message}`);
  }
  return new SourceError(name, `read failed: ${e.message ?? String(err)}`);
}

const isBlank = (b: number): boolean => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09;

/**
 * The input's format: `known` (a flag, the name, a resume) or, failing that, its first non-blank
 * byte, reading on past leading blank chunks. Returns the bytes it read, which the splitter takes first.
 */
async function detectFormat(
  name: string,
  known: RecordFormat | undefined,
  next: () => Promise<Buffer | undefined>,
  close: () => Promise<void>,
): Promise<{ format: RecordFormat; first: Buffer | undefined }> {
  let first = await next();
  if (known !== undefined) return { format: known, first };
  let format: RecordFormat | undefined;
  while (first !== undefined && format === undefined) {
    format = formatFromBytes(first);
    if (format !== undefined || !first.every(isBlank)) break;
    const kept = Buffer.from(first); // the next read may reuse first's memory
    const more = await next();
    if (more === undefined) break;
    first = Buffer.concat([kept, more]);
  }
  if (format !== undefined) return { format, first };
  await close();
  if (first === undefined || first.every(isBlank)) throw new SourceError(name, 'is empty (no records)');
  throw new SourceError(name, 'is neither a JSON array (starts with "[") nor NDJSON (starts with "{")');
}

/**
 * Opens one input for a consumer that checks records on their bytes (the write pipeline): as
 * openRecords, but by RecordChunk, so that whole ASCII lines cost no object or string each.
 */
export async function openRecordChunks(info: SourceInfo, opts: ReadOptions = {}): Promise<ChunkHandle> {
  const start = opts.start && opts.start.record > 0 ? opts.start : undefined;
  const canSeek = !info.stdin && !info.gzip && start !== undefined;
  const chunks = info.stdin || info.gzip ? streamChunks(info, opts.stdin) : await fileChunks(info.name, canSeek ? start.byte : 0);
  const next = async (): Promise<Buffer | undefined> => {
    try {
      return await chunks.next();
    } catch (err) {
      throw readFailure(info.name, err);
    }
  };
  const named: RecordFormat | undefined = opts.format && opts.format !== 'auto' ? opts.format : formatFromName(info.stdin ? '' : info.name);
  // A resumed input is read from its saved byte on: its format was stored (ndjson if not, in theory).
  const { format, first } = await detectFormat(info.name, named ?? (canSeek ? 'ndjson' : undefined), next, () => chunks.close());
  const splitterStart = canSeek ? start : undefined;
  const splitter = format === 'json' ? new JsonArraySplitter(info.name, splitterStart) : new NdjsonSplitter(info.name, splitterStart);
  const skipThrough = canSeek ? 0 : (start?.record ?? 0);
  // The last record number the input held, to tell a resume position past its end.
  let seen = 0;
  const skipping = (c: RecordChunk): RecordChunk => {
    if (c.spanCount > 0) seen = c.spanRecord + c.spanCount - 1;
    else if (c.raws.length > 0) seen = c.raws[c.raws.length - 1]!.record;
    if (skipThrough > 0) {
      // The raws come before the spans: a raw past the skip point means no span is skipped.
      if (c.raws.length > 0 && c.raws[0]!.record <= skipThrough) c.raws = c.raws.filter((r) => r.record > skipThrough);
      if (c.spanCount > 0) c.spanFirst = Math.min(c.spanCount, Math.max(0, skipThrough - c.spanRecord + 1));
    }
    return c;
  };
  const push = (bytes: Buffer): RecordChunk => skipping(splitter instanceof NdjsonSplitter ? splitter.pushChunk(bytes) : rawChunk(splitter.push(bytes)));
  const chunked = (async function* (): AsyncGenerator<RecordChunk, void, undefined> {
    try {
      let bytes = first;
      while (bytes !== undefined) {
        if (opts.signal?.aborted) return;
        const c = push(bytes);
        if (chunkSize(c) > 0) yield c;
        bytes = await next();
      }
      const last = skipping(rawChunk(splitter.end()));
      if (chunkSize(last) > 0) yield last;
      if (seen < skipThrough) {
        // Skipping "everything" would report a complete run that wrote nothing.
        throw new SourceError(
          info.name,
          `the resume position is after record ${skipThrough}, but the input holds only ${seen} record${seen === 1 ? '' : 's'}: the state file belongs to another input`,
        );
      }
    } finally {
      await chunks.close();
    }
  })();
  return { format, seeked: canSeek, chunks: chunked, bytesRead: () => chunks.bytesRead() };
}

/**
 * Opens one input and returns its records as a stream of groups. Memory stays bounded by the
 * chunk size plus one record: nothing reads ahead unless the consumer asks for the next group.
 * With `start`, plain files are opened at `start.byte`; gzip and stdin are re-read and the
 * records up to `start.record` skipped.
 */
export async function openRecords(info: SourceInfo, opts: ReadOptions = {}): Promise<ReadHandle> {
  const { chunks, ...handle } = await openRecordChunks(info, opts);
  const groups = (async function* (): AsyncGenerator<RawRecord[], void, undefined> {
    for await (const c of chunks) yield spanRecords(c);
  })();
  return { ...handle, groups };
}

/** Chunks of one input; a chunk is valid only until the next call (plain files reuse one buffer). */
interface Chunks {
  next(): Promise<Buffer | undefined>;
  close(): Promise<void>;
  /** Input bytes consumed (compressed for gzip), counting a seeked-over prefix. */
  bytesRead(): number;
}

/**
 * A plain file read into one reused buffer: no per-chunk allocation, so a long replay does not
 * leave a trail of dead read buffers (the splitter copies what it keeps).
 */
async function fileChunks(name: string, from: number): Promise<Chunks> {
  const fh = await fsp.open(name, 'r').catch((err: unknown) => {
    throw new SourceError(name, `cannot read: ${(err as Error).message}`);
  });
  const buf = Buffer.allocUnsafeSlow(READ_CHUNK_BYTES);
  let pos = from;
  let closed = false;
  return {
    async next() {
      if (closed) return undefined;
      const { bytesRead } = await fh.read(buf, 0, buf.length, pos);
      if (bytesRead === 0) return undefined;
      pos += bytesRead;
      return buf.subarray(0, bytesRead);
    },
    async close() {
      if (!closed) {
        closed = true;
        await fh.close();
      }
    },
    bytesRead: () => pos,
  };
}

function streamChunks(info: SourceInfo, stdin: Readable | undefined): Chunks {
  const raw: Readable = info.stdin ? (stdin ?? process.stdin) : createReadStream(info.name, { highWaterMark: READ_CHUNK_BYTES });
  let stream: Readable = raw;
  let counted = 0;
  if (info.gzip) {
    const { createGunzip } = require('node:zlib') as typeof Zlib;
    const gunzip = createGunzip({ chunkSize: READ_CHUNK_BYTES });
    raw.on('error', (err) => gunzip.destroy(err));
    raw.on('data', (c: Buffer) => (counted += c.length));
    stream = raw.pipe(gunzip);
  }
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  return {
    async next() {
      const r = await iterator.next();
      if (r.done) return undefined;
      if (!info.gzip) counted += r.value.length;
      return r.value;
    },
    close: () => closeStream(stream, raw),
    bytesRead: () => counted,
  };
}

async function closeStream(stream: Readable, raw: Readable): Promise<void> {
  if (raw === process.stdin) {
    raw.pause();
    if (stream !== raw) raw.unpipe(stream as unknown as NodeJS.WritableStream);
    return;
  }
  if (!stream.destroyed) stream.destroy();
  if (!raw.destroyed) raw.destroy();
}
