import { spawn } from 'node:child_process';
import { afterAll, beforeAll, beforeEach, describe, expect, it } from 'vitest';
import { BIN, runCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/in-process.js';
import { queryOf, startRecordingNode, type Recorded, type RecordingNode } from '../helpers/recording-node.js';
import { parseCsv } from '../../src/cli/render/csv.js';
import { deadAddress } from '../helpers/nodes.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
let node: RecordingNode;
let other: RecordingNode;

beforeAll(async () => {
  node = await startRecordingNode();
  other = await startRecordingNode();
});
afterAll(async () => {
  await node.close();
  await other.close();
});
beforeEach(() => {
  node.requests.length = 0;
  other.requests.length = 0;
  node.reply = { body: '[]' };
  other.reply = { body: '[]' };
});

/**
 * What a read sent, without the status GET a dispatch read makes beside it (GET /sweep_delete:
 * the spans' last cut-offs, for the raw-data warning; asserted on its own below).
 */
const wire = (n: RecordingNode): Recorded[] => n.requests.filter((q) => !(q.method === 'GET' && q.rawUrl === '/sweep_delete'));

// Most cases run the CLI in process (fast); the first case of each block spawns the built bin.
const read = (args: string[], extra: string[] = ['--node', node.url]) => runInProcess(['read', U, ...args, ...extra, '--retries', '0']);
const spawnRead = (args: string[], extra: string[] = ['--node', node.url]) => runCli(['read', U, ...args, ...extra, '--retries', '0']);

describe('tsnode read: what goes on the wire', () => {
  it('sends timestamps as <s>.<mmm> with exactly three digits and spans with a unit', async () => {
    const cases: Array<{ args: string[]; start: string; end: string; span: string }> = [
      { args: ['--start', '1700000000', '--end', '1700000600', '--span', '60s'], start: '1700000000.000', end: '1700000600.000', span: '60s' },
      { args: ['--start', '1700000000.5', '--end', '1700000001.25', '--span', '250ms'], start: '1700000000.500', end: '1700000001.250', span: '250ms' },
      { args: ['--start', '2023-11-14T22:13:20.007Z', '--end', '2023-11-14T23:13:20Z', '--span', '5m'], start: '1700000000.007', end: '1700003600.000', span: '300s' },
      { args: ['--start', '1700000000', '--end', '1700086400', '--span', '60000ms'], start: '1700000000.000', end: '1700086400.000', span: '60s' },
      { args: ['--start', '1700000000', '--end', '1700086400', '--span', '1h'], start: '1700000000.000', end: '1700086400.000', span: '3600s' },
      { args: ['--start', '1700000000', '--end', '1700086400', '--span', '1.5s'], start: '1700000000.000', end: '1700086400.000', span: '1500ms' },
    ];
    for (const c of cases) {
      node.requests.length = 0;
      const r = await (c === cases[0] ? spawnRead : read)(['cpu', ...c.args]);
      expect(r.stderr).not.toContain('error');
      expect(r.code).toBe(0);
      expect(wire(node)).toHaveLength(1);
      const q = queryOf(wire(node)[0]!);
      expect(q.get('start_ts')).toBe(c.start);
      expect(q.get('end_ts')).toBe(c.end);
      expect(q.get('start_ts')).toMatch(/^\d+\.\d{3}$/);
      expect(q.get('end_ts')).toMatch(/^\d+\.\d{3}$/);
      expect(q.get('rollup_span')).toBe(c.span);
      expect(q.get('get_engine')).toBe('dispatch');
      expect(q.get('type')).toBe('average');
    }
  });

  it('chooses a span for about 300 rows when none is given, and names it in the header', async () => {
    const r = await read(['cpu', '--start', '1700000000', '--end', '1700604800']); // 7 days
    expect(r.code).toBe(0);
    expect(queryOf(wire(node)[0]!).get('rollup_span')).toBe('3600s');
    expect(r.stderr).toMatch(/span 3600s \(auto\)/);
    expect(r.stderr).toContain(`check ${U}`);
    expect(r.stderr).toContain('engine dispatch');
    expect(r.stderr).toContain(`node ${node.url}`);
    expect(r.stderr).toMatch(/0 rows/);
  });

  it('defaults to the last 24 hours ending now', async () => {
    const before = Date.now();
    const r = await read(['cpu']);
    expect(r.code).toBe(0);
    const q = queryOf(wire(node)[0]!);
    const end = Number(q.get('end_ts')) * 1000;
    const start = Number(q.get('start_ts')) * 1000;
    expect(end).toBeGreaterThanOrEqual(before - 1000);
    expect(end).toBeLessThanOrEqual(Date.now() + 1000);
    expect(end - start).toBe(86_400_000);
    expect(q.get('rollup_span')).toBe('300s');
  });

  it('URL-encodes any metric name into one path segment', async () => {
    const names = ['cpu idle', 'disk|ST[dev:sda,mount:/]', 'a/b/c', '100%', 'what?x=1', 'hash#tag', 'température°', 'a+b&c=d', '..', 'emoji 🚀'];
    for (const name of names) {
      node.requests.length = 0;
      const r = await read([name, '--start', '1700000000', '--end', '1700000060']);
      expect(r.code, r.stderr).toBe(0);
      const raw = wire(node)[0]!.rawUrl;
      const path = raw.slice(0, raw.indexOf('?'));
      const segments = path.split('/');
      expect(segments).toHaveLength(4); // '', 'rollup', uuid, metric
      expect(segments[1]).toBe('rollup');
      expect(segments[2]).toBe(U);
      expect(segments[3]).toMatch(/^[A-Za-z0-9%._~!*'()-]+$/);
      expect(decodeURIComponent(segments[3]!)).toBe(name);
    }
  });

  it('sends the engine, the canonical type and --limit as x-snowth-advisory-limit', async () => {
    const r = await read(['cpu', '--engine', 'recalc', '--type', 'derivative_stddev', '--limit', '500', '--start', '1700000000', '--end', '1700000060']);
    expect(r.code).toBe(0);
    let q = queryOf(wire(node)[0]!);
    expect(q.get('get_engine')).toBe('recalc');
    expect(q.get('type')).toBe('derive_stddev');
    expect(wire(node)[0]!.headers['x-snowth-advisory-limit']).toBe('500');
    node.requests.length = 0;
    await read(['cpu', '--limit', 'none', '--start', '1700000000', '--end', '1700000060']);
    expect(wire(node)[0]!.headers['x-snowth-advisory-limit']).toBe('none');
    node.requests.length = 0;
    await read(['cpu', '--start', '1700000000', '--end', '1700000060']);
    expect(wire(node)[0]!.headers['x-snowth-advisory-limit']).toBeUndefined();
    q = queryOf(wire(node)[0]!);
    expect(q.get('type')).toBe('average');
  });
});

describe('tsnode read: bad input is refused before anything is sent', () => {
  const cases: Array<{ name: string; args: string[]; stderr: RegExp }> = [
    { name: 'unknown type', args: ['cpu', '--type', 'mean'], stderr: /--type: "mean" is not a rollup type[\s\S]*use one of: count, average, derive/ },
    { name: 'unknown engine', args: ['cpu', '--engine', 'fast'], stderr: /--engine: "fast" is not one of dispatch, nnt, recalc/ },
    { name: 'start after end', args: ['cpu', '--start', '1700000600', '--end', '1700000000'], stderr: /--start .*1700000600.* is not before --end/ },
    { name: 'span 0', args: ['cpu', '--span', '0s'], stderr: /--span: "0s" must be at least 1ms/ },
    { name: 'span without unit', args: ['cpu', '--span', '300'], stderr: /--span: "300" is not a span[\s\S]*300s for seconds/ },
    {
      name: 'too many buckets',
      args: ['cpu', '--start', '1700000000', '--end', '1700007200', '--span', '1ms'],
      stderr: /7,200,000 buckets .* more than a node answers in one read \(1,000,000\)/,
    },
    { name: 'bad time', args: ['cpu', '--start', 'yesterday'], stderr: /--start: "yesterday" is not a time/ },
    { name: 'bad output', args: ['cpu', '--output', 'xml'], stderr: /--output: "xml" is not one of table, json, csv, chart/ },
    { name: 'bad limit', args: ['cpu', '--limit', '-3'], stderr: /--limit: "-3" is not a row limit/ },
    { name: 'bad tolerance', args: ['cpu', '--compare', '--tolerance', '5%'], stderr: /--tolerance: "5%" is not a relative difference/ },
    { name: 'tolerance without compare', args: ['cpu', '--tolerance', '1e-9'], stderr: /--tolerance without --compare/ },
    { name: 'chart of all', args: ['cpu', '--type', 'all', '--output', 'chart'], stderr: /--type all with --output chart/ },
    { name: 'a numeric flag on a text read', args: ['cpu', '--kind', 'text', '--type', 'count'], stderr: /--type applies to numeric reads \(--kind nnt\), not to text/ },
    {
      name: 'a span on a histogram read',
      args: ['cpu', '--kind', 'histogram', '--period', '60', '--span', '5m'],
      stderr: /--span applies to numeric reads \(--kind nnt\), not to histogram/,
    },
    { name: 'a histogram read without a period', args: ['cpu', '--kind', 'histogram'], stderr: /--kind histogram needs --period <span>/ },
    { name: 'a period without --kind histogram', args: ['cpu', '--period', '60'], stderr: /--period applies to histogram reads \(--kind histogram\), not to nnt/ },
    { name: 'a chart of text', args: ['cpu', '--kind', 'text', '--output', 'chart'], stderr: /--output chart with --kind text: a chart draws numeric rollups/ },
    { name: 'a comparison of text', args: ['cpu', '--kind', 'text', '--compare'], stderr: /--compare with --kind text/ },
  ];
  for (const c of cases) {
    it(c.name, async () => {
      const r = await read(c.args);
      expect(r.code).toBe(2);
      expect(r.stderr).toMatch(c.stderr);
      expect(r.stdout).toBe('');
      expect(node.requests).toHaveLength(0);
    });
  }
  it('malformed uuid', async () => {
    const r = await runCli(['read', 'not-a-uuid', 'cpu', '--node', node.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/<uuid>: "not-a-uuid" is not a UUID/);
    expect(node.requests).toHaveLength(0);
  });
});

describe('tsnode read: unusual but valid answers', () => {
  const range = ['--start', '1700000000', '--end', '1700000240', '--span', '60s'];
  it('mixed ints and floats: exact in JSON and CSV, aligned in the table', async () => {
    node.reply = { body: '[[1699999980,1],[1700000040,0.30000000000000004],[1700000100,null],[1700000160,123456789.125]]' };
    const json = await read(['cpu', ...range, '--output', 'json']);
    expect(json.code).toBe(0);
    // One object: what was read, from where, then the rows (times as epoch seconds and ISO).
    expect(JSON.parse(json.stdout)).toEqual({
      kind: 'nnt',
      node: node.url,
      uuid: U,
      metric: 'cpu',
      type: 'average',
      engine: 'dispatch',
      span: 60,
      start: 1700000000,
      start_iso: '2023-11-14T22:13:20Z',
      end: 1700000240,
      end_iso: '2023-11-14T22:17:20Z',
      limited: false,
      rows: [
        { time: 1699999980, time_iso: '2023-11-14T22:13:00Z', value: 1 },
        { time: 1700000040, time_iso: '2023-11-14T22:14:00Z', value: 0.30000000000000004 },
        { time: 1700000100, time_iso: '2023-11-14T22:15:00Z', value: null },
        { time: 1700000160, time_iso: '2023-11-14T22:16:00Z', value: 123456789.125 },
      ],
    });
    const csv = await read(['cpu', ...range, '--output', 'csv']);
    expect(parseCsv(csv.stdout)).toEqual([
      ['time', 'time_iso', 'value'],
      ['1699999980', '2023-11-14T22:13:00Z', '1'],
      ['1700000040', '2023-11-14T22:14:00Z', '0.30000000000000004'],
      ['1700000100', '2023-11-14T22:15:00Z', ''],
      ['1700000160', '2023-11-14T22:16:00Z', '123456789.125'],
    ]);
    const table = await read(['cpu', ...range]);
    expect(table.stdout).not.toContain('0.30000000000000004');
    const cells = table.stdout
      .split('\n')
      .slice(3, 7)
      .map((l) => l.split('│')[2]!);
    expect(cells.map((c) => c.trim())).toEqual(['1', '0.3', '-', '123456789']);
    expect(new Set(cells.map((c) => c.length)).size).toBe(1);
  });

  it("a node that spells numbers its own way: JSON and CSV keep its digits where they are plain, else JavaScript's", async () => {
    // As a C printer with 17 digits would write them, and spellings JavaScript would shorten.
    const values = ['0.10000000000000001', '50.238888609807414', '1.50', '-0', '1e2', '123456789012345678', '0.0000001', 'null', '-2.5E-3', '-0.000000000000000000000000000001'];
    node.reply = { body: `[${values.map((v, i) => `[${1700000040 + 60 * i},${v}]`).join(',')}]` };
    // The last: plain, but longer than a kept value may be (MAX_DIGITS_TEXT).
    const shown = ['0.10000000000000001', '50.238888609807414', '1.5', '0', '100', '123456789012345680', '0.0000001', '', '-0.0025', '-1e-30'];
    const wide = ['--start', '1700000000', '--end', '1700000600', '--span', '60s'];
    const csv = await spawnRead(['cpu', ...wide, '--output', 'csv']);
    expect(csv.code).toBe(0);
    expect(parseCsv(csv.stdout).map((row) => row[2])).toEqual(['value', ...shown]);
    const json = await read(['cpu', ...wide, '--output', 'json']);
    expect(json.code).toBe(0);
    const rows = json.stdout.split('\n').filter((l) => l.includes('"time_iso"'));
    expect(rows.map((l) => /"value":([^}]*)\}/.exec(l)![1])).toEqual(shown.map((v) => (v === '' ? 'null' : v)));
    // The same numbers either way (-0 printed as 0, as String(-0) does).
    const sent = values.map((v) => JSON.parse(v) as number | null).map((v) => (v === 0 ? 0 : v));
    expect((JSON.parse(json.stdout) as { rows: Array<{ value: number | null }> }).rows.map((r) => r.value)).toEqual(sent);
  });

  it('type=all with nulls inside the objects and whole-null buckets', async () => {
    node.reply = { body: '[[1700000040,{"count":3,"value":1.5,"stddev":null,"derivative":0.25}],[1700000100,null]]' };
    const r = await read(['cpu', ...range, '--type', 'all', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const rows = (JSON.parse(r.stdout) as { type: string; rows: Array<Record<string, unknown>> }).rows;
    expect(JSON.parse(r.stdout).type).toBe('all');
    expect(rows[0]).toMatchObject({ time: 1700000040, count: 3, value: 1.5, stddev: null, derivative: 0.25, counter: null, counter2_stddev: null });
    expect(Object.keys(rows[0]!)).toEqual([
      'time',
      'time_iso',
      'count',
      'value',
      'stddev',
      'derivative',
      'derivative_stddev',
      'counter',
      'counter_stddev',
      'derivative2',
      'derivative2_stddev',
      'counter2',
      'counter2_stddev',
    ]);
    expect(rows[1]).toMatchObject({ count: null, value: null });
    const csv = await read(['cpu', ...range, '--type', 'all', '--output', 'csv']);
    const parsed = parseCsv(csv.stdout);
    expect(parsed[0]).toEqual([
      'time',
      'time_iso',
      'count',
      'value',
      'stddev',
      'derivative',
      'derivative_stddev',
      'counter',
      'counter_stddev',
      'derivative2',
      'derivative2_stddev',
      'counter2',
      'counter2_stddev',
    ]);
    expect(parsed[1]!.slice(2, 6)).toEqual(['3', '1.5', '', '0.25']);
    const table = await read(['cpu', ...range, '--type', 'all']);
    expect(table.stdout.split('\n')[1]).toMatch(/time .*│ +count │ +value │ +stddev │/);
  });

  it('an empty array', async () => {
    node.reply = { body: '[]' };
    const json = await read(['cpu', ...range, '--output', 'json']);
    expect(json.code).toBe(0);
    expect(JSON.parse(json.stdout)).toMatchObject({ kind: 'nnt', metric: 'cpu', rows: [] });
    const csv = await read(['cpu', ...range, '--output', 'csv']);
    expect(csv.stdout).toBe('time,time_iso,value\r\n');
    const table = await read(['cpu', ...range]);
    expect(table.code).toBe(0);
    expect(table.stdout).toBe('');
    expect(table.stderr).toMatch(/0 rows/);
    const chart = await read(['cpu', ...range, '--output', 'chart']);
    expect(chart.stdout).toContain('no data in range');
  });

  it('the results-limited header warns that the result was cut off', async () => {
    node.reply = { headers: { 'x-snowth-results-limited': '1' }, body: '[[1700000040,1],[1700000100,2]]' };
    const r = await read(['cpu', ...range, '--output', 'csv']);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: .* cut the result off after 2 of 5 rows .*--limit/);
    expect(parseCsv(r.stdout)).toHaveLength(3);
  });
});

describe('tsnode read: broken answers', () => {
  const range = ['--start', '1700000000', '--end', '1700000240', '--span', '60s'];
  it("an error object (400) shows the node's message, exit 1", async () => {
    node.reply = { status: 400, body: '{"error":"rollup_span 7s is not a multiple of the smallest span 60s","code":"bad_span"}' };
    const r = await spawnRead(['cpu', ...range]);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain('HTTP 400: rollup_span 7s is not a multiple of the smallest span 60s');
  });
  it("an error object with status 200 shows the node's message, exit 1", async () => {
    node.reply = { status: 200, body: '{"error":"metric locked","code":"locked"}' };
    const r = await read(['cpu', ...range]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('the node answered with an error: metric locked (locked)');
  });
  it('an HTML page, exit 1', async () => {
    node.reply = { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body>Proxy login</body></html>' };
    let r = await read(['cpu', ...range]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/not JSON .*<html>/);
    node.reply = { status: 502, headers: { 'content-type': 'text/html' }, body: '<html><h1>502 Bad Gateway</h1></html>' };
    r = await read(['cpu', ...range]);
    expect(r.code).toBe(1);
    expect(r.stderr).toContain('HTTP 502: <html><h1>502 Bad Gateway</h1></html>');
  });
  it('a wrong shape says what was wrong, briefly', async () => {
    node.reply = { body: JSON.stringify(Array.from({ length: 50 }, (_, i) => [i, 'x'])) };
    const r = await read(['cpu', ...range]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/unexpected answer: \[0\]\[1\]: .*\(and 47 more\)/);
  });
  it('one malformed row among many is named by its index, nothing is printed', async () => {
    const rows = Array.from({ length: 2000 }, (_, i) => `[${1700000000 + i * 60},${i % 7 === 0 ? 'null' : i / 8}]`);
    for (const [bad, why] of [
      ['[1700100000,"7"]', /unexpected answer: \[1234\]\[1\]: .*expected number/],
      ['[1700100000,7,8]', /unexpected answer: \[1234\]: .*expected array to have <=2 items/],
      ['[1700100000]', /unexpected answer: \[1234\]: .*expected array to have >=2 items/],
    ] as const) {
      node.reply = { body: `[${rows.map((r, i) => (i === 1234 ? bad : r)).join(',')}]` };
      for (const output of ['csv', 'json']) {
        const r = await read(['cpu', ...range, '--output', output]);
        expect(r.code, r.stderr).toBe(1);
        expect(r.stdout).toBe('');
        expect(r.stderr).toMatch(why);
        expect(r.stderr).toContain('expected a JSON array of [seconds, number or null] rows');
      }
    }
  });
});

describe('tsnode read: output pinned byte for byte', () => {
  // Every kind of number a node may send (17 digits, exponents, beyond 2^53, null, -1e-6), as the
  // built bin prints it: the bytes are the contract of `read -o csv` and `-o json`.
  const range = ['--start', '1700000000', '--end', '1700001800', '--span', '300s'];
  const body = '[[1700000000,50.23888860980741],[1700000300,null],[1700000600,-0.000001],[1700000900,1e21],[1700001200,12345678901234567890],[1700001500,0.30000000000000004]]';
  it('CSV and JSON of a multi-row answer', async () => {
    node.reply = { body };
    const csv = await spawnRead(['cpu', ...range, '-o', 'csv']);
    expect(csv.code).toBe(0);
    expect(csv.stdout).toBe(
      'time,time_iso,value\r\n1700000000,2023-11-14T22:13:20Z,50.23888860980741\r\n1700000300,2023-11-14T22:18:20Z,\r\n1700000600,2023-11-14T22:23:20Z,-0.000001\r\n' +
        '1700000900,2023-11-14T22:28:20Z,1e+21\r\n1700001200,2023-11-14T22:33:20Z,12345678901234567000\r\n1700001500,2023-11-14T22:38:20Z,0.30000000000000004\r\n',
    );
    expect(csv.stderr).toMatch(/· 6 rows\n/);
    const json = await read(['cpu', ...range, '-o', 'json']);
    expect(json.code).toBe(0);
    expect(json.stdout).toBe(
      [
        '{',
        '  "kind": "nnt",',
        `  "node": "${node.url}",`,
        `  "uuid": "${U}",`,
        '  "metric": "cpu",',
        '  "type": "average",',
        '  "engine": "dispatch",',
        '  "span": 300,',
        '  "start": 1700000000,',
        '  "start_iso": "2023-11-14T22:13:20Z",',
        '  "end": 1700001800,',
        '  "end_iso": "2023-11-14T22:43:20Z",',
        '  "limited": false,',
        '  "rows": [',
        '    {"time":1700000000,"time_iso":"2023-11-14T22:13:20Z","value":50.23888860980741},',
        '    {"time":1700000300,"time_iso":"2023-11-14T22:18:20Z","value":null},',
        '    {"time":1700000600,"time_iso":"2023-11-14T22:23:20Z","value":-0.000001},',
        '    {"time":1700000900,"time_iso":"2023-11-14T22:28:20Z","value":1e+21},',
        '    {"time":1700001200,"time_iso":"2023-11-14T22:33:20Z","value":12345678901234567000},',
        '    {"time":1700001500,"time_iso":"2023-11-14T22:38:20Z","value":0.30000000000000004}',
        '  ]',
        '}',
        '',
      ].join('\n'),
    );
  });
});

describe('tsnode read --compare', () => {
  const range = ['--start', '1700000000', '--end', '1700000240', '--span', '60s'];
  const nodes = () => ['--nodes', `${node.url},${other.url}`];
  it('identical nodes: exit 0', async () => {
    node.reply = other.reply = { body: '[[1699999980,1],[1700000040,2.5],[1700000100,null]]' };
    const r = await read(['cpu', ...range, '--compare'], nodes());
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/2 nodes identical over 3 buckets/);
    expect(r.stdout).not.toContain('*');
    expect(r.stdout.split('\n')[1]).toContain(node.url.replace('http://', ''));
  });
  it('differing buckets are marked and exit 3; JSON and CSV say which', async () => {
    node.reply = { body: '[[1699999980,1],[1700000040,2.5],[1700000100,null]]' };
    other.reply = { body: '[[1699999980,1],[1700000040,2.75],[1700000100,0]]' };
    const r = await spawnRead(['cpu', ...range, '--compare'], nodes());
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/nodes differ in 2 of 3 buckets/);
    const rows = r.stdout.split('\n').slice(3, 6);
    expect(rows[0]).not.toContain('*');
    expect(rows[1]).toMatch(/2\.5 │ +2\.75 │ \* │/);
    expect(rows[2]).toMatch(/- │ +0\.00 │ \* │/);
    const json = await read(['cpu', ...range, '--compare', '--output', 'json'], nodes());
    expect(json.code).toBe(3);
    const doc = JSON.parse(json.stdout);
    expect(doc.identical).toBe(false);
    expect(doc.differing).toBe(2);
    expect(doc).toMatchObject({ kind: 'nnt', uuid: U, metric: 'cpu', type: 'average', engine: 'dispatch', span: 60, start: 1700000000, end_iso: '2023-11-14T22:17:20Z' });
    expect(doc.nodes).toEqual([
      { node: node.url, ok: true, rows: 3, limited: false },
      { node: other.url, ok: true, rows: 3, limited: false },
    ]);
    expect(doc.rows[1]).toEqual({ time: 1700000040, time_iso: '2023-11-14T22:14:00Z', differs: true, values: { [node.url]: 2.5, [other.url]: 2.75 } });
    const csv = await read(['cpu', ...range, '--compare', '--output', 'csv'], nodes());
    expect(parseCsv(csv.stdout)).toEqual([
      ['time', 'time_iso', node.url, other.url, 'differs'],
      ['1699999980', '2023-11-14T22:13:00Z', '1', '1', 'false'],
      ['1700000040', '2023-11-14T22:14:00Z', '2.5', '2.75', 'true'],
      ['1700000100', '2023-11-14T22:15:00Z', '', '0', 'true'],
    ]);
  });
  it('on a narrow terminal the node names wrap in the header; the numbers stay whole', async () => {
    node.reply = { body: '[[1699999980,1],[1700000040,2.5],[1700000100,null]]' };
    other.reply = { body: '[[1699999980,1],[1700000040,2.75],[1700000100,0]]' };
    const args = ['read', U, 'cpu', ...range, '--compare', ...nodes(), '--retries', '0'];
    const wide = await runInProcess(args);
    expect(Math.max(...wide.stdout.split('\n').map((l) => [...l].length))).toBeGreaterThan(56);
    const narrow = await runInProcess(args, { tty: { columns: 56, rows: 24 } });
    expect(narrow.code).toBe(3);
    const lines = narrow.stdout.trimEnd().split('\n');
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(56);
    expect(lines.length).toBeGreaterThan(wide.stdout.trimEnd().split('\n').length);
    expect(narrow.stdout).toMatch(/│ +2\.5 │ +2\.75 │ \* │/);
  });
  it('a failing node is shown and exits 3; all failing exits 1', async () => {
    node.reply = { body: '[[1699999980,1]]' };
    other.reply = { status: 400, body: '{"error":"unknown check","code":"not_found"}' };
    let r = await read(['cpu', ...range, '--compare'], nodes());
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`${other.url}: HTTP 400: unknown check`);
    expect(r.stderr).toMatch(/1 of 2 nodes failed/);
    node.reply = other.reply;
    r = await read(['cpu', ...range, '--compare', '--output', 'json'], nodes());
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/every node failed/);
    expect(JSON.parse(r.stdout).nodes).toEqual([
      { node: node.url, ok: false, error: { code: 'http', message: expect.stringContaining('unknown check') } },
      { node: other.url, ok: false, error: { code: 'http', message: expect.stringContaining('unknown check') } },
    ]);
  });
  it('--tolerance lets last-digit differences count as equal', async () => {
    node.reply = { body: '[[1699999980,0.30000000000000004]]' };
    other.reply = { body: '[[1699999980,0.3]]' };
    let r = await read(['cpu', ...range, '--compare'], nodes());
    expect(r.code).toBe(3);
    r = await read(['cpu', ...range, '--compare', '--tolerance', '1e-12'], nodes());
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/2 nodes identical over 1 bucket$/m);
  });
  it('--type all compares every member, one column per node and member', async () => {
    node.reply = { body: '[[1700000040,{"count":3,"value":1.5}],[1700000100,null]]' };
    other.reply = { body: '[[1700000040,{"count":3,"value":1.5}],[1700000100,{"count":1,"value":0}]]' };
    const r = await read(['cpu', ...range, '--compare', '--type', 'all', '--output', 'csv'], nodes());
    expect(r.code).toBe(3);
    const rows = parseCsv(r.stdout);
    expect(rows[0]).toHaveLength(2 + 2 * 11 + 1);
    expect(rows[0]![2]).toBe(`${node.url} count`);
    expect(rows[0]![13]).toBe(`${other.url} count`);
    expect(rows.slice(1).map((x) => x[x.length - 1])).toEqual(['false', 'true']);
  });
});

