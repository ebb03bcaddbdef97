/**
 * The production store's documentation examples, sent as the pages show them to real reference
 * nodes (`tsnode serve` processes). Each case names its page; where the node answers otherwise
 * than the page, the test says what it expects instead and docs/node-api.md says why.
 */
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { encodeHistogram } from '../../src/protocol/index.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { READ_HISTOGRAM_DOC, READ_ROLLUP_DOC, READ_TEXT_DOC, SWEEP_DOC, WRITE_HISTOGRAM_DOC, WRITE_NNT_DOC, WRITE_TEXT_DOC, ADVISORY_NO_LIMIT } from './fixtures/store-docs.js';
import { CURL_FORM, rawRequest } from './http.js';

let doc300: TestNode;
let node: TestNode;
/** Sweeps get a node of their own: they delete before 2017, where the other examples write. */
let sweeper: TestNode;

beforeAll(async () => {
  [doc300, node, sweeper] = await Promise.all([startNode({ memory: true, rollups: [...WRITE_NNT_DOC.rollups] }), startNode({ memory: true }), startNode({ memory: true })]);
});
afterAll(() => stopAllNodes());

const post = (base: string, path: string, body: string, headers: Record<string, string> = CURL_FORM) => rawRequest(base, 'POST', path, { headers, body });

describe(`${WRITE_NNT_DOC.page}: the example data.json`, () => {
  it('is stored whatever the content type says (curl -d labels it form data), on a node with the smallest rollup 300 s', async () => {
    const r = await post(doc300.url, '/write/nnt', WRITE_NNT_DOC.body);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
    for (const metric of WRITE_NNT_DOC.metrics) {
      const read = await rawRequest(doc300.url, 'GET', `/rollup/${WRITE_NNT_DOC.uuid}/${metric}?start_ts=1408724400.000&end_ts=1408724700.000&rollup_span=300s&type=all`);
      expect(read.status, read.text).toBe(200);
      expect(read.json).toEqual([[WRITE_NNT_DOC.offset, expect.objectContaining({ count: 5, value: 100, stddev: 0 })]]);
      // The parts are the raw data: recalc at 60 s shows the five one-minute pieces.
      const pieces = await rawRequest(
        doc300.url,
        'GET',
        `/rollup/${WRITE_NNT_DOC.uuid}/${metric}?start_ts=1408724400.000&end_ts=1408724700.000&rollup_span=60s&get_engine=recalc&type=count`,
      );
      expect(pieces.json).toEqual([0, 1, 2, 3, 4].map((i) => [WRITE_NNT_DOC.offset + i * 60, 1]));
    }
  });

  it.each<[string, Record<string, string>]>([
    ['text/plain;charset=UTF-8 (what fetch() sends for a string)', { 'content-type': 'text/plain;charset=UTF-8' }],
    ['no content type (the production Go client)', {}],
    ['application/json', { 'content-type': 'application/json' }],
    ['a type that is not JSON at all', { 'content-type': 'text/csv' }],
  ])('is stored when labelled %s', async (_what, headers) => {
    const r = await post(doc300.url, '/write/nnt', WRITE_NNT_DOC.body, headers);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
  });

  it('a body that is not JSON is a 400 that says so, whatever the label', async () => {
    for (const headers of [CURL_FORM, { 'content-type': 'application/json' }, {}] as Array<Record<string, string>>) {
      const r = await post(doc300.url, '/write/nnt', 'metric=example1&value=100', headers);
      expect(r.status, r.text).toBe(400);
      expect(r.json.code).toBe('invalid_json');
      expect(r.json.error).toMatch(/not JSON/);
    }
  });
});

