import { createReadStream, promises as fsp } from 'node:fs';
import type { Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import { JsonArraySplitter, NdjsonSplitter, RecordSyntaxError, type RawRecord, type Splitter, type SplitterStart } from './splitter.js';

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
export class SourceError extends Error {
  readonly code = 'source';
  constructor(
    readonly file: string,
    message: string,
  ) {
    super(`${file}: ${message}`);
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

/**
 * Opens one input and returns its records as a stream of groups. Memory stays bounded by the
 * chunk size plus one record: nothing reads ahead unless the consumer asks for the next group.
 * With `start`, plain files are opened at `start.byte`; gzip and stdin are re-read and the
 * records up to `start.record` skipped.
 */
export async function openRecords(info: SourceInfo, opts: ReadOptions = {}): Promise<ReadHandle> {
  const start = opts.start && opts.start.record > 0 ? opts.start : undefined;
  const canSeek = !info.stdin && !info.gzip && start !== undefined;
  let raw: Readable;
  if (info.stdin) {
    raw = opts.stdin ?? process.stdin;
  } else {
    raw = createReadStream(info.name, { highWaterMark: READ_CHUNK_BYTES, ...(canSeek ? { start: start.byte } : {}) });
  }
  let stream: Readable = raw;
  if (info.gzip) {
    const gunzip = createGunzip({ chunkSize: 256 * 1024 });
    raw.on('error', (err) => gunzip.destroy(err));
    stream = raw.pipe(gunzip);
  }
  let plainBytes = 0;
  const iterator = stream[Symbol.asyncIterator]() as AsyncIterator<Buffer>;
  const failure = (err: unknown): SourceError => {
    if (err instanceof SourceError || err instanceof RecordSyntaxError) return err as SourceError;
    const e = err as NodeJS.ErrnoException;
    if (e.code === 'Z_DATA_ERROR' || e.code === 'Z_BUF_ERROR' || e.code === 'ERR_ZLIB_INITIALIZATION_FAILED' || /unexpected end of file/i.test(e.message ?? '')) {
      return new SourceError(info.name, `not valid gzip, or truncated: ${e.message}`);
    }
    return new SourceError(info.name, `read failed: ${e.message ?? String(err)}`);
  };
  const next = async (): Promise<Buffer | undefined> => {
    try {
      const r = await iterator.next();
      if (!r.done) plainBytes += r.value.length;
      return r.done ? undefined : r.value;
    } catch (err) {
      throw failure(err);
    }
  };
  // Peek at the first chunk to detect the format (when --format and the name do not say).
  let first = await next();
  let format: RecordFormat | undefined = opts.format && opts.format !== 'auto' ? opts.format : formatFromName(info.stdin ? '' : info.name);
  if (format === undefined) {
    if (canSeek) format = 'ndjson'; // unreachable in practice: resume stores the format it used
    while (first !== undefined && format === undefined) {
      format = formatFromBytes(first);
      if (format !== undefined) break;
      if (first.some((b) => b !== 0x20 && b !== 0x0a && b !== 0x0d && b !== 0x09)) break;
      const more = await next();
      if (more === undefined) break;
      first = Buffer.concat([first, more]);
    }
    if (format === undefined) {
      await closeStream(stream, raw);
      if (first === undefined || first.every((b) => b === 0x20 || b === 0x0a || b === 0x0d || b === 0x09)) {
        throw new SourceError(info.name, 'is empty (no records)');
      }
      throw new SourceError(info.name, 'is neither a JSON array (starts with "[") nor NDJSON (starts with "{")', );
    }
  }
  const splitterStart = canSeek ? start : undefined;
  const splitter: Splitter = format === 'json' ? new JsonArraySplitter(info.name, splitterStart) : new NdjsonSplitter(info.name, splitterStart);
  const skipThrough = canSeek ? 0 : (start?.record ?? 0);
  const groups = (async function* (): AsyncGenerator<RawRecord[], void, undefined> {
    try {
      let chunk = first;
      while (chunk !== undefined) {
        if (opts.signal?.aborted) return;
        let recs = splitter.push(chunk);
        if (skipThrough > 0 && recs.length > 0 && recs[0]!.record <= skipThrough) recs = recs.filter((r) => r.record > skipThrough);
        if (recs.length > 0) yield recs;
        chunk = await next();
      }
      let last = splitter.end();
      if (skipThrough > 0) last = last.filter((r) => r.record > skipThrough);
      if (last.length > 0) yield last;
    } finally {
      await closeStream(stream, raw);
    }
  })();
  const skipped = canSeek ? start.byte : 0;
  const bytesRead = info.gzip
    ? () => (raw as Readable & { bytesRead?: number }).bytesRead ?? 0
    : () => skipped + plainBytes;
  return { format, seeked: canSeek, groups, bytesRead };
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
