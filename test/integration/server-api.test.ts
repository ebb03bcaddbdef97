import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { RunningNode } from '../../src/server/server.js';
import { UUID, call, memoryNode, nnt, rollup, rollupPath, write } from './server-helpers.js';

let node: RunningNode;
let url: string;
const NOW = 1_800_000_000_000;

beforeAll(async () => {
  node = await memoryNode({ rollups: [60, 300], histogramRollups: [60, 3600], maxBodyBytes: 64 * 1024, maxBuckets: 1000, now: () => NOW });
  url = node.url;
});
afterAll(() => node.close());

function expectError(r: { status: number; json: any; text: string; headers: Record<string, unknown> }, status: number, code: string, ...mentions: string[]): void {
  expect(r.status, r.text).toBe(status);
  expect(r.headers['content-type']).toMatch(/^application\/json/);
  expect(typeof r.json?.error).toBe('string');
  expect(r.json.code).toBe(code);
  for (const m of mentions) expect(r.json.error).toContain(m);
}

describe('errors are JSON with the right status', () => {
  it('404 for an unknown path', async () => {
    expectError(await call(url, 'GET', '/nope'), 404, 'not_found', '/nope');
    expectError(await call(url, 'GET', '/'), 404, 'not_found');
    expectError(await call(url, 'GET', '/sweep_delete/cancel/x'), 404, 'not_found');
  });

  it('405 with Allow for a wrong method', async () => {
    const r = await call(url, 'PUT', '/sweep_delete');
    expectError(r, 405, 'method_not_allowed', 'PUT');
    expect(r.headers.allow).toBe('GET, DELETE');
    const w = await call(url, 'GET', '/write/nnt');
    expectError(w, 405, 'method_not_allowed');
    expect(w.headers.allow).toBe('PUT, POST');
    expect((await call(url, 'DELETE', `/rollup/${UUID}/cpu`)).headers.allow).toBe('GET');
  });

  it('400 for a body that is not JSON, whatever its content type says (and no 415 for a JSON body labelled otherwise)', async () => {
    for (const path of ['/write/nnt', '/write/text', '/histogram/write']) {
      expectError(await call(url, 'POST', path, { headers: { 'content-type': 'text/csv' }, body: 'a,b' }), 400, 'invalid_json', 'not JSON');
      expectError(await call(url, 'POST', path, { headers: { 'content-type': 'application/json' }, body: '' }), 400, 'invalid_json', 'empty');
      const labelled = await call(url, 'POST', path, { headers: { 'content-type': 'application/x-www-form-urlencoded' }, body: '[]' });
      expect(labelled.status, labelled.text).toBe(200);
    }
  });

  it('413 for a body over the limit, declared or streamed', async () => {
    const big = JSON.stringify(Array.from({ length: 2000 }, (_, i) => nnt(i * 60)));
    expect(big.length).toBeGreaterThan(64 * 1024);
    expectError(await write(url, big), 413, 'body_too_large', String(64 * 1024));
    async function* chunks(): AsyncIterable<Buffer> {
      for (let i = 0; i < 200; i++) yield Buffer.from(' '.repeat(1024));
    }
    const streamed = await call(url, 'POST', '/write/nnt', { headers: { 'content-type': 'application/json' }, body: chunks() });
    expectError(streamed, 413, 'body_too_large');
    // The node still answers afterwards.
    expect((await call(url, 'GET', '/sweep_delete')).status).toBe(200);
  });

  it.each([
    ['truncated', '[{"metric":"cpu","id":'],
    ['not JSON', 'hello'],
    ['empty', ''],
    ['unbalanced', '['.repeat(20_000)],
  ])('400 invalid_json for %s bodies', async (_name, body) => {
    expectError(await write(url, body), 400, 'invalid_json');
  });

  it('400 (never 500) for deeply nested JSON', async () => {
    const r = await write(url, '['.repeat(20_000) + ']'.repeat(20_000));
    expect(r.status).toBe(400);
    expect(r.json.code).toBe('invalid_record');
  });

  it('400 for bodies that are JSON but not an array of records', async () => {
    expectError(await write(url, '{"metric":"cpu"}'), 400, 'bad_request', 'array');
    expectError(await write(url, 'null'), 400, 'bad_request', 'array');
  });
});

