import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { writeRecords, type ReplayEvent } from '../../src/replay/index.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';

const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const dispatcher = new Agent();
let dir: string;
beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsnode-replay-'));
});
afterAll(async () => {
  await stopAllNodes();
  await dispatcher.close();
  rmSync(dir, { recursive: true, force: true });
});

function file(name: string, n: number, metric: string): string {
  const path = join(dir, name);
  writeFileSync(path, Array.from({ length: n }, (_, i) => JSON.stringify({ metric, id: ID, offset: 60 * i, count: 1, value: i })).join('\n') + '\n');
  return path;
}

async function counts(url: string, metric: string, n: number, spanMs = 60_000): Promise<number> {
  const res = await new NodeClient(url, { dispatcher }).readRollup({ uuid: ID, metric, startMs: 0, endMs: n * 60_000, spanMs, engine: 'nnt', type: 'count' });
  return res.points.reduce((a, p) => a + (p.value ?? 0), 0);
}

describe('writeRecords against a real node', () => {
  it('maps a node 400 back to file + record, rejects that record and resends the rest', async () => {
    // The node's smallest span is 300 s; the client checks against 60 s, so the node refuses what the client let through.
    const node = await startNode({ memory: true, rollups: [300, 1800] });
    const f = file('span.ndjson', 12, 'span');
    const rejectsPath = join(dir, 'span.rejects.ndjson');
    const events: ReplayEvent[] = [];
    const r = await writeRecords([f], { clients: [new NodeClient(node.url, { dispatcher })], rejectsPath, smallestSpan: 60, batchSize: 6, onEvent: (e) => events.push(e) });
    expect(r).toMatchObject({ stopped: 'done', read: 12, written: 3, rejected: 9, rejectedByNode: 9, failedBatches: 0 });
    const lines = readFileSync(rejectsPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines.map((l) => l.record).sort((a, b) => a - b)).toEqual([2, 3, 4, 5, 7, 8, 9, 10, 12]);
    for (const l of lines) {
      expect(l).toMatchObject({ file: f, node: node.url, line: l.record });
      expect(l.error).toMatch(/^offset: must be aligned to the smallest span 300s/);
      expect(l.input.offset).toBe(60 * (l.record - 1));
    }
    expect(await counts(node.url, 'span', 12, 300_000)).toBe(3);
    expect(events.filter((e) => e.type === 'rejected')).toHaveLength(9);
  });

  it('halves a batch the node finds too large (413) and writes it all', async () => {
    const node = await startNode({ memory: true, args: ['--max-body', '2KiB'] });
    const f = file('big.ndjson', 60, 'big');
    // One record alone larger than the node's limit: refused as a record, the node stays in use.
    writeFileSync(f, readFileSync(f, 'utf8') + JSON.stringify({ metric: 'x'.repeat(3000), id: ID, offset: 0, count: 1, value: 1 }) + '\n');
    const r = await writeRecords([f], { clients: [new NodeClient(node.url, { dispatcher })], rejectsPath: join(dir, 'big.rejects'), batchSize: 61 });
    expect(r).toMatchObject({ stopped: 'done', read: 61, written: 60, rejected: 1, rejectedByNode: 1, failedBatches: 0, batches: 1 });
    expect(JSON.parse(readFileSync(join(dir, 'big.rejects'), 'utf8'))).toMatchObject({ record: 61, error: expect.stringMatching(/^\(record\): larger than the node accepts/) });
    expect(await counts(node.url, 'big', 60)).toBe(60);
  });

  it('reports progress and stops at --max-errors with the position saved', async () => {
    const node = await startNode({ memory: true });
    const path = join(dir, 'maxerr.ndjson');
    writeFileSync(path, Array.from({ length: 40 }, (_, i) => JSON.stringify({ metric: 'me', id: i % 4 === 3 ? 'bad' : ID, offset: 60 * i, count: 1, value: i })).join('\n') + '\n');
    const statePath = join(dir, 'maxerr.state.json');
    let progressed = 0;
    const r = await writeRecords([path], {
      clients: [new NodeClient(node.url, { dispatcher })],
      rejectsPath: join(dir, 'maxerr.rejects'),
      statePath,
      maxErrors: 2,
      batchSize: 3,
      onProgress: () => progressed++,
    });
    expect(r.stopped).toBe('max-errors');
    expect(r.rejected).toBe(3);
    expect(progressed).toBeGreaterThan(0);
    const state = JSON.parse(readFileSync(statePath, 'utf8'));
    // Stopped right after record 12 (the third bad one); everything up to it is settled.
    expect(state.inputs[path]).toMatchObject({ record: 12, done: false, format: 'ndjson' });
    const again = await writeRecords([path], { clients: [new NodeClient(node.url, { dispatcher })], rejectsPath: join(dir, 'maxerr.rejects'), statePath, resume: true });
    expect(again).toMatchObject({ stopped: 'done', read: 28, rejected: 7 });
    expect(readFileSync(join(dir, 'maxerr.rejects'), 'utf8').trim().split('\n')).toHaveLength(10);
    expect(await counts(node.url, 'me', 40)).toBe(30);
  });

  it('writes text and histogram records to their endpoints, with the node refusals in the rejects file', async () => {
    const node = await startNode({ memory: true, histogramRollups: [60, 300] });
    const client = new NodeClient(node.url, { dispatcher });
    const textPath = join(dir, 'notes.ndjson');
    const texts = Array.from({ length: 7 }, (_, i) => ({ metric: 'version', id: ID, offset: String(1_700_000_000 + 100 * i), value: `v${i}` }));
    writeFileSync(textPath, texts.map((t) => JSON.stringify(t)).join('\n') + '\n');
    const t = await writeRecords([textPath], { clients: [client], kind: 'text', rejectsPath: join(dir, 'notes.rejects'), batchSize: 3 });
    expect(t).toMatchObject({ stopped: 'done', read: 7, written: 7, rejected: 0, batches: 3, acknowledged: { byCount: 7, bare: 0 } });
    expect(await client.readText({ uuid: ID, metric: 'version', startMs: 1_700_000_000_000, endMs: 1_700_001_000_000 })).toEqual(
      texts.map((x) => [Number(x.offset) * 1000, x.value]),
    );

    // Periods unknown to the client: the node refuses the one it does not keep (400 naming the record), the rest is stored.
    const histPath = join(dir, 'latency.ndjson');
    const hists = [60, 45, 300].map((period, i) => ({ metric: 'latency', id: ID, offset: 1_700_000_040 + 60 * i, period, histogram: 'AAEX/QAB' }));
    writeFileSync(histPath, hists.map((h) => JSON.stringify(h)).join('\n') + '\n');
    const rejectsPath = join(dir, 'latency.rejects');
    const h = await writeRecords([histPath], { clients: [client], kind: 'histogram', rejectsPath });
    expect(h).toMatchObject({ stopped: 'done', read: 3, written: 2, rejected: 1, rejectedByNode: 1 });
    expect(JSON.parse(readFileSync(rejectsPath, 'utf8'))).toMatchObject({ record: 2, node: node.url, error: expect.stringMatching(/^period: /) });
    expect(await client.readHistogram({ uuid: ID, metric: 'latency', startMs: 1_700_000_000_000, endMs: 1_700_001_000_000, periodS: 60 })).toEqual([
      [1_700_000_040, 60, { '+23e-004': 1 }],
    ]);
    // Told the periods, the client refuses it itself and the node sees only what it keeps.
    const again = await writeRecords([histPath], { clients: [client], kind: 'histogram', histogramPeriods: [60, 300], rejectsPath });
    expect(again).toMatchObject({ read: 3, written: 2, rejected: 1, rejectedByNode: 0 });
  });

  it('a state file is resumed only by a write of the same kind', async () => {
    const node = await startNode({ memory: true });
    const path = file('kind.ndjson', 6, 'kind');
    const statePath = join(dir, 'kind.state.json');
    const clients = [new NodeClient(node.url, { dispatcher })];
    const first = await writeRecords([path], { clients, rejectsPath: join(dir, 'kind.rejects'), statePath, maxErrors: 0, batchSize: 2, kind: 'text' });
    // Numeric records read as text: all invalid; stopped at the first, the position saved.
    expect(first.stopped).toBe('max-errors');
    expect(JSON.parse(readFileSync(statePath, 'utf8')).kind).toBe('text');
    await expect(writeRecords([path], { clients, rejectsPath: join(dir, 'kind.rejects'), statePath, resume: true })).rejects.toThrow(
      /was saved by a write of text records, and this write is of nnt records/,
    );
  });
});
