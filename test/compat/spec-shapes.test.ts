/**
 * Every endpoint the reference node serves that the store's OpenAPI specs describe, answered with
 * the spec's field names and types (circonus/product-docs 363d7be, static/yaml/administration.yaml
 * and developer.yaml; the zod schemas in fixtures/spec-schemas.ts, each named after the spec's
 * component). Real nodes: one on a data dir in a three-node ring (it owns some metrics, not all),
 * one in memory without a ring.
 */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ring, topologyHash, type Topology } from '../../src/ring/index.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import {
  CapaResponse,
  DeleteResponse,
  ErrorResponse,
  FindTagsResult,
  FullCanonicalDeleteResponse,
  FourPointResponse,
  GossipJSONResponse,
  HistogramTuples,
  LocateResponse,
  NntbsShardList,
  NumericTuples,
  ObjectTuplesAllTypes,
  shapeIssues,
  ShardStartEndJSONResponse,
  StateResponse,
  StatsResponse,
  TextTuples,
  TopoDataResponse,
  TopoRingDataResponse,
} from './fixtures/spec-schemas.js';
import { rawRequest } from './http.js';

const IDS = [randomUUID(), randomUUID(), randomUUID()];
const CHECK = 'fc85e0ab-f568-45e6-86ee-d7443be8277d';
const T = 1529509020;
const topology: Topology = { writeCopies: 2, nodes: IDS.map((id, i) => ({ id, address: '127.0.0.1', port: 21_000 + i, apiport: 21_000 + i, weight: 8 })) };
const hash = topologyHash(topology);
const ring = Ring.compile(topology);

let onDisk: TestNode;
let inMemory: TestNode;

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'tsnode-spec-'));
  const file = join(dir, 'ring.json');
  writeFileSync(file, JSON.stringify({ write_copies: 2, nodes: topology.nodes }));
  [onDisk, inMemory] = await Promise.all([startNode({ args: ['--node-id', IDS[0]!, '--topology', file] }), startNode({ memory: true })]);
});
afterAll(() => stopAllNodes());

const get = (node: TestNode, path: string) => rawRequest(node.url, 'GET', path);
const post = (node: TestNode, path: string, body: unknown) => rawRequest(node.url, 'POST', path, { body: JSON.stringify(body) });
/** Fails naming every field that is off (an empty string is "the shape holds"). */
const expectShape = (schema: Parameters<typeof shapeIssues>[0], value: unknown): void => expect(shapeIssues(schema, value)).toBe('');

describe('administration.yaml', () => {
  it('GET /state: StateResponse, with nntbs.rollups and each rollup_<period>.fs {id, totalMB, freeMB} from the data dir', async () => {
    const r = await get(onDisk, '/state');
    expect(r.status).toBe(200);
    expectShape(StateResponse({ requireFs: true }), r.json);
    expect(r.json).toMatchObject({ identity: IDS[0], current: hash, next: '-', base_rollup: 60 });
    const fs = r.json.nntbs.rollup_60.fs;
    expect(fs.totalMB).toBeGreaterThan(0);
    expect(fs.freeMB).toBeGreaterThan(0);
    expect(fs.freeMB).toBeLessThanOrEqual(fs.totalMB);
    // One file system under every rollup (the data dir's), read fresh on each call.
    expect(r.json.histogram.rollup_60.fs.id).toBe(fs.id);
    expect(r.json.text.fs.id).toBe(fs.id);
  });

  it('GET /state of a --memory node: StateResponse without fs (it has no file system to report)', async () => {
    const r = await get(inMemory, '/state');
    expectShape(StateResponse({ requireFs: false }), r.json);
    expect(r.json.nntbs.rollup_60).toBeUndefined();
    expect(r.json.current).toBe('-');
  });

  it('GET /stats.json: StatsResponse (the default format)', async () => {
    expectShape(StatsResponse, (await get(onDisk, '/stats.json')).json);
  });

  it('GET /capa.json: CapaResponse', async () => {
    const r = await get(onDisk, '/capa.json');
    expect(r.status).toBe(200);
    expectShape(CapaResponse, r.json);
  });

  it('GET /gossip/json: GossipJSONResponse (times and latencies as strings)', async () => {
    const r = await get(onDisk, '/gossip/json');
    expectShape(GossipJSONResponse, r.json);
    expect(r.json[0].id).toBe(IDS[0]);
  });

  it('GET /topology/json/<hash>: TopoDataResponse', async () => {
    const r = await get(onDisk, `/topology/json/${hash}`);
    expectShape(TopoDataResponse, r.json);
    expect(r.json.map((n: { id: string }) => n.id)).toEqual(IDS);
  });

  it('GET /toporing/json/<hash>: TopoRingDataResponse, every slot once, in ring order', async () => {
    const r = await get(onDisk, `/toporing/json/${hash}`);
    expect(r.status, r.text).toBe(200);
    expectShape(TopoRingDataResponse, r.json);
    expect(r.json).toHaveLength(24);
    const locations = r.json.map((s: { location: number }) => s.location);
    expect(locations).toEqual([...locations].sort((a, b) => a - b));
    expect(locations.every((l: number) => l >= 0 && l < 1)).toBe(true);
    expect(new Set(r.json.map((s: { id: string; idx: number }) => `${s.id}/${s.idx}`)).size).toBe(24);
    expect(Math.min(...r.json.map((s: { idx: number }) => s.idx))).toBe(1);
    expect((await get(onDisk, '/toporing/json/00')).status).toBe(404);
  });
});