describe('numeric write validation (atomic, names index, field and reason)', () => {
  const cases: Array<[string, Record<string, unknown>, string]> = [
    ['missing metric', { metric: undefined }, 'metric'],
    ['empty metric', { metric: '' }, 'metric'],
    ['metric over the limit', { metric: 'x'.repeat(5000) }, 'metric'],
    ['bad id', { id: 'not-a-uuid' }, 'id'],
    ['negative offset', { offset: -60 }, 'offset'],
    ['fractional offset', { offset: 60.5 }, 'offset'],
    ['unaligned offset', { offset: 61 }, 'offset'],
    ['fractional count', { count: 1.5 }, 'count'],
    ['negative count', { count: -1 }, 'count'],
    ['missing value', { value: undefined }, 'value'],
    ['string NaN', { value: 'NaN' }, 'value'],
    ['huge number', { value: '1e400' }, 'value'],
    ['null derivative', { derivative: null }, 'derivative'],
    ['parts not a pair', { parts: [60] }, 'parts'],
    ['parts period not dividing', { parts: [7, []] }, 'parts[0]'],
    ['parts wrong piece count', { parts: [30, [{ count: 1, value: 1 }]] }, 'parts[1]'],
    ['bad piece', { parts: [30, [{ count: 1, value: 1 }, { count: 1 }]] }, 'parts[1][1].value'],
  ];
  it.each(cases)('rejects %s', async (_name, fields, field) => {
    const good = [nnt(0), nnt(60)];
    const bad = { ...nnt(120, {}, 'atomic-check'), ...fields };
    const body = JSON.stringify([...good, bad]).replace('"1e400"', '1e400');
    const r = await write(url, body);
    expectError(r, 400, 'invalid_record', '[2]', field);
    expect(r.json.index).toBe(2);
    expect(r.json.field).toBe(field);
    // Nothing of the request was stored: the good records of the same request are absent too.
    const rows = await rollup(url, { start: '0.000', end: '180.000', span: '60s', type: 'count' }, 'cpu');
    expect(rows).toEqual([
      [0, null],
      [60, null],
      [120, null],
    ]);
  });

  it('rejects a first record whose id and metric are both empty (and the node stays healthy)', async () => {
    const r = await write(url, '[{"metric":"","id":"","offset":0,"count":1,"value":1}]');
    expectError(r, 400, 'invalid_record', '[0]');
    // Such a record, had it been taken, would sit in the flush with no series and fail every read.
    expect((await write(url, [nnt(0, {}, 'after-empty')])).status).toBe(200);
    expect(await rollup(url, { start: '0.000', end: '60.000', span: '60s', type: 'count' }, 'after-empty')).toEqual([[0, 1]]);
  });

  it('accepts PUT and POST and answers {"records":N}', async () => {
    const r = await call(url, 'PUT', '/write/nnt', { headers: { 'content-type': 'application/json' }, body: JSON.stringify([nnt(600, {}, 'put')]) });
    expect(r.status).toBe(200);
    expect(r.json).toEqual({ records: 1, updated: 1, misdirected: 0, errors: 0 });
    expect((await write(url, [])).json).toEqual({ records: 0, updated: 0, misdirected: 0, errors: 0 });
  });

  it('accepts a body without content-type and JSON with a charset', async () => {
    expect((await call(url, 'POST', '/write/nnt', { body: '[]' })).status).toBe(200);
    expect((await call(url, 'POST', '/write/nnt', { headers: { 'content-type': 'application/json; charset=utf-8' }, body: '[]' })).status).toBe(200);
  });
});

