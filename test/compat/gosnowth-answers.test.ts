/**
 * Answers as the production store gives them (its documentation's examples) and as gosnowth's
 * test fixtures give them, served by small fake nodes to tsnode's client and CLI: integer values
 * and timestamps, nulls, sub-second and millisecond timestamps, the documented status with its
 * trailing comma, a 200 with no body to a write, and a node without the sweep API (404).
 * A real reference node cannot be made to answer these, so fake nodes are the point here.
 */
import { mkdtempSync, existsSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { NodeRequestError } from '../../src/client/errors.js';
import { NodeClient } from '../../src/client/node-client.js';
import { runCli } from '../helpers/cli.js';
import { startRecordingNode, type RecordingNode, type Reply } from '../helpers/recording-node.js';
import { EMPTY_WRITE_ANSWER, HISTOGRAM_ROWS, HISTOGRAM_WRITE_ANSWER, NNT_ROWS, ROLLUP_ALL_NULL, ROLLUP_ALL_ROWS, ROLLUP_ROWS, TEXT_ROWS_SECONDS } from './fixtures/gosnowth.js';
import { READ_TEXT_DOC, SWEEP_CANCEL_DOC, SWEEP_DOC } from './fixtures/store-docs.js';

const ID = 'fc85e0ab-f568-45e6-86ee-d7443be8277d';
const RECORD = { metric: 'online', id: ID, offset: 1529509020, count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 };
const dispatcher = new Agent();
const fakes: RecordingNode[] = [];
let dir: string;

beforeAll(() => {
  dir = mkdtempSync(join(tmpdir(), 'tsnode-compat-'));
});
afterEach(async () => {
  await Promise.all(fakes.splice(0).map((f) => f.close()));
});
afterAll(async () => {
  await dispatcher.close();
  rmSync(dir, { recursive: true, force: true });
});

async function fake(reply: Reply | ((req: { method: string; rawUrl: string }) => Reply)): Promise<RecordingNode> {
  const f = await startRecordingNode(reply);
  fakes.push(f);
  return f;
}
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher, retry: { retries: 0, baseDelayMs: 1, maxDelayMs: 1 } });

async function failure(fn: () => Promise<unknown>): Promise<NodeRequestError> {
  try {
    await fn();
  } catch (err) {
    expect(err).toBeInstanceOf(NodeRequestError);
    return err as NodeRequestError;
  }
  throw new Error('expected the call to fail');
}

describe('rollup answers', () => {
  const q = { uuid: ID, metric: 'online', startMs: 1_529_509_020_000, endMs: 1_529_509_200_000, spanMs: 60_000 };

  it('integer timestamps and values (gosnowth rollupTestData, nntTestData)', async () => {
    const f = await fake({ body: ROLLUP_ROWS });
    expect((await client(f.url).readRollup(q)).points).toEqual([{ timestampMs: 1000, value: 1 }]);
    f.reply = { body: NNT_ROWS };
    expect((await client(f.url).readRollup({ ...q, type: 'count' })).points).toEqual([
      { timestampMs: 1_380_000_000_000, value: 50 },
      { timestampMs: 1_380_000_300_000, value: 60 },
    ]);
    const cols = await client(f.url).readRollupColumns({ ...q, type: 'count' });
    expect([...cols.timestampsMs]).toEqual([1_380_000_000_000, 1_380_000_300_000]);
    expect([...cols.values]).toEqual([50, 60]);
  });

  it('null values and sub-second timestamps (seconds with a millisecond fraction)', async () => {
    const f = await fake({ body: '[[1408724400,null],[1408724400.5,2.25],[1408724401,null]]' });
    expect((await client(f.url).readRollup({ ...q, spanMs: 500 })).points).toEqual([
      { timestampMs: 1_408_724_400_000, value: null },
      { timestampMs: 1_408_724_400_500, value: 2.25 },
      { timestampMs: 1_408_724_401_000, value: null },
    ]);
  });

  it('type=all: gosnowth rollupAllTestData (members in another order) and an empty bucket', async () => {
    const f = await fake({ body: ROLLUP_ALL_ROWS });
    const res = await client(f.url).readRollup({ ...q, type: 'all' });
    expect(res.points).toHaveLength(2);
    expect(res.points[0]).toEqual({
      timestampMs: 1_529_509_020_000,
      value: {
        count: 1,
        value: 0,
        stddev: 0,
        derivative: 0,
        derivative_stddev: 0,
        counter: 0,
        counter_stddev: 0,
        derivative2: 0,
        derivative2_stddev: 0,
        counter2: 0,
        counter2_stddev: 0,
      },
    });
    f.reply = { body: ROLLUP_ALL_NULL };
    expect((await client(f.url).readRollup({ ...q, type: 'all' })).points).toEqual([{ timestampMs: 1_529_509_020_000, value: null }]);
  });
});

