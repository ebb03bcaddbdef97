/**
 * The rejects file: NDJSON lines for the records a run could not write (invalid, refused by a
 * node, in a batch that failed after retries), each naming its input, record and reason. A
 * resumed run appends to it and does not write a line twice.
 */
import { closeSync, constants, fstatSync, ftruncateSync, openSync, readSync, writeSync } from 'node:fs';
import type { RejectEntry } from '../records/batch.js';
import { openRecords, statSource } from '../records/reader.js';
import { openPrivate } from './private-file.js';

/**
 * Cuts a rejects file back to its last newline. A run killed while appending a line leaves it
 * torn; the next line appended would be glued to it (neither would parse). The record whose line
 * it was lies past the saved position (a reject is written before its batch counts as done), so
 * the resumed run writes it again, whole.
 */
function dropTornTail(path: string): void {
  // Never through a link planted at the path (see private-file.ts).
  const fd = openSync(path, constants.O_RDWR | constants.O_NOFOLLOW);
  try {
    const size = fstatSync(fd).size;
    const buf = Buffer.alloc(64 * 1024);
    let end = size;
    while (end > 0) {
      const from = Math.max(0, end - buf.length);
      readSync(fd, buf, 0, end - from, from);
      const nl = buf.subarray(0, end - from).lastIndexOf(0x0a);
      if (nl >= 0) {
        end = from + nl + 1;
        break;
      }
      end = from;
    }
    if (end < size) ftruncateSync(fd, end);
  } finally {
    closeSync(fd);
  }
}

/** Appends reject lines synchronously, so a line is in the file before the batch around it counts as done. */
export class RejectsFile {
  private fd: number | undefined;
  count = 0;
  /** On resume: the records already in the file (rejected past the saved point before the stop), not written twice. */
  private readonly seen = new Set<string>();
  constructor(
    readonly path: string | undefined,
    private readonly append: boolean,
  ) {}
  private static key(file: unknown, record: unknown, node: unknown): string {
    return `${String(file)}\u0000${String(record)}\u0000${String(node ?? '')}`;
  }
  /** Remembers what an existing rejects file already holds (resume appends to it). */
  async loadExisting(): Promise<void> {
    if (this.path === undefined || !this.append) return;
    let info;
    try {
      info = await statSource(this.path);
    } catch {
      return; // no file yet
    }
    if (info.stdin || info.size === undefined || info.size === 0) return;
    dropTornTail(this.path);
    const handle = await openRecords(info, { format: 'ndjson' });
    for await (const group of handle.groups) {
      for (const raw of group) {
        try {
          const v = JSON.parse(raw.text) as Record<string, unknown>;
          this.seen.add(RejectsFile.key(v.file, v.record, v.node));
        } catch {
          // a torn last line from a killed run: ignore
        }
      }
    }
  }
  write(entry: RejectEntry & { owner?: string }): void {
    this.count++;
    if (this.path === undefined) return;
    if (this.seen.size > 0 && this.seen.has(RejectsFile.key(entry.file, entry.record, entry.node))) return;
    if (this.fd === undefined) this.fd = openPrivate(this.path, this.append ? 'append' : 'truncate', 'rejects file');
    const line: Record<string, unknown> = { file: entry.file, record: entry.record };
    if (entry.line !== undefined) line.line = entry.line;
    line.error = entry.error;
    if (entry.node !== undefined) line.node = entry.node;
    // `--to owners`: the ring node this copy is owed to; a replay of the line sends it there alone.
    if (entry.owner !== undefined) line.owner = entry.owner;
    let text: string;
    if (entry.inputText !== undefined) {
      // Verbatim, on one line: in valid JSON a CR or LF can only be whitespace between tokens.
      text = `${JSON.stringify(line).slice(0, -1)},"input":${entry.inputText.replace(/[\r\n]+/g, ' ').trim()}}`;
    } else {
      line.input = entry.input;
      text = JSON.stringify(line);
    }
    writeSync(this.fd, `${text}\n`);
  }
  close(): void {
    if (this.fd !== undefined) closeSync(this.fd);
    this.fd = undefined;
  }
}