describe('administration.yaml: the shard inventories', () => {
  it('GET /list_nntbs_shards, /raw/list_shards, /histogram_raw/list_shards, /histogram/<period>/list_shards', async () => {
    await post(inMemory, '/write/nnt', [{ metric: 'shards', id: CHECK, offset: T, count: 1, value: 1 }]);
    await post(inMemory, '/histogram/write', [{ metric: 'shards', id: CHECK, offset: T, period: 60, histogram: 'AAA=' }]);
    const nntbs = await get(inMemory, '/list_nntbs_shards');
    expectShape(NntbsShardList, nntbs.json);
    expect(nntbs.json[0].shard.length).toBeGreaterThan(0);
    for (const path of ['/raw/list_shards', '/histogram_raw/list_shards', '/histogram/60/list_shards']) {
      const r = await get(inMemory, path);
      expect(r.status, `${path}: ${r.text}`).toBe(200);
      expectShape(ShardStartEndJSONResponse, r.json);
    }
  });
});

describe('developer.yaml: tag queries', () => {
  const ACCOUNT = { 'x-snowth-account-id': '1' };
  const query = `query=${encodeURIComponent('and(__name:tagged)')}`;

  it('GET /find/tags: FindTagsResult per metric', async () => {
    await post(inMemory, '/write/nnt', [{ metric: 'tagged|ST[host:a]', id: CHECK, offset: T, count: 1, value: 1 }]);
    const r = await rawRequest(inMemory.url, 'GET', `/find/tags?${query}`, { headers: ACCOUNT });
    expect(r.status, r.text).toBe(200);
    expectShape(FindTagsResult, r.json);
    expect(r.json).toHaveLength(1);
  });

  it('DELETE /full/tags and /nnt/tags (dry runs): DeleteResponse; DELETE /full/canonical: FullCanonicalDeleteResponse', async () => {
    for (const [path, headers] of [
      ['/full/tags', ACCOUNT],
      ['/nnt/tags', { ...ACCOUNT, 'x-snowth-delete-time': String(T + 60) }],
    ] as const) {
      const r = await rawRequest(inMemory.url, 'DELETE', `${path}?${query}`, { headers });
      expect(r.status, `${path}: ${r.text}`).toBe(200);
      expectShape(DeleteResponse, r.json);
      expect(r.json.length).toBeGreaterThan(0);
    }
    const c = await rawRequest(inMemory.url, 'DELETE', `/full/canonical/${CHECK}/${encodeURIComponent('tagged|ST[host:a]')}`, { headers: ACCOUNT });
    expect(c.status, c.text).toBe(200);
    expectShape(FullCanonicalDeleteResponse, c.json);
  });
});