describe('text and histogram read answers', () => {
  it("text: the doc's millisecond change points", async () => {
    const f = await fake({ body: READ_TEXT_DOC.output });
    const rows = await client(f.url).readText({ uuid: READ_TEXT_DOC.uuid, metric: READ_TEXT_DOC.metric, startMs: 1_380_000_000_000, endMs: 1_380_000_600_000 });
    expect(rows).toEqual([
      [1_379_232_000_000, 'value_1'],
      [1_380_000_000_123, 'value_2'],
      [1_380_000_000_125, 'value_3'],
    ]);
    expect(f.requests[0]!.rawUrl).toBe(READ_TEXT_DOC.path);
  });

  it("text: gosnowth's fixture gives seconds; the client takes them as the store's doc says (milliseconds), it does not guess", async () => {
    const f = await fake({ body: TEXT_ROWS_SECONDS });
    const rows = await client(f.url).readText({ uuid: ID, metric: 'm', startMs: 0, endMs: 1000 });
    expect(rows).toEqual([
      [1_380_000_000, 'hello'],
      [1_380_000_300, 'world'],
    ]);
  });

  it('histogram: the client asks for an inclusive end (the last second before its exclusive endMs)', async () => {
    const f = await fake({ body: '[[1380000000,300,{"1":1,"2":1}]]' });
    const rows = await client(f.url).readHistogram({ uuid: ID, metric: 'h', startMs: 1_380_000_000_000, endMs: 1_380_000_600_000, periodS: 300 });
    expect(rows).toEqual([[1_380_000_000, 300, { '1': 1, '2': 1 }]]);
    expect(f.requests[0]!.rawUrl).toBe(`/histogram/1380000000/1380000599/300/${ID}/h`);
  });

  it("histogram: gosnowth's fixture (bins as the store names them) is read bin by bin", async () => {
    const f = await fake({ body: HISTOGRAM_ROWS });
    const rows = await client(f.url).readHistogram({ uuid: ID, metric: 'example1', startMs: 1_556_290_800_000, endMs: 1_556_291_400_000, periodS: 300 });
    expect(rows).toEqual([
      [1_556_290_800, 300, { '+23e-004': 1, '+85e-004': 1 }],
      [1_556_291_100, 300, { '+22e-004': 1, '+23e-004': 2, '+30e-004': 1, '+39e-003': 1 }],
    ]);
  });

  it('histogram: an encoded string where the bins belong (the old reference node) is bad_answer, not an empty histogram', async () => {
    const f = await fake({ body: '[[1380000000,300,"AAA="]]' });
    const err = await client(f.url)
      .readHistogram({ uuid: ID, metric: 'h', startMs: 1_380_000_000_000, endMs: 1_380_000_600_000, periodS: 300 })
      .catch((e: unknown) => e);
    expect(err).toMatchObject({ code: 'bad_answer' });
    expect((err as Error).message).toContain('[seconds, period, {bin: count}]');
  });
});

