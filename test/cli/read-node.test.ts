import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Dispatcher } from 'undici';
import { createAgent } from '../../src/client/agent.js';
import { NodeClient } from '../../src/client/node-client.js';
import { ENGINES, ROLLUP_MEMBERS, ROLLUP_TYPES, MEMBER_OF_TYPE, type NntRecord } from '../../src/protocol/index.js';
import { parseCsv } from '../../src/cli/render/csv.js';
import { runCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/in-process.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const U = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
const T0 = 1_700_000_040; // a multiple of 60
const N = 30;
const GAPS = new Set([7, 8, 20]);
const ODD_NAMES = ['cpu idle', 'disk|ST[dev:sda,mount:/]', 'a/b', '100%', 'what?x=1', 'hash#tag', 'température°C', 'a+b&c=d', '..', '日本語 🚀'];
const RANGE = ['--start', String(T0), '--end', String(T0 + N * 60), '--span', '60s'];

function record(metric: string, i: number): NntRecord {
  const rec: NntRecord = {
    metric,
    id: U,
    offset: T0 + i * 60,
    count: 6 + (i % 4),
    value: i === 3 ? 0.1 + 0.2 : i * 1.25 - 10,
    stddev: (i % 3) * 0.5,
    derivative: i * 0.01,
    derivative_stddev: 0.125,
    counter: i * 2,
    counter_stddev: 0.25,
  };
  // One record with raw pieces (10 s each), consistent with its mean, for millisecond recalc reads.
  if (i === 0) {
    Object.assign(rec, { count: 6, value: 1.5, stddev: 0.5, derivative: 0, derivative_stddev: 0, counter: 0, counter_stddev: 0 });
    rec.parts = [10, [1, 2, 1, 2, 1, 2].map((value) => ({ count: 1, value, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 }))];
  }
  return rec;
}

let node: TestNode;
let twin: TestNode;
let agent: Dispatcher;
let client: NodeClient;

beforeAll(async () => {
  [node, twin] = await Promise.all([startNode({ memory: true, rollups: [60, 300] }), startNode({ memory: true, rollups: [60, 300] })]);
  agent = createAgent();
  client = new NodeClient(node.url, { dispatcher: agent });
  const records = ['cpu', ...ODD_NAMES].flatMap((m) =>
    Array.from({ length: N }, (_, i) => i)
      .filter((i) => !GAPS.has(i))
      .map((i) => record(m, i)),
  );
  await client.writeNnt(records);
  await new NodeClient(twin.url, { dispatcher: agent }).writeNnt(records);
});
afterAll(async () => {
  await agent?.close();
  await stopAllNodes();
});

const read = (args: string[], url = node.url) => runInProcess(['read', U, ...args, '--node', url]);
const expected = (i: number, member: keyof NntRecord) => (GAPS.has(i) ? null : (record('cpu', i)[member] as number));

describe('tsnode read against a reference node', () => {
  it('every type on every engine: the CLI prints exactly what the library reads', async () => {
    for (const engine of ENGINES) {
      for (const type of ROLLUP_TYPES) {
        const r = await read(['cpu', ...RANGE, '--engine', engine, '--type', type, '--output', 'json']);
        expect(r.code, `${engine}/${type}: ${r.stderr}`).toBe(0);
        const lib = await client.readRollup({ uuid: U, metric: 'cpu', startMs: T0 * 1000, endMs: (T0 + N * 60) * 1000, spanMs: 60_000, engine, type });
        const rows = (JSON.parse(r.stdout) as { rows: Array<Record<string, unknown>> }).rows;
        expect(rows).toHaveLength(N);
        rows.forEach((row, i) => {
          const p = lib.points[i]!;
          expect(row.time).toBe(p.timestampMs / 1000);
          if (type === 'all') {
            for (const m of ROLLUP_MEMBERS) expect(row[m], `${engine}/${type}/${m}[${i}]`).toBe(p.value === null ? null : (p.value as unknown as Record<string, number | null>)[m]);
          } else expect(row.value, `${engine}/${type}[${i}]`).toBe(p.value);
        });
        expect(r.stderr).toContain(`engine ${engine}`);
        expect(r.stderr).toContain(`type ${type}`);
      }
    }
  });

  it('stored rollups come back as written, with empty buckets as null', async () => {
    for (const engine of ['dispatch', 'nnt'] as const) {
      for (const type of ['average', 'count', 'derive', 'counter', 'average_stddev', 'derive_stddev', 'counter_stddev'] as const) {
        const r = await read(['cpu', ...RANGE, '--engine', engine, '--type', type, '--output', 'json']);
        const member = MEMBER_OF_TYPE[type];
        const field = (member === 'value' ? 'value' : member) as keyof NntRecord;
        const rows = (JSON.parse(r.stdout) as { rows: Array<{ value: number | null }> }).rows;
        expect(rows.map((x) => x.value)).toEqual(Array.from({ length: N }, (_, i) => expected(i, field)));
      }
    }
  });

  it('--type all: one column per member in the table, CSV and JSON parse back to the same numbers', async () => {
    const table = await read(['cpu', ...RANGE, '--type', 'all']);
    const header = table.stdout
      .split('\n')[1]!
      .split('│')
      .map((s) => s.trim())
      .filter(Boolean);
    expect(header).toEqual(['time', ...ROLLUP_MEMBERS]);
    const csv = parseCsv((await read(['cpu', ...RANGE, '--type', 'all', '--output', 'csv'])).stdout);
    const json = (JSON.parse((await read(['cpu', ...RANGE, '--type', 'all', '--output', 'json'])).stdout) as { rows: Array<Record<string, number | null>> }).rows;
    expect(csv[0]).toEqual(['time', 'time_iso', ...ROLLUP_MEMBERS]);
    expect(csv).toHaveLength(N + 1);
    for (let i = 0; i < N; i++) {
      ROLLUP_MEMBERS.forEach((m, k) => {
        const cell = csv[i + 1]![k + 2]!;
        expect(cell === '' ? null : Number(cell)).toBe(json[i]![m]);
      });
      expect(json[i]!.count).toBe(expected(i, 'count'));
      expect(json[i]!.value).toBe(expected(i, 'value'));
    }
    // Null buckets: every member empty.
    expect(csv[8]!.slice(2).every((c) => c === '')).toBe(true);
  });

  it('table: readable numbers, a dash for empty buckets; parses back close to the exact values', async () => {
    const r = await read(['cpu', ...RANGE]);
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(N + 4);
    expect(r.stdout).not.toContain('0.30000000000000004');
    const cells = lines.slice(3, 3 + N).map((l) => l.split('│').map((s) => s.trim()));
    cells.forEach((c, i) => {
      expect(c[1]).toBe(new Date((T0 + i * 60) * 1000).toISOString().replace('.000Z', 'Z'));
      const v = expected(i, 'value');
      if (v === null) expect(c[2]).toBe('-');
      else expect(Math.abs(Number(c[2]) - v)).toBeLessThan(1e-3);
    });
    expect(r.stderr).toMatch(new RegExp(`node ${node.url} · check ${U} · metric "cpu" · type average · span 60s · engine dispatch · .*${T0}.* → .*${T0 + N * 60}.* · ${N} rows`));
  });

  it('millisecond spans: fractional timestamps, ISO times with milliseconds, in every format', async () => {
    const args = ['cpu', '--start', `${T0}.000`, '--end', `${T0 + 12}.000`, '--span', '1500ms', '--engine', 'recalc'];
    const doc = JSON.parse((await read([...args, '--output', 'json'])).stdout) as { span: number; rows: Array<{ time: number; time_iso: string; value: number | null }> };
    expect(doc.span).toBe(1.5);
    const json = doc.rows;
    expect(json).toHaveLength(8);
    expect(json[1]).toEqual({ time: T0 + 1.5, time_iso: new Date((T0 + 1.5) * 1000).toISOString(), value: null });
    expect(json[0]!.value).toBe(1);
    expect(json[6]!.value).toBe(2); // the piece at +10 s falls in [9 s, 10.5 s)
    const csv = parseCsv((await read([...args, '--output', 'csv'])).stdout);
    expect(csv.slice(1).map((r) => [Number(r[0]), r[1], r[2] === '' ? null : Number(r[2])])).toEqual(json.map((j) => [j.time, j.time_iso, j.value]));
    const table = (await read(args)).stdout;
    expect(table).toContain(`${new Date((T0 + 1.5) * 1000).toISOString()} │`);
    expect(table).toContain(`${new Date(T0 * 1000).toISOString()} │`); // .000Z kept for a uniform column
  });

  it('odd metric names reach the node intact, in every output format', async () => {
    for (const name of ODD_NAMES) {
      const json = await read([name, ...RANGE, '--output', 'json']);
      expect(json.code, `${name}: ${json.stderr}`).toBe(0);
      expect(JSON.parse(json.stdout).metric).toBe(name);
      expect(JSON.parse(json.stdout).rows.map((x: { value: number | null }) => x.value)).toEqual(Array.from({ length: N }, (_, i) => expected(i, 'value')));
      expect(json.stderr).toContain(`metric ${JSON.stringify(name)}`);
    }
    const csv = parseCsv((await read([ODD_NAMES[1]!, ...RANGE, '--output', 'csv'])).stdout);
    expect(csv[5]![2]).toBe(String(expected(4, 'value')));
  });

  it('chart: a plot that fits the width, with the range on the axis', async () => {
    const r = await runInProcess(['read', U, 'cpu', ...RANGE, '--node', node.url, '--output', 'chart'], { env: { COLUMNS: '60', LINES: '16' } });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines).toHaveLength(14); // LINES 16, minus the header line, minus the prompt
    for (const l of lines) expect([...l].length).toBeLessThanOrEqual(59);
    expect(lines[0]).toMatch(/^\s*26.25 ┤/); // max value: 29 * 1.25 - 10
    expect(lines[lines.length - 3]).toMatch(/└─+$/);
    expect(r.stdout).toMatch(/[⠁-⣿]/);
    expect(lines[lines.length - 1]).toContain(`${N} buckets`);
  });

  it('--limit: the node cuts the result off and read warns', async () => {
    const r = await read(['cpu', ...RANGE, '--limit', '5', '--output', 'csv']);
    expect(r.code).toBe(0);
    expect(parseCsv(r.stdout)).toHaveLength(6);
    expect(r.stderr).toMatch(/warning: .* cut the result off after 5 of 30 rows/);
  });

  it("the node's 400 is shown with its message, exit 1", async () => {
    const r = await read(['cpu', '--start', String(T0), '--end', String(T0 + 900), '--span', '90s', '--engine', 'nnt']);
    expect(r.code).toBe(1);
    expect(r.stdout).toBe('');
    expect(r.stderr).toMatch(/HTTP 400: rollup_span 90s is not a whole multiple of the smallest configured span 60s/);
  });

  it('--compare: identical nodes exit 0; a changed bucket is marked and exits 3 (spawned)', async () => {
    const nodes = ['--nodes', `${node.url},${twin.url}`];
    let r = await runCli(['read', U, 'cpu', ...RANGE, '--compare', ...nodes]);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/2 nodes identical over 30 buckets/);
    await new NodeClient(twin.url, { dispatcher: agent }).writeNnt([{ ...record('cpu', 5), value: 99 }]);
    r = await runCli(['read', U, 'cpu', ...RANGE, '--compare', ...nodes]);
    expect(r.code).toBe(3);
    expect(r.stderr).toMatch(/nodes differ in 1 of 30 buckets/);
    const marked = r.stdout.split('\n').filter((l) => l.includes('*'));
    expect(marked).toHaveLength(1);
    expect(marked[0]).toContain(new Date((T0 + 5 * 60) * 1000).toISOString().replace('.000Z', 'Z'));
    expect(marked[0]).toMatch(/-3\.75 │ +99\.00 │ \* │/);
    await new NodeClient(twin.url, { dispatcher: agent }).writeNnt([record('cpu', 5)]);
  });

  it('CSV end to end through the built bin', async () => {
    const r = await runCli(['read', U, 'disk|ST[dev:sda,mount:/]', ...RANGE, '--node', node.url, '--output', 'csv']);
    expect(r.code, r.stderr).toBe(0);
    const rows = parseCsv(r.stdout);
    expect(rows).toHaveLength(N + 1);
    expect(rows.slice(1).map((x) => (x[2] === '' ? null : Number(x[2])))).toEqual(Array.from({ length: N }, (_, i) => expected(i, 'value')));
  });
});
