/**
 * Issue 25's messages about a retention run, on real reference nodes and the real CLI (in
 * process): the result table fits the terminal, `retention apply -o csv` and `history -o csv` say
 * which spans each step deleted.
 */
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/cli/render/csv.js';
import { runInProcess } from '../helpers/in-process.js';
import { startNodes, stopAllNodes, type TestNode } from '../helpers/nodes.js';

let nodes: TestNode[];
let list: string;
let env: Record<string, string>;

beforeAll(async () => {
  nodes = await startNodes(2, { memory: true });
  list = nodes.map((n) => n.url).join(',');
  env = { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'tsnode-msgs-')), XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'tsnode-msgs-cfg-')) };
}, 30_000);
afterAll(() => stopAllNodes());

const POLICY = ['--rule', 'nnt:60=7d', '--rule', 'nnt:300=30d', '--rule', 'nnt:*=2y', '--rule', 'text=90d'];

describe('retention apply: the result on a terminal and in CSV', () => {
  it('the result table fits the terminal it is printed on', async () => {
    const r = await runInProcess(['retention', 'apply', ...POLICY, '--nodes', list, '--yes'], { env, tty: { columns: 60, rows: 30 } });
    expect(r.code).toBe(0);
    const lines = r.stdout.trimEnd().split('\n');
    expect(lines.length).toBeGreaterThan(2);
    for (const line of lines) expect(line.length, line).toBeLessThanOrEqual(60);
  });

  it('-o csv carries the spans each step deleted; history -o csv carries every step with its spans', async () => {
    const r = await runInProcess(['retention', 'apply', ...POLICY, '--nodes', list, '--yes', '-o', 'csv'], { env });
    expect(r.code).toBe(0);
    const [head, ...rows] = parseCsv(r.stdout);
    const col = (name: string): number => head!.indexOf(name);
    expect(col('nnt_spans')).toBeGreaterThan(0);
    expect(col('histogram_spans')).toBeGreaterThan(0);
    const first = rows.filter((row) => row[col('node')] === nodes[0]!.url);
    expect(first.map((row) => [row[col('step')], row[col('types')], row[col('nnt_spans')], row[col('histogram_spans')]])).toEqual([
      ['1', 'nnt', '60', ''],
      ['2', 'nnt', '300', ''],
      ['3', 'text', '', ''],
      ['4', 'nnt', 'all', ''],
    ]);
    const runId = first[0]![col('run_id')]!;

    const h = await runInProcess(['history', '-o', 'csv'], { env });
    expect(h.code).toBe(0);
    const [hHead, ...hRows] = parseCsv(h.stdout);
    const row = hRows.find((x) => x[0] === runId)!;
    const steps = row[hHead!.indexOf('steps')]!;
    expect(steps.split(' | ').map((s) => s.replace(/ \d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ/, ''))).toEqual(['1 nnt 60', '2 nnt 300', '3 text', '4 nnt all']);
  });
});