describe(`${WRITE_HISTOGRAM_DOC.page}: the example data.json`, () => {
  it('is stored as curl -d sends it', async () => {
    const r = await post(node.url, '/histogram/write', WRITE_HISTOGRAM_DOC.body);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
    const back = await rawRequest(node.url, 'GET', '/histogram/1408724400/1408724400/60/ae0f7f90-2a6b-481c-9cf5-21a31837020e/example1');
    // "AAA=" is the store's encoding of a histogram with no bins: read back as an empty bin map.
    expect(back.json).toEqual([[1408724400, 60, {}]]);
  });
});

describe(`${WRITE_TEXT_DOC.page}: the attached text`, () => {
  it('as printed it is not JSON (a comma before the closing bracket): a 400 that points at the comma', async () => {
    const r = await post(node.url, '/write/text', WRITE_TEXT_DOC.body);
    expect(r.status, r.text).toBe(400);
    expect(r.json.code).toBe('invalid_json');
    expect(r.json.error).toMatch(/trailing comma/);
  });

  it('without that comma it is stored, string offsets and all', async () => {
    const fixed = WRITE_TEXT_DOC.body.replace(/},\s*\]/, '}]');
    const r = await post(node.url, '/write/text', fixed);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
    const back = await rawRequest(node.url, 'GET', '/read/1408724400/1408724401/ae0f7f90-2a6b-481c-9cf5-21a31837020e/textexample2');
    expect(back.json).toEqual([[1408724400000, 'this_is_also_a_test']]);
  });
});

describe(`${READ_ROLLUP_DOC.page}: the example request`, () => {
  it("answers exactly the page's Example 1 Output (second-order members 0 after an empty bucket)", async () => {
    const w = await post(node.url, '/write/nnt', JSON.stringify(READ_ROLLUP_DOC.records));
    expect(w.status, w.text).toBe(200);
    const r = await rawRequest(node.url, 'GET', READ_ROLLUP_DOC.path);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual(JSON.parse(READ_ROLLUP_DOC.output));
    // The members in the page's order, too.
    expect(Object.keys(r.json[0][1])).toEqual(Object.keys(JSON.parse(READ_ROLLUP_DOC.output)[0][1]));
  });

  it.each(ADVISORY_NO_LIMIT)('x-snowth-advisory-limit: %s lifts the limit', async (value) => {
    const r = await rawRequest(node.url, 'GET', READ_ROLLUP_DOC.path, { headers: { 'x-snowth-advisory-limit': value } });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toHaveLength(3);
    expect(r.headers['x-snowth-results-limited']).toBeUndefined();
  });

  it('x-snowth-advisory-limit: 2 cuts the answer and says so', async () => {
    const r = await rawRequest(node.url, 'GET', READ_ROLLUP_DOC.path, { headers: { 'x-snowth-advisory-limit': '2' } });
    expect(r.json).toHaveLength(2);
    expect(r.headers['x-snowth-results-limited']).toBe('1');
  });

  it("refuses the page's own counter-example 12345.6 and a bare integer, naming the flag that allows the latter", async () => {
    const bad = await rawRequest(node.url, 'GET', READ_ROLLUP_DOC.path.replace('1529509020.000', '1529509020.6'));
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_query');
    const bare = await rawRequest(node.url, 'GET', READ_ROLLUP_DOC.path.replace('1529509020.000', '1529509020'));
    expect(bare.status).toBe(400);
    expect(bare.json.error).toContain('--lenient-timestamps');
  });
});

