/**
 * Owner routing of a batch: every record in the slices of exactly its owners (as the ring places
 * it), its bytes as read, and a rejects-file line that names its owner sent to that owner alone.
 */
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Batcher, batchTexts, RANGE_SLOTS, type Batch } from '../../src/records/batch.js';
import { NdjsonSplitter } from '../../src/records/ndjson-splitter.js';
import { openRecordChunks, statSource } from '../../src/records/reader.js';
import { chunkSize } from '../../src/records/splitter.js';
import { OwnerRouter, joinSlices, ownersAt, ownSlice, type OwnerSlice, type RoutedBatch } from '../../src/replay/owners.js';
import { OwnerQueue, type QueuedSlice } from '../../src/replay/owner-queue.js';
import { PlacementCache } from '../../src/replay/placement-cache.js';
import { Ring, type Topology } from '../../src/ring/index.js';
import { writeSpan } from '../../src/client/routing.js';
import type { NodeSelf } from '../../src/client/discovery.js';

const TOPOLOGY: Topology = {
  writeCopies: 2,
  nodes: [
    { id: '1f846f26-0cfd-4df5-b4f1-e0930604e577', address: '10.0.0.1', port: 8112, apiport: 8112, weight: 32 },
    { id: '765ac4cc-1929-4642-9ef1-d194d08f9538', address: '10.0.0.2', port: 8112, apiport: 8112, weight: 32 },
    { id: '8c2fc7b8-c569-402d-a393-db433fb267aa', address: '10.0.0.3', port: 8112, apiport: 8112, weight: 32 },
    { id: '07fa2237-5744-4c28-a622-a99cfc1ac87e', address: '10.0.0.4', port: 8112, apiport: 8112, weight: 32 },
    { id: 'c39a6bb1-5c6c-4b8b-8f0e-2a4b8c1e9d11', address: '10.0.0.5', port: 8112, apiport: 8112, weight: 32 },
  ],
};
const ring = Ring.compile(TOPOLOGY);
const ids = ['3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', '11111111-2222-4333-8444-555555555555', 'ABCDEF01-2345-4789-8bcd-ef0123456789'];

function batchOf(lines: string[], ranges = false): Batch {
  const s = new NdjsonSplitter('in.ndjson');
  const b = new Batcher({ source: 'in.ndjson', smallestSpan: 60, batchSize: 1_000_000, batchBytes: 1 << 26, ranges });
  for (const raw of [...s.push(Buffer.from(lines.join('\n') + '\n')), ...s.end()]) {
    const r = b.add(raw);
    expect(r.kind).toBe('ok');
  }
  return b.flush();
}

/** A slice's records as the body of a request of their own. */
const bodyOf = (s: OwnerSlice): Buffer => joinSlices(s.node, [s]).body;
const placements = (routed: RoutedBatch, count: number): Array<readonly number[]> => Array.from({ length: count }, (_, k) => ownersAt(routed, k));

const indexOf = new Map(TOPOLOGY.nodes.map((n, k) => [n.id, k]));
const ownersOf = (id: string, metric: string): number[] => ring.ownersOf(id, metric).map((n) => indexOf.get(n.id)!);

