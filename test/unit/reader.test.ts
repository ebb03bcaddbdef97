import { execFileSync } from 'node:child_process';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { openRecords, statSource, SourceError, READ_CHUNK_BYTES, type RawRecord } from '../../src/records/index.js';

const dir = mkdtempSync(join(tmpdir(), 'tsnode-reader-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

async function all(name: string, opts: Parameters<typeof openRecords>[1] = {}): Promise<{ format: string; seeked: boolean; recs: RawRecord[] }> {
  const h = await openRecords(await statSource(name), opts);
  const recs: RawRecord[] = [];
  // A record's place in the chunk (bytes, from, to) is valid only until the next group: kept out.
  for await (const g of h.groups) recs.push(...g.map(({ bytes: _b, from: _f, to: _t, ...r }) => r));
  return { format: h.format, seeked: h.seeked, recs };
}

const lines = Array.from({ length: 5000 }, (_, i) => JSON.stringify({ i, s: 'x'.repeat(i % 200) }));

describe('openRecords', () => {
  it('detects the format from the first byte, gzip from the magic bytes, across chunk boundaries', async () => {
    const nd = join(dir, 'data'); // no extension
    writeFileSync(nd, lines.join('\n') + '\n');
    const arr = join(dir, 'data2');
    writeFileSync(arr, `\n\n  [${lines.join(',\n')}]`);
    const gz = join(dir, 'packed');
    writeFileSync(gz, gzipSync(`[${lines.join(',')}]`));
    expect(READ_CHUNK_BYTES).toBeLessThan(lines.join('\n').length); // several chunks
    for (const [f, format] of [
      [nd, 'ndjson'],
      [arr, 'json'],
      [gz, 'json'],
    ] as const) {
      const r = await all(f);
      expect(r.format).toBe(format);
      expect(r.recs.map((x) => JSON.parse(x.text).i)).toEqual(lines.map((_, i) => i));
    }
  });

  it('resumes plain files by seeking and gzip/stdin by skipping, yielding the same records', async () => {
    const f = join(dir, 'r.ndjson');
    writeFileSync(f, lines.join('\n') + '\n');
    const whole = (await all(f)).recs;
    const at = whole[2999]!;
    const start = { record: at.record, byte: at.byteEnd, line: at.lineEnd };
    const seek = await all(f, { start });
    expect(seek.seeked).toBe(true);
    expect(seek.recs).toEqual(whole.slice(3000));
    const g = join(dir, 'r.ndjson.gz');
    writeFileSync(g, gzipSync(lines.join('\n') + '\n'));
    const skip = await all(g, { start });
    expect(skip.seeked).toBe(false);
    expect(skip.recs.map((r) => r.text)).toEqual(whole.slice(3000).map((r) => r.text));
    const stdin = await all('-', { start, stdin: Readable.from([Buffer.from(lines.join('\n') + '\n')]) });
    expect(stdin.recs.map((r) => r.record)).toEqual(whole.slice(3000).map((r) => r.record));
  });

  it('reads a named pipe at its current position, and resumes one by skipping (it cannot seek)', async () => {
    const fifo = join(dir, 'pipe.ndjson');
    execFileSync('mkfifo', [fifo]);
    const text = lines.join('\n') + '\n';
    // The writer blocks until the pipe is opened for reading; it runs beside the reader.
    const feed = (): Promise<void> => writeFile(fifo, text);
    const [whole] = await Promise.all([all(fifo), feed()]);
    expect(whole.recs.map((r) => JSON.parse(r.text).i)).toEqual(lines.map((_, i) => i));
    const at = whole.recs[2999]!;
    const [resumed] = await Promise.all([all(fifo, { start: { record: at.record, byte: at.byteEnd, line: at.lineEnd } }), feed()]);
    expect(resumed.seeked).toBe(false);
    expect(resumed.recs).toEqual(whole.recs.slice(3000));
  });

  it('names the file in errors: missing, empty, neither format, broken gzip', async () => {
    await expect(statSource(join(dir, 'nope.json'))).rejects.toThrow(/nope\.json: no such file/);
    const empty = join(dir, 'empty');
    writeFileSync(empty, '  \n');
    await expect(all(empty)).rejects.toThrow(/empty: is empty/);
    const csv = join(dir, 'x.csv');
    writeFileSync(csv, 'a,b\n1,2\n');
    await expect(all(csv)).rejects.toThrow(/neither a JSON array .* nor NDJSON/);
    const bad = join(dir, 'bad.json.gz');
    writeFileSync(bad, gzipSync(`[${lines.join(',')}]`).subarray(0, 2000));
    const err = await all(bad).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SourceError);
    expect(String(err)).toMatch(/bad\.json\.gz: not valid gzip, or truncated/);
  });
});