describe('developer.yaml', () => {
  /** A metric this node owns, and one it does not, on the test ring. */
  const owned = (mine: boolean): string => {
    for (let i = 0; ; i++) if (ring.ownersOf(CHECK, `m${i}`).some((n) => n.id === IDS[0]) === mine) return `m${i}`;
  };

  it('POST /write/nnt: FourPointResponse; a record of a metric the node does not own is counted misdirected', async () => {
    const rec = (metric: string) => ({ metric, id: CHECK, offset: T, count: 1, value: 1 });
    const r = await post(onDisk, '/write/nnt', [rec(owned(true)), rec(owned(false)), rec(owned(false))]);
    expect(r.status, r.text).toBe(200);
    expectShape(FourPointResponse, r.json);
    expect(r.json).toEqual({ records: 3, updated: 3, misdirected: 2, errors: 0 });
    // Without a ring every metric is the node's own.
    expect((await post(inMemory, '/write/nnt', [rec('x')])).json).toEqual({ records: 1, updated: 1, misdirected: 0, errors: 0 });
  });

  it('POST /write/text and /histogram/write: FourPointResponse', async () => {
    const text = await post(onDisk, '/write/text', [{ metric: owned(false), id: CHECK, offset: String(T), value: 'up' }]);
    expectShape(FourPointResponse, text.json);
    expect(text.json.misdirected).toBe(1);
    const hist = await post(onDisk, '/histogram/write', [{ metric: owned(true), id: CHECK, offset: T, period: 60, histogram: 'AAEX/QAB' }]);
    expectShape(FourPointResponse, hist.json);
    expect(hist.json).toEqual({ records: 1, updated: 1, misdirected: 0, errors: 0 });
  });

  it('GET /histogram/<start>/<end>/<period>/<uuid>/<metric>: HistogramTuples, each histogram an object of bins to counts', async () => {
    await post(inMemory, '/histogram/write', [
      { metric: 'lat', id: CHECK, offset: T, period: 60, histogram: 'AAJV/QABF/0AAQ==' },
      { metric: 'lat', id: CHECK, offset: T + 60, period: 60, histogram: 'AAA=' },
    ]);
    const r = await get(inMemory, `/histogram/${T}/${T + 60}/60/${CHECK}/lat`);
    expectShape(HistogramTuples, r.json);
    expect(r.json).toEqual([
      [T, 60, { '+85e-004': 1, '+23e-004': 1 }],
      [T + 60, 60, {}],
    ]);
  });

  it('POST /histogram/write: a histogram the node cannot decode is refused, naming the field (nothing stored)', async () => {
    const r = await post(inMemory, '/histogram/write', [{ metric: 'bad', id: CHECK, offset: T, period: 60, histogram: 'AAEC' }]);
    expect(r.status).toBe(400);
    expectShape(ErrorResponse, r.json);
    expect(r.json).toMatchObject({ code: 'invalid_record', field: 'histogram' });
    expect(r.json.error).toContain("not a histogram in the store's encoding");
  });

  it('GET /read/<start>/<end>/<uuid>/<metric>: TextTuples (milliseconds, as the spec and the docs give them)', async () => {
    await post(inMemory, '/write/text', [{ metric: 'state', id: CHECK, offset: T, value: 'up' }]);
    const r = await get(inMemory, `/read/${T}/${T + 1}/${CHECK}/state`);
    expectShape(TextTuples, r.json);
    expect(r.json).toEqual([[T * 1000, 'up']]);
  });

  it('GET /rollup: NumericTuples and ObjectTuplesAllTypes; get_engine=dispatch_coarsen and the derivative aliases are accepted', async () => {
    await post(inMemory, '/write/nnt', [{ metric: 'cpu', id: CHECK, offset: T, count: 1, value: 5, derivative: 2 }]);
    const q = `start_ts=${T}.000&end_ts=${T + 120}.000&rollup_span=60s`;
    const plain = await get(inMemory, `/rollup/${CHECK}/cpu?${q}&get_engine=dispatch_coarsen`);
    expect(plain.status, plain.text).toBe(200);
    expectShape(NumericTuples, plain.json);
    expect(plain.json).toEqual([
      [T, 5],
      [T + 60, null],
    ]);
    for (const type of ['derivative', 'derivative_stddev', 'derivative2', 'derivative2_stddev']) {
      const r = await get(inMemory, `/rollup/${CHECK}/cpu?${q}&type=${type}`);
      expect(r.status, `${type}: ${r.text}`).toBe(200);
      expectShape(NumericTuples, r.json);
    }
    expect((await get(inMemory, `/rollup/${CHECK}/cpu?${q}&type=derivative`)).json[0]).toEqual([T, 2]);
    expectShape(ObjectTuplesAllTypes, (await get(inMemory, `/rollup/${CHECK}/cpu?${q}&type=all`)).json);
  });

  it('errors: Error {"error": "..."} (the node adds its code and details: an extension)', async () => {
    const r = await get(inMemory, `/rollup/${CHECK}/cpu?start_ts=1.000&end_ts=2.000&rollup_span=60s&get_engine=fast`);
    expect(r.status).toBe(400);
    expectShape(ErrorResponse, r.json);
    expect(r.json.error).toContain('dispatch_coarsen');
  });

  it('GET /locate/json/<uuid>/<metric>: LocateResponse', async () => {
    const r = await get(onDisk, `/locate/json/${CHECK}/cpu`);
    expectShape(LocateResponse, r.json);
  });

  it('GET /locate/xml/<uuid>/<metric>: LocateResponse as XML, the owners primary first', async () => {
    const r = await get(onDisk, `/locate/xml/${CHECK}/cpu`);
    expect(r.status, r.text).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/xml/);
    const ids = [...r.text.matchAll(/<node id="([^"]+)"/g)].map((m) => m[1]);
    expect(ids).toEqual(ring.ownersOf(CHECK, 'cpu').map((n) => n.id));
    expect(r.text).toMatch(/^<nodes n="2" write_copies="2">/);
    expect((await get(inMemory, `/locate/xml/${CHECK}/cpu`)).status).toBe(404);
  });
});