describe('text and histogram writes', () => {
  it('validates and reads back text', async () => {
    const recs = [
      { metric: 'log', id: UUID.toUpperCase(), offset: 100, value: 'hello' },
      { metric: 'log', id: UUID, offset: 200, value: 'world' },
    ];
    expect((await write(url, recs, '/write/text')).json).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
    // Change points in milliseconds (api/read-text.md); the end is exclusive.
    expect((await call(url, 'GET', `/read/100/200/${UUID}/log`)).json).toEqual([[100_000, 'hello']]);
    expect((await call(url, 'GET', `/read/0/1000/${UUID.toUpperCase()}/log`)).json).toEqual([
      [100_000, 'hello'],
      [200_000, 'world'],
    ]);
    expectError(await call(url, 'GET', `/read/200/200/${UUID}/log`), 400, 'bad_request', 'after start');
    expectError(await write(url, [{ metric: 'log', id: UUID, offset: 1, value: 5 }], '/write/text'), 400, 'invalid_record', '[0]', 'value');
    expectError(await call(url, 'GET', `/read/abc/200/${UUID}/log`), 400, 'bad_request', 'start');
  });

  it('validates and reads back histograms per configured period', async () => {
    const recs = [
      { metric: 'lat', id: UUID, offset: 3600, period: 60, histogram: 'AAEX/QAB' },
      { metric: 'lat', id: UUID, offset: 3600, period: 3600, histogram: 'AAEX/QAC' },
    ];
    expect((await write(url, recs, '/histogram/write')).json).toEqual({ records: 2, updated: 2, misdirected: 0, errors: 0 });
    expect((await call(url, 'GET', `/histogram/0/7200/60/${UUID}/lat`)).json).toEqual([[3600, 60, { '+23e-004': 1 }]]);
    expect((await call(url, 'GET', `/histogram/0/7200/3600/${UUID}/lat`)).json).toEqual([[3600, 3600, { '+23e-004': 2 }]]);
    expectError(await write(url, [{ ...recs[0], period: 300 }], '/histogram/write'), 400, 'invalid_record', 'period');
    expectError(await write(url, [{ ...recs[0], histogram: 'not base64!' }], '/histogram/write'), 400, 'invalid_record', 'histogram');
    expectError(await call(url, 'GET', `/histogram/0/7200/300/${UUID}/lat`), 400, 'bad_request', 'period');
    // Start and end are both inclusive (api/read-histogram.md): a one-second range at the row finds it.
    expect((await call(url, 'GET', `/histogram/3600/3600/60/${UUID}/lat`)).json).toEqual([[3600, 60, { '+23e-004': 1 }]]);
    expect((await call(url, 'GET', `/histogram/0/3600/60/${UUID}/lat`)).json).toEqual([[3600, 60, { '+23e-004': 1 }]]);
    expect((await call(url, 'GET', `/histogram/0/3599/60/${UUID}/lat`)).json).toEqual([]);
    expectError(await call(url, 'GET', `/histogram/3601/3600/60/${UUID}/lat`), 400, 'bad_request', 'at or after start');
  });
});