describe('OwnerRouter.split', () => {
  it('puts each record in the slices of exactly its owners, bytes as read, in input order', () => {
    const lines: string[] = [];
    for (let i = 0; i < 300; i++) {
      const metric = i % 7 === 0 ? `disk "sda" ${i % 11}` : i % 5 === 0 ? `mém|ST[host:${i % 3}]` : `cpu${i % 13}`;
      const rec: Record<string, unknown> = { metric, id: ids[i % 3], offset: 60 * i, count: 1, value: i };
      // A record with parts goes the parsing path; `1.0` must reach the node as `1.0`.
      let text = JSON.stringify(rec);
      if (i % 9 === 0) text = text.replace('"count":1', '"count":1,"parts":[60,[{"count":1,"value":1.0}]]');
      if (i % 4 === 0) text = text.replace(`"value":${i}}`, `"value":${i}.0}`);
      lines.push(text);
    }
    const batch = batchOf(lines);
    const routed = new OwnerRouter(ring).split(batch);
    const seen = new Map<number, number[]>();
    for (const s of routed.slices) {
      const texts = batchTexts(bodyOf(s));
      expect(texts).toHaveLength(s.count);
      const records = joinSlices(s.node, [s]).records;
      expect(records).toEqual([...records].sort((a, b) => a - b));
      texts.forEach((t, j) => {
        const k = s.index[j]!;
        expect(t).toBe(lines[k]);
        expect(records[j]).toBe(k + 1);
        seen.set(k, [...(seen.get(k) ?? []), s.node]);
      });
    }
    lines.forEach((l, k) => {
      const v = JSON.parse(l) as { id: string; metric: string };
      expect([...seen.get(k)!].sort()).toEqual(ownersOf(v.id, v.metric).sort());
      expect(routed.copies[k]).toBe(2);
    });
    expect(routed.owed).toBe(0);
  });

  it('routes the same with the batcher ranges as by scanning, which agree with each record (chunk path)', async () => {
    const lines: string[] = [];
    for (let i = 0; i < 3000; i++) {
      const rec = { metric: `cpu${i % 13}`, id: ids[i % 3], offset: 60 * i, count: 1, value: i };
      let text = JSON.stringify(rec);
      // Escapes, parts, spaces, id last, a non-ASCII metric (its whole chunk is read as text): each a path of its own.
      if (i % 11 === 0) text = JSON.stringify({ ...rec, metric: `disk "sda" ${i % 5}` });
      if (i % 9 === 0) text = text.replace('"count":1', '"count":1,"parts":[60,[{"count":1,"value":1.0}]]');
      if (i % 7 === 0) text = text.replace('{"metric":', '{ "metric" : ');
      if (i % 17 === 0) text = JSON.stringify({ offset: 60 * i, count: 1, value: i, id: ids[i % 3], metric: `cpu${i % 4}` });
      if (i === 2990) text = JSON.stringify({ ...rec, metric: 'mém' });
      if (i % 23 === 0) text = text.replace(/"id":"([^"]+)"/, (_, id: string) => `"id":"\\u00${id.charCodeAt(0).toString(16)}${id.slice(1)}"`);
      lines.push(text);
    }
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-ranges-'));
    try {
      const path = join(dir, 'in.ndjson');
      writeFileSync(path, lines.join('\n') + '\n');
      const b = new Batcher({ source: path, smallestSpan: 60, batchSize: 700, batchBytes: 1 << 26, deferCopies: true, ranges: true });
      const batches: Batch[] = [];
      for await (const c of (await openRecordChunks(await statSource(path), {})).chunks) {
        for (let j = 0; j < chunkSize(c); j++) {
          const added = b.addFrom(c, j);
          expect(added.kind).toBe('ok');
          if (added.full) batches.push(added.full);
        }
        b.release();
      }
      batches.push(b.flush());
      let k0 = 0;
      let plain = 0;
      for (const batch of batches) {
        const r = batch.ranges!;
        expect(r).toHaveLength(batch.count * RANGE_SLOTS);
        for (let k = 0; k < batch.count; k++) {
          const at = r.subarray(k * RANGE_SLOTS, (k + 1) * RANGE_SLOTS);
          const line = lines[k0 + k]!;
          expect(batch.body.toString('utf8', at[0], at[1])).toBe(line);
          if (at[2]! < 0) continue;
          plain++;
          const v = JSON.parse(line) as { id: string; metric: string };
          expect(batch.body.toString('utf8', at[2], at[3])).toBe(v.id);
          expect(batch.body.toString('utf8', at[4], at[5])).toBe(v.metric);
        }
        for (const primaryOnly of [false, true]) {
          const scanned = new OwnerRouter(ring).split({ ...batch, ranges: undefined }, primaryOnly);
          const read = new OwnerRouter(ring).split(batch, primaryOnly);
          expect(read.slices.map((s) => [s.node, s.index, bodyOf(s).toString()])).toEqual(scanned.slices.map((s) => [s.node, s.index, bodyOf(s).toString()]));
          expect(placements(read, batch.count)).toEqual(placements(scanned, batch.count));
        }
        k0 += batch.count;
      }
      expect(k0).toBe(lines.length);
      // Most records were read by the byte check; the others were scanned.
      expect(plain).toBeGreaterThan(lines.length / 2);
      expect(plain).toBeLessThan(lines.length);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('places the same as the ring for any metric (property)', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.constantFrom(...ids), fc.string({ minLength: 1, maxLength: 40 })), { minLength: 1, maxLength: 40 }), (recs) => {
        const lines = recs.map(([id, metric], i) => JSON.stringify({ metric, id, offset: 60 * i, count: 1, value: 1 }));
        const routed = new OwnerRouter(ring).split(batchOf(lines, recs.length % 2 === 0));
        const got = new Map<number, number[]>();
        for (const s of routed.slices) s.index.forEach((k) => got.set(k, [...(got.get(k) ?? []), s.node]));
        recs.forEach(([id, metric], k) => expect(got.get(k)!.sort()).toEqual(ownersOf(id, metric).sort()));
      }),
      { numRuns: 200 },
    );
  });

  it('places each of neighbouring records that share their ids and metrics but for one byte, in every spot (primary and owners)', () => {
    // Ids and metrics of equal length and the same last byte, differing in one byte anywhere else:
    // a record is never given its neighbour's placement.
    const baseId = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
    const lines: string[] = [];
    for (let at = 0; at < baseId.length - 1; at++) {
      if (baseId[at] === '-') continue;
      const other = `${baseId.slice(0, at)}${baseId[at] === '0' ? '1' : '0'}${baseId.slice(at + 1)}`;
      for (const [id, metric] of [
        [baseId, 'cpu.user'],
        [other, 'cpu.user'],
        [other, 'cpu.usxr'],
        [other, 'xpu.user'],
      ] as const)
        lines.push(JSON.stringify({ metric, id, offset: 60 * lines.length, count: 1, value: 1 }));
    }
    const batch = batchOf(lines, true);
    for (const primaryOnly of [false, true]) {
      const routed = new OwnerRouter(ring).split(batch, primaryOnly);
      const got = new Map<number, number[]>();
      for (const s of routed.slices) s.index.forEach((k) => got.set(k, [...(got.get(k) ?? []), s.node]));
      lines.forEach((l, k) => {
        const v = JSON.parse(l) as { id: string; metric: string };
        const owners = ownersOf(v.id, v.metric);
        expect(got.get(k)).toEqual(primaryOnly ? [owners[0]] : [...owners].sort((a, b) => a - b));
        expect(ownersAt(routed, k)).toEqual(owners);
      });
    }
  });

  it('sends a rejects-file line that names its owner to that owner alone; a non-owner named means all owners', () => {
    const id = ids[0]!;
    const [primary, second] = ownersOf(id, 'cpu');
    const stranger = [0, 1, 2, 3, 4].find((k) => k !== primary && k !== second)!;
    const input = { metric: 'cpu', id, offset: 60, count: 1, value: 1 };
    const line = (owner: string | undefined, record: number): string =>
      JSON.stringify({ file: 'x.ndjson', record, error: 'not written: down', node: 'http://10.0.0.9:8112', ...(owner ? { owner } : {}), input: { ...input, offset: 60 * record } });
    const batch = batchOf([line(TOPOLOGY.nodes[second!]!.id, 1), line(undefined, 2), line(TOPOLOGY.nodes[stranger]!.id, 3), line(TOPOLOGY.nodes[second!]!.id.toUpperCase(), 4)]);
    expect(batch.owedTo).toEqual([TOPOLOGY.nodes[second!]!.id, undefined, TOPOLOGY.nodes[stranger]!.id, TOPOLOGY.nodes[second!]!.id.toUpperCase()]);
    const routed = new OwnerRouter(ring).split(batch);
    const byNode = new Map(routed.slices.map((s) => [s.node, [...s.index]]));
    expect(byNode.get(second!)).toEqual([0, 1, 2, 3]);
    expect(byNode.get(primary!)).toEqual([1, 2]);
    expect(byNode.has(stranger)).toBe(false);
    expect([...routed.copies]).toEqual([1, 2, 2, 1]);
    expect(routed.owed).toBe(2);
    expect(routed.notOwedThere).toBe(1);
    // The body sent is the line's input, not the line.
    expect(JSON.parse(batchTexts(bodyOf(routed.slices.find((s) => s.node === second)!))[0]!)).toEqual({ ...input, offset: 60 });
  });

  it('remembers a bounded number of placements', () => {
    const router = new OwnerRouter(ring, 10);
    for (let i = 0; i < 100; i++) expect([...router.ownersOf(ids[0]!, `m${i}`)]).toEqual(ownersOf(ids[0]!, `m${i}`));
    expect((router as unknown as { cache: Map<string, unknown> }).cache.size).toBeLessThanOrEqual(10);
  });
});

