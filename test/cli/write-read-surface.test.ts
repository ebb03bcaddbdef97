/**
 * `write` and `read` on the one command surface: profiles name their nodes (and lend their
 * settings to `--node`), a bad flag sends nothing (not even a seed's discovery), the smallest span
 * falls back to the profile when the nodes do not report theirs, the renamed flags warn, the
 * summary has table, JSON and CSV forms, tables fit the terminal, and text and histogram data go
 * through the CLI: written, swept and read back without curl.
 */
import { appendFileSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { parseCsv } from '../../src/cli/render/csv.js';
import { runCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/in-process.js';
import { deadAddress, startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startRecordingNode, type RecordingNode } from '../helpers/recording-node.js';

const ID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';
let dir: string;
let node: TestNode;
/** A node that answers writes and nothing else: no /state, no /stats.json (an older store, say). */
let mute: RecordingNode;

beforeAll(async () => {
  dir = mkdtempSync(join(tmpdir(), 'tsnode-wr-surface-'));
  node = await startNode({ memory: true, histogramRollups: [60, 300] });
  mute = await startRecordingNode((req) => (req.rawUrl.startsWith('/write/') ? { body: '{}' } : { status: 404, body: '{"error":"not found","code":"not_found"}' }));
});
afterAll(async () => {
  await stopAllNodes();
  await mute.close();
  rmSync(dir, { recursive: true, force: true });
});

let users = 0;
/** A user of their own: config and state dirs in the test's temp dir, nothing configured. */
function user(): Record<string, string> {
  const home = join(dir, `home-${users++}`);
  return { HOME: home, XDG_CONFIG_HOME: join(home, '.config'), XDG_STATE_HOME: join(home, '.state') };
}

function ndjson(name: string, records: Array<Record<string, unknown>>): string {
  const path = join(dir, name);
  writeFileSync(path, records.map((r) => JSON.stringify(r)).join('\n') + '\n');
  return path;
}
const nnt = (metric: string, n: number, start = 0): Array<Record<string, unknown>> =>
  Array.from({ length: n }, (_, i) => ({ metric, id: ID, offset: start + 60 * i, count: 1, value: i }));
const lines = (stderr: string): string[] =>
  stderr
    .split('\n')
    .filter(Boolean)
    .map((l) => l.replace(/^\S+Z /, ''));

describe('profiles name the nodes of write and read', () => {
  it('a profile is the target; --node takes the profile settings, the current profile lends none', async () => {
    const env = user();
    expect((await runCli(['profile', 'set', 'lab', '--nodes', node.url], { env })).code).toBe(0);
    const f = ndjson('profile.ndjson', nnt('prof', 5));
    const w = await runCli(['--profile', 'lab', 'write', f, '-o', 'json'], { env });
    expect(w.code, w.stderr).toBe(0);
    expect(lines(w.stderr)[0]).toBe('nodes: profile lab, 1 node');
    expect(JSON.parse(w.stdout)).toMatchObject({ written: 5, rejected: 0 });
    const r = await runCli(['read', ID, 'prof', '--start', '0', '--end', '300', '--span', '60s', '-o', 'json'], { env: { ...env, TSNODE_PROFILE: 'lab' } });
    expect(r.code, r.stderr).toBe(0);
    expect(lines(r.stderr)[0]).toBe('nodes: profile lab, 1 node');
    expect(JSON.parse(r.stdout).rows.map((x: { value: number }) => x.value)).toEqual([0, 1, 2, 3, 4]);

    // A profile with a header: --profile lends it to --node; the current profile does not.
    const rec = await startRecordingNode({ body: '[]' });
    try {
      expect((await runCli(['profile', 'set', 'auth', '--nodes', node.url, '--header', 'X-Tenant: blue'], { env })).code).toBe(0);
      const pinned = await runCli(['--profile', 'auth', 'read', ID, 'cpu', '--node', rec.url, '--start', '0', '--end', '60', '--span', '60s'], { env });
      expect(pinned.code, pinned.stderr).toBe(0);
      expect(lines(pinned.stderr)[0]).toBe(`nodes: --node ${rec.url}, 1 node`);
      // Every request of the read carries it (the rollup, and the dispatch read's status GET beside it).
      expect(rec.requests.length).toBeGreaterThan(0);
      expect(new Set(rec.requests.map((q) => q.headers['x-tenant']))).toEqual(new Set(['blue']));
      rec.requests.length = 0;
      expect((await runCli(['profile', 'use', 'auth'], { env })).code).toBe(0);
      const current = await runCli(['read', ID, 'cpu', '--node', rec.url, '--start', '0', '--end', '60', '--span', '60s'], { env });
      expect(current.code, current.stderr).toBe(0);
      expect(rec.requests.length).toBeGreaterThan(0);
      for (const q of rec.requests) expect(q.headers['x-tenant']).toBeUndefined();
    } finally {
      await rec.close();
    }
  });

  it('a bad flag sends nothing, not even the seed discovery; --node with --seed or --nodes is refused', async () => {
    const seed = await startRecordingNode({ body: '{}' });
    try {
      const f = ndjson('seedbad.ndjson', nnt('sb', 2));
      const cases: string[][] = [
        ['write', f, '--seed', seed.url, '--batch-bytes', 'lots'],
        ['write', f, '--seed', seed.url, '--kind', 'text', '--smallest-span', '60'],
        ['write', f, '--seed', seed.url, '--allow-changed-input'],
        ['write', f, '--seed', seed.url, '--node', node.url],
        ['write', f, '--nodes', node.url, '--node', node.url],
        ['read', ID, 'cpu', '--seed', seed.url, '--kind', 'histogram'],
        ['read', ID, 'cpu', '--seed', seed.url, '--kind', 'text', '--type', 'count'],
        ['read', ID, 'cpu', '--seed', seed.url, '--start', 'yesterday'],
        ['read', ID, 'cpu', '--seed', seed.url, '--node', node.url],
      ];
      for (const argv of cases) {
        const r = await runCli(argv, { env: user() });
        expect(r.code, `${argv.join(' ')}: ${r.stderr}`).toBe(2);
        expect(r.stdout).toBe('');
      }
      expect(seed.requests).toEqual([]);
      const both = await runCli(['read', ID, 'cpu', '--seed', seed.url, '--node', node.url], { env: user() });
      expect(lines(both.stderr)).toEqual(['error: --node and --seed both name the nodes', '  hint: use --node for exactly one node, or --seed to discover the ring from it']);
    } finally {
      await seed.close();
    }
  });
});

describe('write: the smallest span, the renamed flags, the summary', () => {
  it('nodes that report no span: the profile smallest_span, else 60; the flag wins over both', async () => {
    const env = user();
    const f = ndjson('spanfall.ndjson', [
      { metric: 'sf', id: ID, offset: 60, count: 1, value: 1 },
      { metric: 'sf', id: ID, offset: 300, count: 1, value: 1 },
    ]);
    const plain = await runCli(['write', f, '--node', mute.url, '-o', 'json'], { env });
    expect(plain.code, plain.stderr).toBe(0);
    expect(plain.stderr).toContain('smallest span 60s, the default: the nodes do not report theirs');
    expect(JSON.parse(plain.stdout)).toMatchObject({ smallest_span: { seconds: 60, from: 'default' }, written: 2 });

    expect((await runCli(['profile', 'set', 'old', '--nodes', mute.url, '--smallest-span', '5m'], { env })).code).toBe(0);
    const profiled = await runCli(['--profile', 'old', 'write', f, '-o', 'json'], { env });
    expect(profiled.code).toBe(3);
    expect(profiled.stderr).toMatch(/smallest span 300s, from profiles\.old\.smallest_span \(.*config\.yaml:\d+\): the nodes do not report theirs/);
    expect(JSON.parse(profiled.stdout)).toMatchObject({ smallest_span: { seconds: 300, from: 'profile' }, written: 1, invalid: 1 });

    const flagged = await runCli(['--profile', 'old', 'write', f, '--smallest-span', '60', '-o', 'json'], { env });
    expect(flagged.code, flagged.stderr).toBe(0);
    expect(JSON.parse(flagged.stdout)).toMatchObject({ smallest_span: { seconds: 60, from: 'flag' }, written: 2 });

    // A node that reports its span beats the profile, which is named as out of date.
    expect((await runCli(['profile', 'set', 'stale', '--nodes', node.url, '--smallest-span', '300'], { env })).code).toBe(0);
    const reported = await runCli(['--profile', 'stale', 'write', f, '-o', 'json'], { env });
    expect(reported.code, reported.stderr).toBe(0);
    expect(reported.stderr).toMatch(/warning: profiles\.stale\.smallest_span .* says 300s, but the nodes report a smallest span of 60s: using the nodes'/);
    expect(JSON.parse(reported.stdout)).toMatchObject({ smallest_span: { seconds: 60, from: 'nodes' } });
  });

  it('--allow-changed-input resumes a changed input; --force still does, with a warning; both at once is refused', async () => {
    const records = nnt('chg', 10);
    records[3] = { ...records[3], id: 'bad' };
    const f = ndjson('changed.ndjson', records);
    const first = await runCli(['write', f, '--node', node.url, '--batch-size', '2', '--concurrency', '1', '--max-errors', '0'], { env: user() });
    expect(first.code).toBe(3);
    appendFileSync(f, `${JSON.stringify({ metric: 'chg', id: ID, offset: 600, count: 1, value: 10 })}\n`);
    const refused = await runCli(['write', f, '--node', node.url, '--resume'], { env: user() });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(/changed since the saved run .*\n.*hint: pass --allow-changed-input to resume anyway/);
    const both = await runCli(['write', f, '--node', node.url, '--resume', '--force', '--allow-changed-input'], { env: user() });
    expect(both.code).toBe(2);
    expect(lines(both.stderr)[0]).toBe('error: --force and --allow-changed-input both given');
    const old = await runCli(['write', f, '--node', node.url, '--resume', '--force', '--dry-run'], { env: user() });
    expect(lines(old.stderr)[0]).toMatch(/^warning: write --force is deprecated: use --allow-changed-input/);
    const resumed = await runCli(['write', f, '--node', node.url, '--resume', '--allow-changed-input', '-o', 'json'], { env: user() });
    expect(resumed.code, resumed.stderr).toBe(3); // the earlier run's invalid record is still only in the rejects file
    expect(resumed.stderr).toMatch(/changed since the saved run .*resuming anyway because of --allow-changed-input/);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'done', rejected: 0, earlier: { invalid: 1 } });
  });

  it('-o csv: a row for the run and one per node; -o text is the old name of table', async () => {
    const dead = await deadAddress();
    const f = ndjson('csv.ndjson', nnt('csv', 6));
    const r = await runCli(['write', f, '--nodes', `${node.url},${dead}`, '--to', 'all', '--batch-size', '3', '--retries', '0', '-o', 'csv'], { env: user() });
    expect(r.code).toBe(3);
    const rows = parseCsv(r.stdout);
    const col = (name: string): number => rows[0]!.indexOf(name);
    expect(rows[0]!.slice(0, 7)).toEqual(['scope', 'node', 'status', 'kind', 'to', 'read', 'written']);
    expect(rows).toHaveLength(4);
    expect(rows[1]!.slice(0, 7)).toEqual(['run', '', 'done', 'nnt', 'all', '6', '0']);
    expect(rows[1]![col('written_to_some')]).toBe('6');
    expect(rows[2]!.slice(0, 2)).toEqual(['node', node.url]);
    expect(rows[2]![col('written')]).toBe('6');
    expect(rows[3]!.slice(0, 2)).toEqual(['node', dead]);
    expect(rows[3]![col('failed_records')]).toBe('6');
    expect(rows[3]![col('error')]).toMatch(/connection refused/);

    const old = await runCli(['write', f, '--node', node.url, '-o', 'text'], { env: user() });
    expect(old.code).toBe(0);
    expect(old.stderr).toMatch(/warning: write --output text is deprecated: it is now --output table/);
    expect(old.stdout).toMatch(/^read 6 records from 1 input, wrote 6 in 1 batch to 1 node \(--to any\)\n/);
  });

  it('the per-node table fits a narrow terminal; off a terminal it keeps its width', async () => {
    const dead = await deadAddress();
    const f = ndjson('narrow.ndjson', nnt('narrow', 4));
    const args = ['write', f, '--nodes', `${node.url},${dead}`, '--to', 'all', '--retries', '0'];
    const narrow = await runInProcess(args, { tty: { columns: 80, rows: 24 } });
    expect(narrow.code).toBe(3);
    const table = narrow.stdout.split('\n').filter((l) => /^[┌│├└]/.test(l));
    expect(table.length).toBeGreaterThan(4);
    for (const l of table) expect([...l].length).toBeLessThanOrEqual(80);
    const wide = await runInProcess(args);
    expect(Math.max(...wide.stdout.split('\n').map((l) => [...l].length))).toBeGreaterThan(80);
  });
});

describe('text and histogram data through the CLI', () => {
  it('a text retention rule checked without curl: write text, sweep text, read what is left', async () => {
    const env = user();
    const now = Math.floor(Date.now() / 1000);
    const before = now - 86_400;
    const texts = [before - 7200, before - 60, before, before + 3600].map((t, i) => ({ metric: 'version', id: ID, offset: String(t), value: `v${i}` }));
    const f = ndjson('text.ndjson', texts);
    const w = await runCli(['write', f, '--kind', 'text', '--node', node.url, '-o', 'json'], { env });
    expect(w.code, w.stderr).toBe(0);
    expect(JSON.parse(w.stdout)).toMatchObject({ kind: 'text', read: 4, written: 4, smallest_span: null });
    const range = ['--start', String(before - 86_400), '--end', String(now)];
    const all = await runCli(['read', ID, 'version', '--kind', 'text', '--node', node.url, ...range, '-o', 'json'], { env });
    expect(all.code, all.stderr).toBe(0);
    expect(JSON.parse(all.stdout).rows.map((x: { value: string }) => x.value)).toEqual(['v0', 'v1', 'v2', 'v3']);

    const s = await runCli(['sweep', '--before', String(before), '--types', 'text', '--nodes', node.url, '--yes', '--poll-interval', '100ms'], { env });
    expect(s.code, s.stderr).toBe(0);

    const left = await runCli(['read', ID, 'version', '--kind', 'text', '--node', node.url, ...range, '-o', 'json'], { env });
    expect(left.code, left.stderr).toBe(0);
    const doc = JSON.parse(left.stdout);
    expect(doc).toMatchObject({ kind: 'text', node: node.url, uuid: ID, metric: 'version', start: before - 86_400, end: now });
    // Strictly before the delete time is gone; the value at it and after it stays.
    expect(doc.rows).toEqual([
      { time: before, time_iso: new Date(before * 1000).toISOString().replace('.000Z', 'Z'), value: 'v2' },
      { time: before + 3600, time_iso: new Date((before + 3600) * 1000).toISOString().replace('.000Z', 'Z'), value: 'v3' },
    ]);
    const csv = await runCli(['read', ID, 'version', '--kind', 'text', '--node', node.url, ...range, '-o', 'csv'], { env });
    expect(parseCsv(csv.stdout)).toEqual([
      ['time', 'time_iso', 'value'],
      [String(before), doc.rows[0].time_iso, 'v2'],
      [String(before + 3600), doc.rows[1].time_iso, 'v3'],
    ]);
    const table = await runCli(['read', ID, 'version', '--kind', 'text', '--node', node.url, ...range], { env });
    expect(table.stdout).toMatch(/│ time +│ value │/);
    expect(table.stderr).toMatch(/metric "version" · kind text · .* · 2 rows/);
  });

  it('histograms: written with the same checks, read back by period; a period the node does not keep is refused', async () => {
    const env = user();
    const hists = [
      { metric: 'lat', id: ID, offset: 1_700_000_040, period: 60, histogram: 'AAEX/QAB' },
      { metric: 'lat', id: ID, offset: 1_700_000_100, period: 60, histogram: 'AAEX/QAC' },
      { metric: 'lat', id: ID, offset: 1_700_000_100, period: 1800, histogram: 'AAEK/gAF' },
      { metric: 'lat', id: ID, offset: 1_700_000_100, period: 60, histogram: 5 },
    ];
    const f = ndjson('hist.ndjson', hists);
    const w = await runCli(['write', f, '--kind', 'histogram', '--node', node.url, '-o', 'json'], { env });
    expect(w.code).toBe(3);
    // The node reports the periods it keeps (60, 300): the 1800 one is refused here, before sending.
    expect(w.stderr).toContain("histogram periods 60, 300 (the nodes' histogram rollups)");
    expect(JSON.parse(w.stdout)).toMatchObject({ kind: 'histogram', histogram_periods: { seconds: [60, 300], from: 'nodes' }, written: 2, invalid: 2, refused: 0 });
    const rejects = readFileSync(`${f}.rejects.ndjson`, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(rejects.map((l) => [l.record, l.error])).toEqual([
      [3, 'period: must be a configured histogram period (60, 300); got 1800'],
      [4, 'histogram: must be a base64 string (got 5)'],
    ]);

    const range = ['--start', '1700000000', '--end', '1700000200'];
    const r = await runCli(['read', ID, 'lat', '--kind', 'histogram', '--period', '1m', '--node', node.url, ...range, '-o', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout)).toMatchObject({
      kind: 'histogram',
      period: 60,
      rows: [
        { time: 1_700_000_040, time_iso: '2023-11-14T22:14:00Z', period: 60, count: 1, bins: { '+23e-004': 1 } },
        { time: 1_700_000_100, time_iso: '2023-11-14T22:15:00Z', period: 60, count: 2, bins: { '+23e-004': 2 } },
      ],
    });
    // CSV and the table: a line per bin, each with its count.
    const csv = await runCli(['read', ID, 'lat', '--kind', 'histogram', '--period', '1m', '--node', node.url, ...range, '-o', 'csv'], { env });
    expect(csv.code, csv.stderr).toBe(0);
    expect(csv.stdout).toBe('time,time_iso,period,bin,count\r\n1700000040,2023-11-14T22:14:00Z,60,+23e-004,1\r\n1700000100,2023-11-14T22:15:00Z,60,+23e-004,2\r\n');
    const table = await runCli(['read', ID, 'lat', '--kind', 'histogram', '--period', '1m', '--node', node.url, ...range], { env });
    expect(table.code, table.stderr).toBe(0);
    expect(table.stdout).toMatch(/time\s.*period\s.*bin\s.*count/);
    expect(table.stdout).toMatch(/2023-11-14T22:15:00Z.*60.*\+23e-004.*2/);
    const other = await runCli(['read', ID, 'lat', '--kind', 'histogram', '--period', '300', '--node', node.url, ...range, '-o', 'csv'], { env });
    expect(other.code).toBe(0);
    expect(other.stdout).toBe('time,time_iso,period,bin,count\r\n');
    const emptyTable = await runCli(['read', ID, 'lat', '--kind', 'histogram', '--period', '300', '--node', node.url, ...range], { env });
    expect([emptyTable.code, emptyTable.stdout]).toEqual([0, '']);
    expect(emptyTable.stderr).toContain('no histograms in range');
    // Pinned with --node nothing asks the node first: its own 400 names the periods it keeps.
    const odd = await runCli(['read', ID, 'lat', '--kind', 'histogram', '--period', '45', '--node', node.url, ...range], { env });
    expect(odd.code).toBe(1);
    expect(odd.stderr).toMatch(/HTTP 400: period: "45" is not a configured histogram period \(allowed: 60, 300\)/);
    // From a list, the node is asked first: refused before the read (exit 2).
    const listed = await runCli(['read', ID, 'lat', '--kind', 'histogram', '--period', '45', '--nodes', node.url, ...range], { env });
    expect(listed.code).toBe(2);
    expect(listed.stderr).toContain(`--period 45: not a histogram period of ${node.url} (it keeps 60, 300) (nothing was read)`);
  });
});
