/**
 * Issue 25's messages about a retention run, on real reference nodes and the real CLI (in
 * process): the result table fits the terminal, `retention apply -o csv` and `history -o csv` say
 * which spans each step deleted, and a rule kept less than an hour (`nnt:*=1s`) is warned about and
 * needs --allow-short-age off a terminal.
 */
import { existsSync, mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { parseCsv } from '../../src/cli/render/csv.js';
import { runCli, startCli } from '../helpers/cli.js';
import { runInProcess } from '../helpers/in-process.js';
import { startNode, startNodes, stopAllNodes, type TestNode } from '../helpers/nodes.js';

let nodes: TestNode[];
let list: string;
let env: Record<string, string>;

beforeAll(async () => {
  nodes = await startNodes(2, { memory: true });
  list = nodes.map((n) => n.url).join(',');
  env = { XDG_STATE_HOME: mkdtempSync(join(tmpdir(), 'tsnode-msgs-')), XDG_CONFIG_HOME: mkdtempSync(join(tmpdir(), 'tsnode-msgs-cfg-')) };
}, 30_000);
const agent = new Agent();
afterAll(async () => {
  await stopAllNodes();
  await agent.close();
});

const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });
const UUID = '00000000-0000-4000-8000-000000000025';
/** One numeric point two hours old on `url`. */
async function seedOld(url: string): Promise<number> {
  const offset = Math.floor(Date.now() / 1000 / 60) * 60 - 7200;
  await client(url).writeNnt([{ metric: 'short', id: UUID, offset, count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 }]);
  return offset;
}
async function hasPoint(url: string, offset: number): Promise<boolean> {
  const r = await client(url).readRollup({ uuid: UUID, metric: 'short', startMs: offset * 1000, endMs: (offset + 60) * 1000, spanMs: 60_000, engine: 'nnt' });
  return r.points[0]?.value != null;
}

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