describe('OwnerRouter.split against a record-by-record parse (property)', () => {
  /** A record as a line: keys in any order, spaces or not, escapes in the id or metric or not; some as a rejects-file line owed to a node. */
  const recordLine = fc
    .record({
      id: fc.constantFrom(...ids, ids[0]!.toUpperCase()),
      metric: fc.oneof(fc.constantFrom('cpu', 'cpu.1', 'cpu.2', 'mém', 'disk "sda"', 'a\\b'), fc.string({ minLength: 1, maxLength: 12 })),
      order: fc.shuffledSubarray(['metric', 'id', 'offset', 'count', 'value'], { minLength: 5, maxLength: 5 }),
      spaced: fc.boolean(),
      escapeId: fc.boolean(),
      value: fc.oneof(fc.integer(), fc.constant(123.45678901234567)),
      owner: fc.option(fc.integer({ min: 0, max: TOPOLOGY.nodes.length - 1 }), { freq: 5 }),
    })
    .map(({ id, metric, order, spaced, escapeId, value, owner }) => {
      const rec: Record<string, unknown> = { metric, id, offset: 60, count: 1, value };
      let text = `{${order.map((k) => `${JSON.stringify(k)}${spaced ? ' : ' : ':'}${JSON.stringify(rec[k])}`).join(spaced ? ' , ' : ',')}}`;
      if (escapeId) text = text.replace(`"${id}"`, `"\\u00${id.charCodeAt(0).toString(16)}${id.slice(1)}"`);
      const line = owner === null ? text : `{"file":"x","record":1,"error":"e","owner":${JSON.stringify(TOPOLOGY.nodes[owner]!.id)},"input":${text}}`;
      return { id, metric, owner, text, line };
    });

  it('routes each record to exactly the owners a parse and the ring name, across batches and a small cache', () => {
    fc.assert(
      fc.property(fc.array(fc.array(recordLine, { minLength: 1, maxLength: 30 }), { minLength: 1, maxLength: 4 }), fc.boolean(), fc.boolean(), (batches, primaryOnly, ranges) => {
        const router = new OwnerRouter(ring, 3);
        for (const recs of batches) {
          const batch = batchOf(
            recs.map((r) => r.line),
            ranges,
          );
          const routed = router.split(batch, primaryOnly);
          const got = new Map<number, number[]>();
          for (const s of routed.slices) {
            const texts = batchTexts(bodyOf(s)).map((t) => JSON.parse(t) as unknown);
            expect(texts).toHaveLength(s.count);
            s.index.forEach((k, j) => {
              got.set(k, [...(got.get(k) ?? []), s.node]);
              expect(texts[j]).toEqual(JSON.parse(recs[k]!.text));
            });
          }
          recs.forEach((r, k) => {
            const owners = ownersOf(r.id, r.metric);
            const placed = r.owner !== null && owners.includes(r.owner) ? [r.owner] : owners;
            expect(ownersAt(routed, k)).toEqual(placed);
            const to = primaryOnly ? placed.slice(0, 1) : placed;
            expect(got.get(k)).toEqual([...to].sort((a, b) => a - b));
            expect(routed.copies[k]).toBe(to.length);
          });
        }
      }),
      { numRuns: 120 },
    );
  });

  it('tells apart ids and metrics whose bytes run together the same, and forgets placements past its bound', () => {
    const router = new OwnerRouter(ring, 100);
    const lines: string[] = [];
    // Id and metric side by side either way round, and far apart (more than a key's text holds).
    const orders = [
      ['metric', 'id', 'offset', 'count', 'value'],
      ['id', 'metric', 'offset', 'count', 'value'],
      ['metric', 'offset', 'count', 'value', 'id'],
      ['id', 'offset', 'count', 'value', 'metric'],
    ];
    // Neighbours of other series (a neighbour of the same series takes its placement without a look-up).
    for (const order of orders)
      for (const [metric, id] of [
        ['a', ids[0]!],
        ['a"', ids[0]!],
        ['ab', ids[1]!],
        ['a', ids[1]!],
        ['a', ids[2]!],
      ]) {
        const rec: Record<string, unknown> = { metric, id, offset: 60, count: 1, value: 1.2345678901234567e300 };
        lines.push(`{${order.map((k) => `${JSON.stringify(k)} : ${JSON.stringify(rec[k])}`).join(' , ')}}`);
      }
    for (let round = 0; round < 3; round++) {
      const batch = batchOf(lines, true);
      const routed = router.split(batch);
      lines.forEach((l, k) => {
        const v = JSON.parse(l) as { id: string; metric: string };
        expect(ownersAt(routed, k)).toEqual(ownersOf(v.id, v.metric));
      });
    }
    const small = new OwnerRouter(ring, 2);
    small.split(batchOf(lines, true));
    expect((small as unknown as { byBytes: PlacementCache<number> }).byBytes.size).toBeLessThanOrEqual(2);
  });
});