describe('sweep status answers', () => {
  it('the documented status, trailing comma and all, is understood', async () => {
    const f = await fake({ body: SWEEP_DOC.status });
    const s = await client(f.url).sweepStatus();
    expect(s.nnt).toEqual({ running: true, current_uuid: '1c2a1980-d3f2-4fcb-b24f-85a4a3b8cdd4', timestamp: 1443110236, rollups: 'all' });
    expect(s.text).toEqual({ running: true, current_metric: '1c27d35f-9dc6-447a-aa3f-2583bb88b591-testmetric', timestamp: 1443110236 });
    expect(s.histogram).toMatchObject({ running: true, rollups: 'all', timestamp: 1443110236 });
  });

  it('the documented cancel answer too', async () => {
    const f = await fake({ body: SWEEP_CANCEL_DOC.output });
    const s = await client(f.url).cancelSweep();
    for (const t of ['nnt', 'text', 'histogram'] as const) expect(s[t]).toMatchObject({ running: true, cancelling: true });
  });

  it.each([
    ['a comma with nothing before it', '{"nnt":{,"running":"false"},"text":{"running":"false"},"histogram":{"running":"false"}}'],
    ['two commas', '{"nnt":{"running":"false",,},"text":{"running":"false"},"histogram":{"running":"false"}}'],
    ['a comma inside a string is kept', '{"nnt":{"running":"false,}"},"text":{"running":"false"},"histogram":{"running":"false"}}'],
    ['an HTML page', '<html><body>Bad gateway</body></html>'],
    ['a JSON array', '[]'],
  ])('anything else that is not the status shape is bad_answer, never unreachable: %s', async (_what, body) => {
    const f = await fake({ body });
    const err = await failure(() => client(f.url).sweepStatus());
    expect(err.code).toBe('bad_answer');
    expect(err.message).toMatch(/expected/);
    expect(err.retryable).toBe(false);
  });

  it.each([
    ['GET /sweep_delete', (c: NodeClient) => c.sweepStatus()],
    ['DELETE /sweep_delete', (c: NodeClient) => c.sweepDelete({ before: 1_496_275_200, types: ['nnt'] })],
    ['GET /sweep_delete/cancel', (c: NodeClient) => c.cancelSweep()],
  ])('a 404 on %s means the node has no sweep API (0.19.23 removed it), not that it is unreachable', async (_what, call) => {
    const f = await fake({ status: 404, headers: { 'content-type': 'text/html' }, body: '<h1>Not Found</h1>' });
    const err = await failure(() => call(client(f.url)));
    expect(err.code).toBe('no_sweep_api');
    expect(err.message).toContain('no sweep API');
    expect(err.message).toContain('0.19.23');
    expect(err.retryable).toBe(false);
  });
});

describe('write answers: any 2xx is an acknowledgement', () => {
  it.each([
    ["an empty 200 (gosnowth's mock)", 200, EMPTY_WRITE_ANSWER, {}],
    ['204 No Content', 204, '', {}],
    ["200 echoing the records (gosnowth's histogram mock)", 200, HISTOGRAM_WRITE_ANSWER, {}],
    ['200 with a JSON object without records', 200, '{"ok":true}', {}],
    ['200 with text', 200, 'OK', {}],
    ['202 with records', 202, '{"records":1}', { records: 1 }],
    ['200 {"records":0}', 200, '{"records":0}', { records: 0 }],
  ])('%s', async (_what, status, body, want) => {
    const f = await fake({ status, body });
    expect(await client(f.url).writeNnt([RECORD])).toEqual(want);
    expect(await client(f.url).writeText([{ metric: 'm', id: ID, offset: 1, value: 'x' }])).toEqual(want);
    expect(await client(f.url).writeHistogram([{ metric: 'm', id: ID, offset: 60, period: 60, histogram: 'AAA=' }])).toEqual(want);
  });

  it.each([
    ['a negative count', '{"records":-1}'],
    ['a fraction', '{"records":1.5}'],
    ['a string', '{"records":"1"}'],
    ['null', '{"records":null}'],
  ])('records present but not a count (%s) is bad_answer', async (_what, body) => {
    const f = await fake({ body });
    const err = await failure(() => client(f.url).writeNnt([RECORD]));
    expect(err.code).toBe('bad_answer');
    expect(err.message).toMatch(/records/);
    expect(err.message).toMatch(/whole number >= 0/);
  });
});

describe('the CLI against such nodes', () => {
  it('tsnode status reads the documented status (trailing comma) and exits 0', async () => {
    const f = await fake({ body: SWEEP_DOC.status });
    const r = await runCli(['status', '--nodes', f.url, '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const doc = JSON.parse(r.stdout);
    expect(doc.nodes[0]).toMatchObject({ ok: true, status: { nnt: { running: true, delete_time: 1443110236 } } });
  });

  it('tsnode status on a node without the sweep API says so, not "unreachable"', async () => {
    const f = await fake({ status: 404, body: '' });
    const r = await runCli(['status', '--nodes', f.url]);
    expect(r.code).toBe(1);
    expect(r.stdout).toContain('no sweep API');
    expect(r.stdout).not.toContain('unreachable');
  });

  it('tsnode write to a node that answers 200 with no body: written, nothing rejected, exit 0', async () => {
    const f = await fake((req) => (req.method === 'POST' ? { body: EMPTY_WRITE_ANSWER } : { status: 404, body: '' }));
    const file = join(dir, 'three.ndjson');
    writeFileSync(file, [0, 1, 2].map((i) => JSON.stringify({ ...RECORD, offset: RECORD.offset + i * 60 })).join('\n') + '\n');
    const r = await runCli(['write', file, '--node', f.url, '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(existsSync(`${file}.rejects.ndjson`)).toBe(false);
    expect(f.requests.filter((q) => q.method === 'POST')).toHaveLength(1);
  });
});