describe('rollup read validation', () => {
  const ok = { start: '0.000', end: '600.000', span: '60s' };
  it.each(['123', '123.4', '123.45', '123.4567', '', 'abc', '-1.000', '1e3.000'])('rejects start_ts %j', async (start) => {
    expectError(await call(url, 'GET', rollupPath({ ...ok, start })), 400, 'invalid_query', 'start_ts');
  });

  it('requires start_ts, end_ts and rollup_span', async () => {
    for (const missing of ['start_ts', 'end_ts', 'rollup_span']) {
      const p = new URLSearchParams({ start_ts: '0.000', end_ts: '600.000', rollup_span: '60s' });
      p.delete(missing);
      expectError(await call(url, 'GET', `/rollup/${UUID}/cpu?${p.toString()}`), 400, 'invalid_query', missing);
    }
  });

  it('rejects a bad span, end <= start, unknown engine and type, bad uuid', async () => {
    for (const span of ['60', '60m', '0s', '-60s', '1.5s']) expectError(await call(url, 'GET', rollupPath({ ...ok, span })), 400, 'invalid_query', 'rollup_span');
    expectError(await call(url, 'GET', rollupPath({ ...ok, end: '0.000' })), 400, 'invalid_query', 'end_ts');
    const e = await call(url, 'GET', rollupPath({ ...ok, engine: 'fast' }));
    expectError(e, 400, 'invalid_query', 'dispatch, nnt, recalc');
    const t = await call(url, 'GET', rollupPath({ ...ok, type: 'median' }));
    expectError(t, 400, 'invalid_query', 'counter2_stddev', 'derivative2');
    expectError(await call(url, 'GET', '/rollup/not-a-uuid/cpu?start_ts=0.000&end_ts=60.000&rollup_span=60s'), 400, 'invalid_uuid', 'not-a-uuid');
  });

  it('accepts every type and the derivative aliases', async () => {
    for (const type of [
      'count',
      'average',
      'derive',
      'counter',
      'average_stddev',
      'derive_stddev',
      'counter_stddev',
      'derive2',
      'counter2',
      'derive2_stddev',
      'counter2_stddev',
      'all',
      'derivative',
      'derivative_stddev',
      'derivative2',
      'derivative2_stddev',
    ]) {
      const r = await call(url, 'GET', rollupPath({ ...ok, type }));
      expect(r.status, `${type}: ${r.text}`).toBe(200);
      expect(r.json).toHaveLength(10);
    }
  });

  it('caps a response at the configured number of buckets (400 naming the cap), never truncating silently', async () => {
    const r = await call(url, 'GET', rollupPath({ start: '0.000', end: '60060.000', span: '60s' }));
    expectError(r, 400, 'too_many_buckets', '1000');
    expect(r.json.max_buckets).toBe(1000);
    expect(r.json.buckets).toBe(1001);
    expect((await call(url, 'GET', rollupPath({ start: '0.000', end: '60000.000', span: '60s' }))).json).toHaveLength(1000);
  });

  it('honours x-snowth-advisory-limit by cutting the result and saying so', async () => {
    const cut = await call(url, 'GET', rollupPath(ok), { headers: { 'x-snowth-advisory-limit': '3' } });
    expect(cut.status).toBe(200);
    expect(cut.json).toHaveLength(3);
    expect(cut.headers['x-snowth-results-limited']).toBe('1');
    const none = await call(url, 'GET', rollupPath(ok), { headers: { 'x-snowth-advisory-limit': 'none' } });
    expect(none.json).toHaveLength(10);
    expect(none.headers['x-snowth-results-limited']).toBeUndefined();
    expectError(await call(url, 'GET', rollupPath(ok), { headers: { 'x-snowth-advisory-limit': 'lots' } }), 400, 'invalid_header');
  });

  it('400 for a metric name over the protocol limit', async () => {
    expectError(await call(url, 'GET', `/rollup/${UUID}/${'x'.repeat(4097)}?start_ts=0.000&end_ts=60.000&rollup_span=60s`), 400, 'bad_request', '4096');
  });

  it('400 when a metric name is not correctly URL-encoded', async () => {
    expectError(await call(url, 'GET', `/rollup/${UUID}/100%?start_ts=0.000&end_ts=60.000&rollup_span=60s`), 400, 'bad_request', 'metric');
  });
});

