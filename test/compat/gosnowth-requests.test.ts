/**
 * Requests shaped as the production Go client (circonus-labs/gosnowth) sends them, against real
 * reference nodes: no Content-Type, Connection: close, X-Snowth-Timeout, `parts:[0,null]`,
 * string text offsets, extra histogram fields, and bare integer timestamps, which a node takes
 * only when started with --lenient-timestamps.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { encodeHistogram } from '../../src/protocol/index.js';
import { Ring, type Topology } from '../../src/ring/index.js';
import {
  decodeHistogramValues,
  decodeLocateXml,
  GOSNOWTH_HEADERS,
  HISTOGRAM_ROWS,
  HISTOGRAM_WRITE_BODY,
  histogramPath,
  locateXmlPath,
  nntBody,
  rollupPath,
  textBody,
} from './fixtures/gosnowth.js';
import { rawRequest } from './http.js';

const ID = 'fc85e0ab-f568-45e6-86ee-d7443be8277d';
const T = 1529509020; // a multiple of 60

let strict: TestNode;
let lenient: TestNode;

beforeAll(async () => {
  [strict, lenient] = await Promise.all([startNode({ memory: true }), startNode({ memory: true, args: ['--lenient-timestamps'] })]);
});
afterAll(() => stopAllNodes());

const send = (node: TestNode, method: string, target: string, body?: string) =>
  rawRequest(node.url, method, target, { headers: { ...GOSNOWTH_HEADERS }, ...(body === undefined ? {} : { body }) });

describe('gosnowth writes', () => {
  it('WriteNNT: records without parts go out as "parts":[0,null] and are stored', async () => {
    const records = [0, 1, 2].map((i) => ({ metric: 'online', id: ID, offset: T + i * 60, count: 1, value: 10 + i }));
    const body = nntBody(records);
    expect(body).toContain('"parts":[0,null]');
    for (const node of [strict, lenient]) {
      const r = await send(node, 'POST', '/write/nnt', body);
      expect(r.status, r.text).toBe(200);
      expect(r.json).toEqual({ records: 3, updated: 3, misdirected: 0, errors: 0 });
      const read = await rawRequest(node.url, 'GET', `/rollup/${ID}/online?start_ts=${T}.000&end_ts=${T + 180}.000&rollup_span=60s`);
      expect(read.json).toEqual([
        [T, 10],
        [T + 60, 11],
        [T + 120, 12],
      ]);
    }
  });

  it('WriteNNT: a record with parts is stored with its pieces', async () => {
    const body = nntBody([
      {
        metric: 'withparts',
        id: ID,
        offset: T,
        count: 2,
        value: 3,
        parts: [
          30,
          [
            { count: 1, value: 2, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 },
            { count: 1, value: 4, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 },
          ],
        ],
      },
    ]);
    const r = await send(strict, 'POST', '/write/nnt', body);
    expect(r.status, r.text).toBe(200);
    const pieces = await rawRequest(strict.url, 'GET', `/rollup/${ID}/withparts?start_ts=${T}.000&end_ts=${T + 60}.000&rollup_span=30s&get_engine=recalc`);
    expect(pieces.json).toEqual([
      [T, 2],
      [T + 30, 4],
    ]);
  });

  it('also the other spellings of "no parts": null and [0,[]]', async () => {
    const body = nntBody([{ metric: 'noparts', id: ID, offset: T, count: 1, value: 1 }]);
    for (const spelled of ['null', '[0,[]]', '[ 0 , null ]', '[0, [ ]]']) {
      const r = await send(strict, 'PUT', '/write/nnt', body.replace('[0,null]', spelled));
      expect(r.status, `${spelled}: ${r.text}`).toBe(200);
    }
    // [0, [pieces]] is not "no parts": a period of 0 cannot hold pieces.
    const bad = await send(strict, 'POST', '/write/nnt', body.replace('[0,null]', '[0,[{"count":1,"value":1}]]'));
    expect(bad.status).toBe(400);
    expect(bad.json.field).toBe('parts[0]');
  });

  it("WriteText: offsets as strings, as gosnowth's TextData has them", async () => {
    const r = await send(strict, 'POST', '/write/text', textBody([{ metric: 'state', id: ID, offset: T, value: 'up' }]));
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ records: 1, updated: 1, misdirected: 0, errors: 0 });
    const back = await send(strict, 'GET', `/read/${T}/${T + 1}/${ID}/state`);
    expect(back.json).toEqual([[T * 1000, 'up']]);
    // A string that is not a whole number of seconds is still refused, naming the field.
    const bad = await send(strict, 'POST', '/write/text', textBody([{ metric: 'state', id: ID, offset: T, value: 'up' }]).replace(`"${T}"`, '"soon"'));
    expect(bad.status).toBe(400);
    expect(bad.json.field).toBe('offset');
  });

  it("WriteHistogram: gosnowth's own test record (with account_id and check_name) is stored", async () => {
    const r = await send(strict, 'POST', '/histogram/write', HISTOGRAM_WRITE_BODY);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ records: 1, updated: 1, misdirected: 0, errors: 0 });
  });
});

describe('gosnowth reads: bare integer start_ts/end_ts', () => {
  const path = rollupPath(ID, 'online', 60, T, T + 150, 'average');

  it('a strict node (the default) refuses them, naming --lenient-timestamps', async () => {
    expect(path).toContain(`start_ts=${T}&end_ts=${T + 180}&`);
    const r = await send(strict, 'GET', path);
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('invalid_query');
    expect(r.json.field).toBe('start_ts');
    expect(r.json.error).toContain('--lenient-timestamps');
    expect(r.json.error).toContain(`${T}.000`);
  });

  it('a node started with --lenient-timestamps reads them as .000', async () => {
    const r = await send(lenient, 'GET', path);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual([
      [T, 10],
      [T + 60, 11],
      [T + 120, 12],
    ]);
    const all = await send(lenient, 'GET', rollupPath(ID, 'online', 60, T, T + 150, 'all'));
    expect(all.json[0][1]).toMatchObject({ count: 1, value: 10, derivative2: 0, counter2: 0 });
  });

  it.each(['1529509020.0', '1529509020.00', '1529509020.0000', '1529509020.', '-1529509020', '0x5b2a'])('%s stays illegal in both modes', async (ts) => {
    for (const node of [strict, lenient]) {
      const r = await send(node, 'GET', `/rollup/${ID}/online?start_ts=${ts}&end_ts=${T + 180}&rollup_span=60s`);
      expect(r.status).toBe(400);
      expect(r.json.field).toBe('start_ts');
      expect(r.json.error).not.toContain('--lenient-timestamps');
    }
  });

  it('ReadHistogramValues: the rounded-up end is inclusive', async () => {
    const H = T - (T % 300);
    const recs = [0, 300, 600].map((d) => ({ metric: 'lat', id: ID, offset: H + d, period: 300, histogram: 'AAA=' }));
    expect((await send(strict, 'POST', '/histogram/write', JSON.stringify(recs))).status).toBe(200);
    // gosnowth asks for [floor(start), floor(end) + period]: here /histogram/H/H+300/...
    const path = histogramPath(ID, 'lat', 300, H, H + 10);
    expect(path).toContain(`/histogram/${H}/${H + 300}/300/`);
    const r = await send(strict, 'GET', path);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual([
      [H, 300, {}],
      [H + 300, 300, {}],
    ]);
  });

  it("ReadHistogramValues: its decoder gets every bin and count of what was written (histogram_test.go's fixture, written and read back)", async () => {
    // The fixture's rows, written in the store's encoding, come back as gosnowth's own test expects them.
    const expected = decodeHistogramValues(HISTOGRAM_ROWS);
    const recs = expected.map((v) => ({ metric: 'example1', id: ID, offset: v.timeS, period: v.periodS, histogram: encodeHistogram(v.data!) }));
    const w = await send(strict, 'POST', '/histogram/write', JSON.stringify(recs));
    expect(w.status, w.text).toBe(200);
    // histogram_test.go reads [1556290800, 1556291200] with a 300 s period: /histogram/1556290800/1556291400/300/...
    const path = histogramPath(ID, 'example1', 300, 1556290800, 1556291200);
    expect(path).toBe(`/histogram/1556290800/1556291400/300/${ID}/example1`);
    const r = await send(strict, 'GET', path);
    expect(r.status, r.text).toBe(200);
    const got = decodeHistogramValues(r.text);
    expect(got).toEqual(expected);
    expect(got[0]!.data!['+23e-004']).toBe(1);
  });
});

describe('gosnowth LocateMetricRemote: GET /locate/xml/<uuid>/<metric>', () => {
  const IDS = ['1f846f26-0cfd-4df5-b4f1-e0930604e577', '07fa2237-5744-4c28-a622-a99cfc1ac87e', '765ac4cc-1929-4642-9ef1-d194d08f9538'];
  const topology: Topology = { writeCopies: 2, nodes: IDS.map((id, i) => ({ id, address: `10.8.20.${i + 1}`, port: 8112, apiport: 8112, weight: 32 })) };
  let ringNode: TestNode;

  beforeAll(async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-locate-'));
    writeFileSync(join(dir, 'ring.json'), JSON.stringify({ write_copies: 2, nodes: topology.nodes }));
    ringNode = await startNode({ memory: true, args: ['--node-id', IDS[0]!, '--topology', join(dir, 'ring.json')] });
  });

  it("decodes, by its rules, to the metric's owners with their addresses and ports", async () => {
    for (const metric of ['example', 'cpu.user', 'latency|ST[host:alpha4.internal]']) {
      const r = await send(ringNode, 'GET', locateXmlPath(ID, metric));
      expect(r.status, r.text).toBe(200);
      const decoded = decodeLocateXml(r.text);
      expect(decoded.writeCopies).toBe(2);
      const owners = Ring.compile(topology).ownersOf(ID, metric);
      expect(decoded.nodes).toEqual(owners.map((n) => ({ id: n.id, address: n.address, port: 8112, apiport: 8112, weight: 32 })));
    }
  });
});