describe('a rule kept less than an hour', () => {
  it('plan warns, naming the rule and what it deletes', async () => {
    const r = await runInProcess(['retention', 'plan', '--rule', 'nnt:*=1s', '--rule', 'text=59m', '--rule', 'nnt:60=1h', '--nodes', list], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain('warning: --rule "nnt:*=1s" keeps only the last 1s of every nnt span, deleting nearly all of it (an age under 1h is almost always a mistake');
    expect(r.stderr).toContain('warning: --rule "text=59m" keeps only the last 59m of text');
    expect(r.stderr).not.toContain('"nnt:60=1h" keeps only');
  });

  it('apply off a terminal is refused without --allow-short-age (exit 2, nothing sent), and runs with it', async () => {
    const offset = await seedOld(nodes[0]!.url);
    const refused = await runInProcess(['retention', 'apply', '--rule', 'nnt:*=1s', '--nodes', nodes[0]!.url, '--yes'], { env });
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain('--rule "nnt:*=1s" keeps only the last 1s of every nnt span');
    expect(refused.stderr).toContain('refused without --allow-short-age off a terminal (nothing was sent)');
    expect(refused.stderr).toContain('hint: if you mean it, add --allow-short-age');
    expect(await hasPoint(nodes[0]!.url, offset)).toBe(true);

    const ran = await runInProcess(['retention', 'apply', '--rule', 'nnt:*=1s', '--nodes', nodes[0]!.url, '--yes', '--allow-short-age'], { env });
    expect(ran.code, ran.stderr).toBe(0);
    expect(ran.stderr).toContain('keeps only the last 1s of every nnt span'); // still warned
    expect(await hasPoint(nodes[0]!.url, offset)).toBe(false);
  });
});

describe('retention plan: what stays readable from the raw records', () => {
  it('after nnt:60=7d with "*": 2y, plan says span 60 stays readable until the 2y step, and a dispatch read shows it', async () => {
    const node = nodes[1]!.url;
    const offset = Math.floor(Date.now() / 1000 / 86_400) * 86_400 - 10 * 86_400; // 10 days old
    await client(node).writeNnt([{ metric: 'raw', id: UUID, offset, count: 1, value: 7, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 }]);
    const rules = ['--rule', 'nnt:60=7d', '--rule', 'nnt:*=2y', '--nodes', node];

    const plan = await runInProcess(['retention', 'plan', ...rules], { env });
    expect(plan.code).toBe(0);
    expect(plan.stdout).toContain('kept forever: all text (no rule); all histogram (no rule)');
    expect(plan.stdout).toContain(
      'nnt span 60 (older than 7d) stays readable from the raw records until step 2 (2y) deletes them: a plain read (engine dispatch) still shows them; --engine nnt does not',
    );
    expect(plan.stderr).toContain('warning: nnt span 60 (older than 7d) stays readable from the raw records until step 2 (2y) deletes them');
    const json = await runInProcess(['retention', 'plan', ...rules, '-o', 'json'], { env });
    expect(JSON.parse(json.stdout).nodes[0].raw_readable).toEqual([{ span: 60, step: 1, age: '7d', until: { step: 2, age: '2y' } }]);

    // What the plan says holds on the node: after the run, dispatch still reads the bucket, the rollup alone does not.
    const ran = await runInProcess(['retention', 'apply', ...rules, '--yes'], { env });
    expect(ran.code, ran.stderr).toBe(0);
    const read = (engine: 'dispatch' | 'nnt') =>
      client(node).readRollup({ uuid: UUID, metric: 'raw', startMs: offset * 1000, endMs: (offset + 60) * 1000, spanMs: 60_000, engine });
    expect((await read('dispatch')).points[0]?.value).toBe(7);
    expect((await read('nnt')).points[0]?.value ?? null).toBeNull();

    // tsnode read says so when its dispatch read shows such a bucket; --engine nnt has nothing to warn about.
    const range = ['--start', String(offset - 3600), '--end', String(offset + 3600), '--span', '60s', '--nodes', node];
    for (const extra of [[], ['-o', 'csv'], ['--type', 'all']]) {
      const r = await runInProcess(['read', UUID, 'raw', ...range, ...extra], { env });
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toMatch(/warning: 1 bucket\(s\) of span 60s from \S+ .*on are older than http:\/\/127\.0\.0\.1:\d+'s last sweep of that span \(before /);
      expect(r.stderr).toContain('this dispatch read filled them from the raw records the sweep kept; --engine nnt reads only what the rollup keeps');
    }
    const rollupOnly = await runInProcess(['read', UUID, 'raw', ...range, '--engine', 'nnt'], { env });
    expect(rollupOnly.code).toBe(0);
    expect(rollupOnly.stderr).not.toContain('filled them from the raw records');
    // a range after the sweep's cut-off: nothing filled, nothing said
    const recent = await runInProcess(['read', UUID, 'raw', '--start', '1h', '--span', '60s', '--nodes', node], { env });
    expect(recent.stderr).not.toContain('filled them from the raw records');
  });
});

describe('a node without the sweep API in retention apply', () => {
  it('its verification names each distinct verdict once, with the spans it holds for', async () => {
    const managed = await startNode({ memory: true, args: ['--no-sweep-api'] });
    const r = await runInProcess(['retention', 'apply', '--rule', 'nnt:60=30d', '--nodes', managed.url, '--yes'], { env });
    const line = r.stderr.split('\n').find((l) => l.includes('node_managed (nothing sent)'))!;
    expect(line).toContain('nnt 60, 300, 1800, 10800, 86400');
    expect(line.split('cannot_verify').length).toBe(2); // once, not once per span
    await managed.stop();
  });
});

describe('a retention apply killed mid-run', () => {
  it("leaves a catch-up in history with the run's profile and node-source flags, header values never shown", async () => {
    // A slow sweep (paced) on enough series that the kill lands while step 1 runs.
    const slow = await startNode({ memory: true, sweepPaceMs: 100 });
    await client(slow.url).writeNnt(
      Array.from({ length: 40 }, (_, i) => ({
        metric: 'killed',
        id: `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`,
        offset: Math.floor(Date.now() / 1000 / 60) * 60 - 10 * 86_400,
        count: 1,
        value: 1,
        derivative: 0,
        counter: 0,
        stddev: 0,
        derivative_stddev: 0,
        counter_stddev: 0,
      })),
    );
    const config = join(mkdtempSync(join(tmpdir(), 'tsnode-msgs-profile-')), 'config.yaml');
    const penv = { ...env, TSNODE_CONFIG: config };
    expect((await runCli(['profile', 'set', 'night', '--nodes', slow.url], { env: penv })).code).toBe(0);
    const run = startCli(['retention', 'apply', '--rule', 'nnt:*=1d', '--profile', 'night', '--redact', 'X-Team', '--header', 'X-Team: secret-value', '--yes'], { env: penv });
    const runFile = (await run.waitForStderr(/run file \S+\.json/)).replace(/^run file /, '');
    // Killed once the run file exists: written before the first DELETE.
    for (const deadline = Date.now() + 15_000; !existsSync(runFile) && Date.now() < deadline;) await new Promise((r) => setTimeout(r, 20));
    run.child.kill('SIGKILL');
    await run.done;

    const h = await runInProcess(['history', '-o', 'json'], { env: penv });
    const last = JSON.parse(h.stdout).runs.at(-1);
    expect(last.kind).toBe('retention');
    expect(last.outcome_recorded).toBe(false);
    expect(last.profile).toBe('night');
    expect(last.catch_up.command).toMatch(/^tsnode retention apply --resume r-\S+ --yes --profile night --redact X-Team$/);
    expect(last.catch_up.add_back).toEqual(['--header (1 given; values not shown)']);
    expect(h.stdout).not.toContain('secret-value');

    // The run file records them too (version 2), never the header's value.
    expect(last.retention.run_file).toBe(runFile);
    const file = readFileSync(runFile, 'utf8');
    expect(file).not.toContain('secret-value');
    expect(JSON.parse(file)).toMatchObject({
      version: 2,
      origin: { profile: 'night', flags: ['--profile', 'night', '--redact', 'X-Team'], add_back: ['--header (1 given; values not shown)'] },
    });

    // The catch-up runs as printed (its words, no shell needed) and finishes the run.
    const words = (last.catch_up.command as string).split(' ');
    expect(words[0]).toBe('tsnode');
    const resumed = await runCli(words.slice(1), { env: penv, timeoutMs: 60_000 });
    expect(resumed.stderr).not.toMatch(/was started with/);
    expect(resumed.code).toBe(0);
    const after = JSON.parse((await runInProcess(['history', '-o', 'json'], { env: penv })).stdout).runs.at(-1);
    expect(after.run).toBe(last.run);
    expect(after.catch_up).toBeNull();

    await slow.stop();
  });
});