describe('PlacementCache', () => {
  /** An id and a metric as a record's bytes hold them, somewhere inside a larger buffer. */
  const pair = (id: string, metric: string, pad: number) => {
    const buf = Buffer.from(`${'x'.repeat(pad)}"${id}","${metric}"`);
    const idFrom = pad + 1;
    const idTo = idFrom + Buffer.byteLength(id);
    const metricFrom = idTo + 3;
    const metricTo = metricFrom + Buffer.byteLength(metric);
    const view = new DataView(buf.buffer, buf.byteOffset, buf.byteLength);
    return { buf, view, idFrom, idTo, metricFrom, metricTo, h: PlacementCache.hash(view, idFrom, idTo, metricFrom, metricTo) };
  };

  it('answers only for the exact bytes of an id and a metric it was given, wherever they are; bounded', () => {
    fc.assert(
      fc.property(fc.array(fc.tuple(fc.string({ maxLength: 9 }), fc.string({ maxLength: 9 })), { minLength: 1, maxLength: 60 }), fc.integer({ min: 1, max: 20 }), (keys, max) => {
        const cache = new PlacementCache(max);
        const kept = new Map<string, readonly number[]>();
        keys.forEach(([id, metric], k) => {
          const key = JSON.stringify([id, metric]);
          const at = pair(id, metric, k % 7);
          const got = cache.get(at.view, at.h, at.idFrom, at.idTo, at.metricFrom, at.metricTo);
          // Never another pair's owners; what it still holds it finds.
          if (got !== undefined) expect(got).toBe(kept.get(key));
          else {
            if (cache.size >= max) kept.clear();
            const owners = [k];
            cache.set(at.buf, at.h, at.idFrom, at.idTo, at.metricFrom, at.metricTo, owners);
            kept.set(key, owners);
          }
          expect(cache.size).toBeLessThanOrEqual(max);
        });
        for (const [key, owners] of kept) {
          const [id, metric] = JSON.parse(key) as [string, string];
          const at = pair(id, metric, 3);
          expect(cache.get(at.view, at.h, at.idFrom, at.idTo, at.metricFrom, at.metricTo)).toBe(owners);
        }
      }),
      { numRuns: 300 },
    );
  });

  it('tells apart pairs whose bytes run together the same (ab|c, a|bc) and long keys that differ in one byte', () => {
    const cache = new PlacementCache(100);
    const one = pair('ab', 'c', 0);
    cache.set(one.buf, one.h, one.idFrom, one.idTo, one.metricFrom, one.metricTo, [1]);
    const two = pair('a', 'bc', 0);
    expect(cache.get(two.view, two.h, two.idFrom, two.idTo, two.metricFrom, two.metricTo)).toBeUndefined();
    const id = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
    const base = pair(id, 'cpu.user.total', 5);
    cache.set(base.buf, base.h, base.idFrom, base.idTo, base.metricFrom, base.metricTo, [2]);
    for (let i = 0; i < id.length; i++) {
      const other = pair(`${id.slice(0, i)}${id[i] === '0' ? '1' : '0'}${id.slice(i + 1)}`, 'cpu.user.total', 5);
      // A hash that matches by chance must still not be taken for the same key.
      expect(cache.get(other.view, base.h, other.idFrom, other.idTo, other.metricFrom, other.metricTo)).toBeUndefined();
    }
    const metric = 'cpu.user.total'; // not a multiple of four bytes: its tail is compared too
    for (let i = 0; i < metric.length; i++) {
      const other = pair(id, `${metric.slice(0, i)}#${metric.slice(i + 1)}`, 5);
      expect(cache.get(other.view, base.h, other.idFrom, other.idTo, other.metricFrom, other.metricTo)).toBeUndefined();
    }
    expect(cache.get(base.view, base.h, base.idFrom, base.idTo, base.metricFrom, base.metricTo)).toEqual([2]);
  });
});