describe('tsnode read: node selection', () => {
  const range = ['--start', '1700000000', '--end', '1700000240', '--span', '60s'];
  // A list is asked first whether it runs a ring (GET /state; these nodes do not): only rollup reads count here.
  const rollups = (n: RecordingNode): Recorded[] => n.requests.filter((q) => q.rawUrl.startsWith('/rollup/'));
  it('several nodes without --compare: reads the first, with a warning', async () => {
    const r = await read(['cpu', ...range], ['--nodes', `${node.url},${other.url}`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`warning: 2 nodes listed: reading from the first that answers, starting with ${node.url}`));
    expect(rollups(node)).toHaveLength(1);
    expect(rollups(other)).toHaveLength(0);
    expect(node.requests.map((q) => q.rawUrl)).toContain('/state');
  });
  it('an unreachable first node is skipped for the next one; an error answer is not', async () => {
    const dead = await deadAddress();
    const r = await read(['cpu', ...range], ['--nodes', `${dead},${node.url}`]);
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(new RegExp(`${dead}: connection refused.*; trying ${node.url}`));
    expect(rollups(node)).toHaveLength(1);
    const both = await read(['cpu', ...range], ['--nodes', `${dead},${await deadAddress()}`]);
    expect(both.code).toBe(1);
  });
  it('--node and --nodes together are refused', async () => {
    const r = await read(['cpu', ...range, '--nodes', other.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--node and --nodes both name the nodes/);
    expect(node.requests).toHaveLength(0);
  });
});

describe('tsnode read: Ctrl-C', () => {
  it('while the node is still answering: exit 130 with a note, nothing on stdout', async () => {
    node.reply = { body: '[[1700000040,1]]', delayMs: 20_000 };
    const child = spawn(process.execPath, [BIN, 'read', U, 'cpu', '--node', node.url, '--start', '1700000000', '--end', '1700000240'], {
      env: { ...process.env, NO_COLOR: '1', FORCE_COLOR: '0' },
      stdio: ['ignore', 'pipe', 'pipe'],
    });
    let stdout = '';
    let stderr = '';
    child.stdout.setEncoding('utf8').on('data', (d: string) => (stdout += d));
    child.stderr.setEncoding('utf8').on('data', (d: string) => (stderr += d));
    const exited = new Promise<number | null>((resolve) => child.on('close', (code) => resolve(code)));
    await expect.poll(() => node.requests.length, { timeout: 10_000, interval: 20, message: 'the request to arrive' }).toBeGreaterThan(0);
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/interrupted: the read was cancelled/);
  });
});
