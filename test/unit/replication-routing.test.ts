import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Ring, topologyFromJson } from '../../src/ring/index.js';
import { Replication } from '../../src/server/replication/replication.js';
import { parseNntBody } from '../../src/server/nnt-body.js';
import { packedShape, peerShare, recordsShape } from '../../src/server/replication/write-routing.js';

const SPAN = 60;
const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';

/** A peer's share as the body its replayer would send. */
const asArray = (pieces: readonly Uint8Array[]): unknown[] => JSON.parse(`[${pieces.map((p) => Buffer.from(p).toString('utf8')).join(',')}]`) as unknown[];

describe("a peer's share of a write is journaled as the client's own bytes", () => {
  const records = [
    { id: ID, metric: 'a', offset: 120, count: 1, value: 1 },
    { id: ID.toUpperCase(), metric: 'ü|ST[°C]', offset: 60, count: 2, value: 2.5 },
    { id: ID, metric: 'c', offset: 180, count: 1, value: -3 },
    { id: ID, metric: 'd', offset: 240, count: 1, value: 4e-7 },
  ];
  // Whitespace between and inside records, as a client may send them.
  const body = Buffer.from(`[ ${records.map((r, i) => (i === 1 ? JSON.stringify(r, null, 1) : JSON.stringify(r))).join(' ,\n')} ]`);

  it('every record: one slice of the body, its oldest time the smallest offset', () => {
    const parsed = parseNntBody(body, SPAN, true)!;
    const share = peerShare(packedShape(parsed, body), 'all');
    expect(share.pieces).toHaveLength(1);
    expect(share.records).toBe(4);
    expect(share.oldest).toBe(60);
    expect(asArray(share.pieces)).toEqual(records);
    expect(Buffer.from(share.pieces[0]!).toString()).toContain(ID.toUpperCase()); // spelled as sent
  });

  it('some records: one slice per run of consecutive records', () => {
    const parsed = parseNntBody(body, SPAN, true)!;
    const share = peerShare(packedShape(parsed, body), [0, 1, 3]);
    expect(share.pieces).toHaveLength(2);
    expect(share.records).toBe(3);
    expect(share.oldest).toBe(60);
    expect(asArray(share.pieces)).toEqual([records[0], records[1], records[3]]);
  });

  it('the same records whatever the path: body slices from the fast parse, found in the body, or the general path', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.record({
            metric: fc.constantFrom('a', 'b', 'x|ST[k:v]', 'q"uo\\te,]'),
            offset: fc.integer({ min: 0, max: 1000 }).map((n) => n * SPAN),
            value: fc.double({ noNaN: true, noDefaultInfinity: true }),
          }),
          {
            minLength: 1,
            maxLength: 30,
          },
        ),
        fc.array(fc.boolean(), { minLength: 30, maxLength: 30 }),
        fc.boolean(),
        (recs, pick, spaced) => {
          const full = recs.map((r) => ({ id: ID, count: 1, ...r }));
          const text = spaced ? ` [\n${full.map((r) => JSON.stringify(r, null, 1)).join(' ,\n ')} ]\n` : JSON.stringify(full);
          const bytes = Buffer.from(text);
          const selection = full.map((_, i) => i).filter((i) => pick[i]);
          const want = JSON.parse(JSON.stringify(selection.map((i) => full[i]))) as Array<Record<string, unknown>>;
          const withSpans = parseNntBody(bytes, SPAN, true);
          const without = parseNntBody(bytes, SPAN, false);
          for (const parsed of [withSpans, without]) if (parsed) expect(asArray(peerShare(packedShape(parsed, bytes), selection).pieces)).toEqual(want);
          expect(asArray(peerShare(recordsShape(bytes, full, full), selection).pieces)).toEqual(want);
          expect(asArray(peerShare(recordsShape(bytes, full, full), 'all').pieces)).toEqual(JSON.parse(text));
        },
      ),
      { numRuns: 200 },
    );
  });

  it('text records go on as the client spelled them: escapes, key order and numbers unchanged', () => {
    const spelled = [
      `{"metric":"m","id":"${ID}","offset":1700000000,"value":"caf\\u00e9 [a,b] \\"q\\" \\\\"}`,
      `{ "value" : "x" , "offset":1.7e9, "id":"${ID}", "metric":"m2" }`,
      `{"id":"${ID}","metric":"m","offset":1700000060,"value":"ü"}`,
    ];
    const bytes = Buffer.from(`[${spelled.join(',')}]`);
    const items = JSON.parse(bytes.toString()) as Array<{ id: string; metric: string; offset: number }>;
    const shape = recordsShape(bytes, items, items);
    expect(peerShare(shape, 'all').pieces.map((p) => Buffer.from(p).toString())).toEqual([spelled.join(',')]);
    expect(peerShare(shape, [0, 2]).pieces.map((p) => Buffer.from(p).toString())).toEqual([spelled[0], spelled[2]]);
    expect(peerShare(shape, [1]).pieces.map((p) => Buffer.from(p).toString())).toEqual([spelled[1]]);
  });
});

