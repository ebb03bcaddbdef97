import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { connect } from 'node:net';
import type { RunningNode } from '../../src/server/server.js';
import { UUID, call, memoryNode, rollup, write } from './server-helpers.js';

// What a node refuses at write time, and the order it handles requests of one connection in.
let n: RunningNode;
beforeAll(async () => {
  n = await memoryNode({ rollups: [60, 300] });
});
afterAll(() => n.close());

const T = 1_700_000_040;
/** A body with one record whose metric is the given raw bytes (no escaping: bytes as they are). */
function bodyWithMetricBytes(metric: Buffer, extra = ''): Buffer {
  return Buffer.concat([Buffer.from('[{"metric":"'), metric, Buffer.from(`","id":"${UUID}","offset":${T},"count":1,"value":1${extra}}]`)]);
}
const post = (body: Buffer | string, path = '/write/nnt') => call(n.url, 'POST', path, { headers: { 'content-type': 'application/json' }, body });

describe('names the node refuses, naming the record and the field', () => {
  it('invalid UTF-8 in a metric: two different invalid names do not become one series', async () => {
    for (const bad of [Buffer.from([0x61, 0xff, 0x62]), Buffer.from([0x61, 0xfe, 0x62]), Buffer.from([0x61, 0xc3]), Buffer.from([0xed, 0xa0, 0x80])]) {
      const r = await post(bodyWithMetricBytes(bad));
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({ code: 'invalid_record', index: 0, field: 'metric' });
      expect(r.json.reason).toMatch(/UTF-8|Unicode/);
    }
    // Nothing was stored under the replacement character either.
    expect(await rollup(n.url, { start: `${T}.000`, end: `${T + 60}.000`, span: '60s', type: 'count' }, 'a\ufffdb')).toEqual([[T, null]]);
  });

  it('a lone surrogate in a metric (written as an escape) or in a text value', async () => {
    const r = await post(`[{"metric":"ok","id":"${UUID}","offset":${T},"count":1,"value":1},{"metric":"x\\ud800y","id":"${UUID}","offset":${T},"count":1,"value":1}]`);
    expect(r.status, r.text).toBe(400);
    expect(r.json).toMatchObject({ code: 'invalid_record', index: 1, field: 'metric' });
    const t = await post(`[{"metric":"t","id":"${UUID}","offset":${T},"value":"a\\udc00"}]`, '/write/text');
    expect(t.status, t.text).toBe(400);
    expect(t.json).toMatchObject({ code: 'invalid_record', index: 0, field: 'value' });
  });

  it('control characters in a metric, raw (the fast path) or escaped (the general path)', async () => {
    for (const bad of [Buffer.from('a\x7fb'), Buffer.from('a\\u001b[2Jb'), Buffer.from('a\\u0007'), Buffer.from('\u009b31m', 'utf8'), Buffer.from('tab\\there')]) {
      const r = await post(bodyWithMetricBytes(bad));
      expect(r.status, `${bad.toString('latin1')}: ${r.text}`).toBe(400);
      expect(r.json).toMatchObject({ code: 'invalid_record', index: 0, field: 'metric' });
      expect(r.json.reason).toMatch(/control character/);
    }
    const text = await post(`[{"metric":"a\\u001bb","id":"${UUID}","offset":${T},"value":"v"}]`, '/write/text');
    expect(text.status).toBe(400);
    // Non-ASCII names that are neither are fine.
    expect((await post(bodyWithMetricBytes(Buffer.from('größe.µs ✓')))).status).toBe(200);
  });

  it('a negative standard deviation, in the record or in a part', async () => {
    for (const extra of [',"stddev":-1', ',"derivative_stddev":-0.5', ',"counter_stddev":-1e-9']) {
      const r = await post(bodyWithMetricBytes(Buffer.from('sd'), extra));
      expect(r.status, r.text).toBe(400);
      expect(r.json).toMatchObject({ code: 'invalid_record', index: 0, field: extra.slice(2, extra.indexOf('":')) });
    }
    const piece = (stddev: number) => ({ count: 1, value: 1, derivative: 0, counter: 0, stddev, derivative_stddev: 0, counter_stddev: 0 });
    const r = await write(n.url, [{ metric: 'sd', id: UUID, offset: T, count: 2, value: 1, parts: [30, [piece(0), piece(-2)]] }]);
    expect(r.status, r.text).toBe(400);
    expect(r.json).toMatchObject({ field: 'parts[1][1].stddev' });
    expect((await post(bodyWithMetricBytes(Buffer.from('sd'), ',"stddev":0'))).status).toBe(200);
  });
});

describe('one connection', () => {
  it('a GET pipelined right behind a POST runs after the POST is stored', async () => {
    for (let round = 0; round < 5; round++) {
      const metric = `pipe${round}`;
      const body = JSON.stringify([{ metric, id: UUID, offset: T, count: 1, value: 42 + round }]);
      const get = `/rollup/${UUID}/${metric}?start_ts=${T}.000&end_ts=${T + 60}.000&rollup_span=60s`;
      const raw =
        `POST /write/nnt HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\nContent-Length: ${Buffer.byteLength(body)}\r\n\r\n${body}` +
        `GET ${get} HTTP/1.1\r\nHost: x\r\nConnection: close\r\n\r\n`;
      const url = new URL(n.url);
      const answer = await new Promise<string>((resolve, reject) => {
        const s = connect(Number(url.port), url.hostname, () => s.end(raw));
        let data = '';
        s.setEncoding('utf8').on('data', (d: string) => (data += d));
        s.on('end', () => resolve(data));
        s.on('error', reject);
      });
      const bodies = answer
        .split('\r\n\r\n')
        .slice(1)
        .map((b) => b.split('HTTP/1.1')[0]!.trim());
      expect(bodies[0]).toBe('{"records":1,"updated":1,"misdirected":0,"errors":0}');
      expect(bodies[1]).toBe(`[[${T},${42 + round}]]`);
    }
  });
});