describe('sweep delete validation', () => {
  const del = (headers: Record<string, string>) => call(url, 'DELETE', '/sweep_delete', { headers });
  const past = String(NOW / 1000 - 3600);

  it.each([
    [{}, 'Delete-Time'],
    [{ 'X-Service-Delete-Time': 'abc' }, 'abc'],
    [{ 'X-Service-Delete-Time': '12.5' }, '12.5'],
    [{ 'X-Service-Delete-Time': '-5' }, '-5'],
    [{ 'X-Service-Delete-Time': String(NOW / 1000 + 60) }, 'future'],
    [{ 'X-Service-Delete-Time': past, 'X-Service-Delete-Data-Types': 'nnt,metrics' }, 'metrics'],
    [{ 'X-Service-Delete-Time': past, 'X-Service-Delete-Data-Types': 'nnt,,text' }, 'nnt, text, histogram'],
    [{ 'X-Service-Delete-Time': past, 'X-Service-NNT-Delete-Rollups': '61' }, '61'],
    [{ 'X-Service-Delete-Time': past, 'X-Service-NNT-Delete-Rollups': '60,' }, 'allowed: 60, 300'],
    [{ 'X-Service-Delete-Time': past, 'X-Service-Histogram-Delete-Rollups': 'x' }, 'allowed: 60, 3600'],
    [{ 'X-Service-Delete-Time': past, 'X-Service-NNT-Delete-Rollups': '3600' }, '60, 300'],
    [{ 'X-Service-Delete-Time': past, 'X-Service-Delete-Data-Types': 'histogram', 'X-Service-Histogram-Delete-Rollups': '300' }, '60, 3600'],
  ])('rejects %j', async (headers, mention) => {
    expectError(await del(headers), 400, 'invalid_header', mention);
    expect((await call(url, 'GET', '/sweep_delete')).json.nnt.running).toBe('false');
  });

  it('accepts lower-case names and the X-Snowth- prefix; answers []', async () => {
    const r = await del({ 'x-snowth-delete-time': past, 'X-SNOWTH-DELETE-DATA-TYPES': 'text' });
    expect(r.status).toBe(200);
    expect(r.json).toEqual([]);
    await node.node.sweeper.settled();
  });

  it('a delete time of exactly now is allowed', async () => {
    expect((await del({ 'X-Service-Delete-Time': String(NOW / 1000) })).status).toBe(200);
    await node.node.sweeper.settled();
  });

  it('status has string values only', async () => {
    const s = await call(url, 'GET', '/sweep_delete');
    expect(Object.keys(s.json)).toEqual(['nnt', 'text', 'histogram']);
    for (const t of ['nnt', 'text', 'histogram']) {
      expect(s.json[t].running).toBe('false');
      // extension attributes (instance, last_*) are strings too
      for (const v of Object.values(s.json[t])) expect(typeof v).toBe('string');
    }
    const c = await call(url, 'GET', '/sweep_delete/cancel');
    expect(c.status).toBe(200);
    for (const t of ['nnt', 'text', 'histogram']) {
      expect(c.json[t].cancelling).toBe('true');
      expect(c.json[t].running).toBe('false');
    }
  });
});

describe('slow clients', () => {
  it('are cut off with a JSON 408 when their request does not arrive in time', async () => {
    const { connect } = await import('node:net');
    const slow = await memoryNode({ headersTimeoutMs: 200, requestTimeoutMs: 400 });
    try {
      const socket = connect(slow.port, '127.0.0.1');
      let got = '';
      socket.setEncoding('utf8').on('data', (d: string) => (got += d));
      const closed = new Promise<void>((r) => socket.once('close', () => r()));
      socket.write('POST /write/nnt HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: 100\r\n\r\n[');
      const t0 = Date.now();
      await closed;
      expect(Date.now() - t0).toBeLessThan(5000);
      expect(got).toMatch(/^HTTP\/1\.1 408/);
      expect(got).toContain('"code":"request_timeout"');
      // Headers that never finish are cut off too.
      const s2 = connect(slow.port, '127.0.0.1');
      let got2 = '';
      s2.setEncoding('utf8').on('data', (d: string) => (got2 += d));
      const closed2 = new Promise<void>((r) => s2.once('close', () => r()));
      s2.write('GET /sweep_delete HTTP/1.1\r\nHost: x\r\n');
      await closed2;
      expect(got2).toMatch(/^HTTP\/1\.1 408/);
    } finally {
      await slow.close();
    }
  });
});