describe('writeSpan', () => {
  const self = (url: string, baseRollup: number | null): { url: string; self: NodeSelf } => ({
    url,
    self: { url, identity: 'x', current: null, next: null, version: null, baseRollup, nntRollups: null, histogramRollups: null, via: 'state' },
  });
  it('agrees, disagrees (by span), or has nothing to go on; silent nodes are named', () => {
    expect(writeSpan([self('a', 60), self('b', 60), { url: 'c', self: null }])).toEqual({ kind: 'agreed', span: 60, unreported: ['c'] });
    expect(writeSpan([self('a', 60), self('b', 300), self('c', 60)])).toEqual({
      kind: 'disagree',
      spans: [
        { span: 60, nodes: ['a', 'c'] },
        { span: 300, nodes: ['b'] },
      ],
    });
    expect(writeSpan([self('a', null), { url: 'b', self: null }])).toEqual({ kind: 'unreported', nodes: ['a', 'b'] });
  });
});

describe('OwnerQueue', () => {
  const slice = (node: number, n: number, first: number): OwnerSlice => {
    const texts = Array.from({ length: n }, (_, j) => JSON.stringify({ metric: 'q', id: ids[0], offset: 60 * (first + j), count: 1, value: 1 }));
    const numbers = texts.map((_, j) => first + j);
    return ownSlice(
      node,
      texts,
      { records: numbers, lines: numbers.map((r) => r + 1) },
      texts.map((_, j) => j),
    );
  };

  it('sends every slice exactly once, in full requests within the limits, at most perNode at a time per node', async () => {
    const sent: Array<{ node: number; parts: QueuedSlice<number>[]; length: number }> = [];
    const flying = [0, 0, 0];
    let most = 0;
    const queue = new OwnerQueue<number>({
      nodes: 3,
      batchSize: 10,
      batchBytes: 1 << 20,
      perNode: 2,
      budget: 1 << 30,
      send: async (node, parts) => {
        flying[node]!++;
        most = Math.max(most, flying[node]!);
        // What is sent is fixed now: a part added to `parts` later would be settled without being sent.
        sent.push({ node, parts, length: parts.length });
        await new Promise((r) => setTimeout(r, 2));
        flying[node]!--;
      },
    });
    let record = 1;
    const all: OwnerSlice[] = [];
    for (let b = 0; b < 40; b++) {
      const slices = [0, 1, 2].map((node) => slice(node, 1 + ((b * 5 + node * 3) % 7), (record += 10)));
      all.push(...slices);
      await queue.add(b, slices);
    }
    await queue.flushAll();
    for (const s of sent) expect(s.parts).toHaveLength(s.length);
    const seen = sent.flatMap((s) => s.parts.map((p) => p.slice));
    expect(seen).toHaveLength(all.length);
    expect(new Set(seen)).toEqual(new Set(all));
    for (const s of sent) {
      expect(s.parts.every((p) => p.slice.node === s.node)).toBe(true);
      expect(s.parts.reduce((a, p) => a + p.slice.count, 0)).toBeLessThanOrEqual(10);
      const joined = joinSlices(
        s.node,
        s.parts.map((p) => p.slice),
      );
      expect(JSON.parse(joined.body.toString())).toHaveLength(joined.count);
      expect(joined.records).toEqual(s.parts.flatMap((p) => Array.from(p.slice.index, (k) => p.slice.batch.records[k])));
      expect(joined.lines).toEqual(joined.records.map((r) => r + 1));
    }
    // Full requests: all but each node's last hold more than half the limit.
    expect(sent.length).toBeLessThan(all.reduce((a, s) => a + s.count, 0) / 5 + 3);
    expect(most).toBeLessThanOrEqual(2);
  });

  it('sends the fullest queue early once all of them hold more than the budget', async () => {
    const sizes: number[] = [];
    const queue = new OwnerQueue<number>({
      nodes: 4,
      batchSize: 1000,
      batchBytes: 1 << 20,
      perNode: 1,
      budget: 2000,
      send: async (_, parts) => void sizes.push(parts.reduce((a, p) => a + p.slice.size + 2, 0)),
    });
    for (let b = 0; b < 20; b++)
      await queue.add(
        b,
        [0, 1, 2, 3].map((node) => slice(node, 2, b * 10 + node * 2)),
      );
    expect(sizes.length).toBeGreaterThan(0);
    const waiting = (queue as unknown as { waitingBytes: number }).waitingBytes;
    expect(waiting).toBeLessThanOrEqual(2000);
    const dropped = await queue.drop();
    expect(dropped.length).toBeGreaterThan(0);
    expect((queue as unknown as { waitingBytes: number }).waitingBytes).toBe(0);
  });
});