describe('routing a write by owner', () => {
  const open: Array<{ repl: Replication; dir: string }> = [];
  afterEach(async () => {
    for (const o of open.splice(0)) {
      await o.repl.close();
      rmSync(o.dir, { recursive: true, force: true });
    }
  });

  function replication(nodes: number, copies: number): { repl: Replication; ring: Ring; ids: string[] } {
    const ids = Array.from({ length: nodes }, () => randomUUID());
    const ring = Ring.compile(topologyFromJson({ write_copies: copies, nodes: ids.map((id, i) => ({ id, address: '127.0.0.1', port: 9000 + i, apiport: 9000 + i, weight: 32 })) }));
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-route-'));
    const repl = new Replication({
      selfId: ids[0]!,
      ring,
      journalDir: dir,
      batchRecords: 10,
      concurrency: 1,
      maxBatchBytes: 1 << 20,
      gossipIntervalMs: 1000,
      now: Date.now,
      onNotice: () => {},
    });
    open.push({ repl, dir });
    return { repl, ring, ids };
  }

  const series = (n: number): { id: string[]; metric: string[] } => ({ id: Array.from({ length: n }, () => ID), metric: Array.from({ length: n }, (_, k) => `m${k}`) });

  it('every node owning every metric: all records here and to each peer', () => {
    const { repl, ids } = replication(2, 2);
    const routes = repl.routeRecords(
      200,
      () => series(50),
      (i) => i % 50,
    );
    expect(routes.local).toBe('all');
    expect([...routes.peers]).toEqual([[ids[1], 'all']]);
    expect(routes.misdirected).toBe(0);
  });

  it('metrics with the same owners go the same way, whichever of them is primary', () => {
    const { repl, ring, ids } = replication(3, 2);
    const both = new Set([ids[0], ids[1]]);
    const metric = series(400).metric.filter((m) => ring.ownersOf(ID, m).every((n) => both.has(n.id)));
    // Both orders of primary occur among these metrics: the route must not depend on it.
    expect(new Set(metric.map((m) => ring.ownersOf(ID, m)[0]!.id)).size).toBe(2);
    const routes = repl.routeRecords(
      metric.length * 3,
      () => ({ id: metric.map(() => ID), metric }),
      (i) => i % metric.length,
    );
    expect(routes.local).toBe('all');
    expect([...routes.peers]).toEqual([[ids[1], 'all']]);
    expect(routes.misdirected).toBe(0);
  });

  it('some metrics owned elsewhere: each record goes exactly to its owners, and the others are counted misdirected', () => {
    const { repl, ring, ids } = replication(3, 2);
    const s = series(40);
    const seriesOf = (i: number): number => (i * 7) % 40;
    const routes = repl.routeRecords(120, () => s, seriesOf);
    const owners = (i: number): string[] => ring.ownersOf(ID, s.metric[seriesOf(i)]!).map((n) => n.id);
    const all = Array.from({ length: 120 }, (_, i) => i);
    expect(routes.local).toEqual(all.filter((i) => owners(i).includes(ids[0]!)));
    for (const peer of ids.slice(1)) expect(routes.peers.get(peer) ?? []).toEqual(all.filter((i) => owners(i).includes(peer)));
    expect(routes.misdirected).toBe(all.filter((i) => !owners(i).includes(ids[0]!)).length);
  });
});
