import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { gzipSync } from 'node:zlib';
import { afterAll, describe, expect, it } from 'vitest';
import { Batcher, type Batch, type RejectEntry } from '../../src/records/batch.js';
import { openRecordChunks, openRecords, statSource } from '../../src/records/reader.js';
import { chunkSize, spanRecord, type RecordChunk } from '../../src/records/splitter.js';

/**
 * The write pipeline's chunk path (openRecordChunks, Batcher.addFrom): whole ASCII lines are
 * checked and copied on their bytes, with no object or string made per record. These tests
 * drive it through a real file: every record, reject and position as the record-by-record path.
 */
const dir = mkdtempSync(join(tmpdir(), 'tsnode-chunks-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const good = (i: number): string => JSON.stringify({ metric: `cpu.${i % 7}`, id: ID, offset: 60 * i, count: 1, value: i / 2 });

type Start = { record: number; byte: number; line: number };

/**
 * Every record of a file through the Batcher: `chunks` by openRecordChunks and addFrom (the write
 * pipeline), else by openRecords and add, record by record. The batches (body as text), the rejects.
 */
async function batchFile(path: string, how: 'chunks' | 'records', start?: Start) {
  const info = await statSource(path);
  const opts = start ? { start } : {};
  const b = new Batcher({ source: path, batchSize: 1000, batchBytes: 1 << 20, smallestSpan: 60, deferCopies: true, ...opts });
  const batches: Array<Omit<Batch, 'body'> & { body: string }> = [];
  const rejects: RejectEntry[] = [];
  const take = (added: ReturnType<Batcher['add']>): void => {
    if (added.kind === 'reject') rejects.push(added.reject);
    if (added.full) batches.push({ ...added.full, body: added.full.body.toString('latin1') });
  };
  if (how === 'chunks') {
    for await (const c of (await openRecordChunks(info, opts)).chunks) {
      for (let j = 0; j < chunkSize(c); j++) take(b.addFrom(c, j));
      b.release();
    }
  } else {
    for await (const g of (await openRecords(info, opts)).groups) {
      for (const raw of g) take(b.add(raw));
      b.release();
    }
  }
  const last = b.flush();
  batches.push({ ...last, body: last.body.toString('latin1') });
  return { batches, rejects };
}
const viaChunks = (path: string, start?: Start) => batchFile(path, 'chunks', start);
const viaRecords = (path: string, start?: Start) => batchFile(path, 'records', start);

describe('the chunk path (openRecordChunks + Batcher.addFrom)', () => {
  // 6,000 lines over several 256 KiB chunks, with malformed and odd lines among them.
  const lines: string[] = [];
  for (let i = 0; i < 6000; i++) {
    if (i === 10)
      lines.push('{"metric":"cpu","id":"' + ID + '","offset":60,"count":1,"value":1'); // truncated JSON
    else if (i === 20)
      lines.push(JSON.stringify({ metric: 'cpu', id: ID, offset: 61, count: 1, value: 1 })); // off the span
    else if (i === 30) lines.push('   ');
    else if (i === 40) lines.push(JSON.stringify({ metric: 'cpu', id: 'not-a-uuid', offset: 60, count: 1, value: 1 }));
    else if (i === 50)
      lines.push(`${good(i)}\r`); // CRLF
    else if (i === 4000) lines.push('{"metric":"cpu","id":"' + ID + '","offset":60,"count":-1,"value":1}');
    else lines.push(good(i));
  }
  const text = lines.join('\n') + '\n';

  it('rejects malformed lines met on their bytes with the file and line, and batches the rest as the record path does', async () => {
    const path = join(dir, 'mixed.ndjson');
    writeFileSync(path, text);
    const got = await viaChunks(path);
    expect(got.rejects.map((r) => [r.line, r.error.split(':')[0]])).toEqual([
      [11, '(record)'],
      [21, 'offset'],
      [41, 'id'],
      [4001, 'count'],
    ]);
    expect(got.rejects.every((r) => r.file === path)).toBe(true);
    expect(got.rejects[0]!.input).toBe(lines[10]);
    expect(got.rejects[1]!.inputText).toBe(lines[20]);
    expect(got).toEqual(await viaRecords(path));
    // Every valid record went out once, as read.
    const sent = got.batches.flatMap((b) => (b.count > 0 ? (JSON.parse(b.body) as unknown[]) : []));
    expect(sent).toHaveLength(6000 - 5);
    const last = got.batches[got.batches.length - 1]!;
    expect(last.end).toEqual({ record: 5999, byte: Buffer.byteLength(text), line: 6001 });
  });

  it('resumes a re-read input (gzip) from inside a chunk: the spans before the position are skipped', async () => {
    const gz = join(dir, 'mixed.ndjson.gz');
    writeFileSync(gz, gzipSync(text));
    const whole = await viaRecords(join(dir, 'mixed.ndjson'));
    const at = whole.batches[2]!.end;
    const got = await viaChunks(gz, at);
    expect(got).toEqual(await viaRecords(gz, at));
    expect(got.batches[0]!.records[0]).toBe(at.record + 1);
    expect(got.rejects.map((r) => r.line)).toEqual([4001]);
  });

  it('spanRecord gives a span exactly as the record-by-record reader gives it', async () => {
    const path = join(dir, 'mixed.ndjson');
    const h = await openRecordChunks(await statSource(path));
    const spans: ReturnType<typeof spanRecord>[] = [];
    for await (const c of h.chunks) {
      const chunk: RecordChunk = c;
      for (let s = chunk.spanFirst; s < chunk.spanCount; s++) spans.push(strip(spanRecord(chunk, s)));
      spans.push(...chunk.raws.map(strip));
    }
    const records: ReturnType<typeof spanRecord>[] = [];
    for await (const g of (await openRecords(await statSource(path))).groups) records.push(...g.map(strip));
    spans.sort((a, b) => a.record - b.record);
    expect(spans).toEqual(records);
  });
});

function strip<T extends { bytes?: unknown; from?: unknown; to?: unknown }>({ bytes: _b, from: _f, to: _t, ...rest }: T): Omit<T, 'bytes' | 'from' | 'to'> {
  return rest;
}