describe(`${SWEEP_DOC.page}: the DELETE examples`, () => {
  it.each(SWEEP_DOC.deletes.map((d) => [d.what, d.headers] as const))('deleting %s starts a sweep: []', async (_what, headers) => {
    const r = await rawRequest(sweeper.url, 'DELETE', '/sweep_delete', { headers });
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual([]);
    const status = await rawRequest(sweeper.url, 'GET', '/sweep_delete');
    for (const type of ['nnt', 'text', 'histogram']) expect(status.json[type].running).toMatch(/^(true|false)$/);
  });

  it('errors name the headers as the request spelled them (X-Snowth-...)', async () => {
    const r = await rawRequest(sweeper.url, 'DELETE', '/sweep_delete', { headers: { 'X-Snowth-Delete-Time': '1496275200', 'X-Snowth-NNT-Delete-Rollups': '61' } });
    expect(r.status).toBe(400);
    expect(r.json.error).toMatch(/^X-Snowth-NNT-Delete-Rollups: 61/);
    expect(r.text).not.toContain('X-Service');
    const future = await rawRequest(sweeper.url, 'DELETE', '/sweep_delete', { headers: { 'X-Snowth-Delete-Time': '99999999999' } });
    expect(future.status).toBe(400);
    expect(future.json.error).toMatch(/^X-Snowth-Delete-Time: 99999999999 is in the future/);
    expect(future.json.field).toBe('X-Snowth-Delete-Time');
    const missing = await rawRequest(sweeper.url, 'DELETE', '/sweep_delete', { headers: { 'X-Snowth-Delete-Data-Types': 'nnt' } });
    expect(missing.status).toBe(400);
    expect(missing.json.error).toContain('X-Snowth-Delete-Time');
  });
});

describe(`${READ_TEXT_DOC.page}: the example request`, () => {
  it('answers change points with timestamps in milliseconds, end exclusive', async () => {
    const records = [
      { metric: READ_TEXT_DOC.metric, id: READ_TEXT_DOC.uuid, offset: 1380000000, value: 'value_2' },
      { metric: READ_TEXT_DOC.metric, id: READ_TEXT_DOC.uuid, offset: 1380000600, value: 'after the end' },
    ];
    expect((await post(node.url, '/write/text', JSON.stringify(records))).status).toBe(200);
    const r = await rawRequest(node.url, 'GET', READ_TEXT_DOC.path);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual([[1380000000000, 'value_2']]);
    // The shape of the page's output: [milliseconds, string] pairs.
    for (const [ts, v] of JSON.parse(READ_TEXT_DOC.output) as Array<[number, string]>) {
      expect(ts).toBeGreaterThan(1e12);
      expect(typeof v).toBe('string');
    }
  });
});

describe(`${READ_HISTOGRAM_DOC.page}: the example request`, () => {
  it('includes the end time (start and end are both inclusive)', async () => {
    const records = [1380000000, 1380000300, 1380000600, 1380000900].map((offset) => ({
      metric: READ_HISTOGRAM_DOC.metric,
      id: READ_HISTOGRAM_DOC.uuid,
      offset,
      period: 300,
      histogram: encodeHistogram(READ_HISTOGRAM_DOC.bins),
    }));
    expect((await post(node.url, '/histogram/write', JSON.stringify(records))).status).toBe(200);
    const r = await rawRequest(node.url, 'GET', READ_HISTOGRAM_DOC.path);
    expect(r.status, r.text).toBe(200);
    expect(r.json).toEqual([
      [1380000000, 300, READ_HISTOGRAM_DOC.bins],
      [1380000300, 300, READ_HISTOGRAM_DOC.bins],
      [1380000600, 300, READ_HISTOGRAM_DOC.bins],
    ]);
  });

  it("answers each histogram as the page's Example 1 Output does: a JSON object of bins to counts, one per value seen", async () => {
    const r = await rawRequest(node.url, 'GET', READ_HISTOGRAM_DOC.path);
    const doc = JSON.parse(READ_HISTOGRAM_DOC.output) as Array<[number, number, Record<string, number>]>;
    // The page names the bins 1 to 5; the store names the bin of 1 "+10e-001" (its Go client's fixtures): same counts.
    expect(r.json.slice(0, 2).map(([t, p, bins]: [number, number, Record<string, number>]) => [t, p, Object.values(bins)])).toEqual(
      doc.map(([t, p, bins]) => [t, p, Object.values(bins)]),
    );
    expect(Object.keys(r.json[0][2])).toEqual(Object.keys(doc[0]![2]).map((v) => READ_HISTOGRAM_DOC.binOf[v]));
  });
});
