/**
 * The destructive-run core (src/run/) on real reference nodes and the real CLI: a refused run
 * leaves a journal record and shows in `history` as refused; one destructive run per target set
 * from a host (two `retention apply` of one policy at once: the second is refused naming the
 * first); and the library's runClusterSweep gives a script what `tsnode sweep` gives, the re-check
 * after the confirmation included.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import { SweepRefusedError } from '../../src/client/sweep-preflight.js';
import type { NntRecord } from '../../src/protocol/index.js';
import { runClusterSweep } from '../../src/run/sweep.js';
import type { JournalEntry } from '../../src/run/records.js';
import { runCli, startCli } from '../helpers/cli.js';
import { deadAddress, startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';

const agent = new Agent();
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });
const DAY = 86_400;
const OLD = Math.floor(Date.now() / 1000 / DAY) * DAY - 400 * DAY;
const BEFORE = OLD + DAY;
const uuid = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

async function seed(url: string, series: number): Promise<void> {
  const recs: NntRecord[] = [];
  for (let i = 0; i < series; i++)
    recs.push({ metric: 'cpu', id: uuid(i), offset: OLD, count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 });
  await client(url).writeNnt(recs);
}

const state = mkdtempSync(join(tmpdir(), 'tsnode-run-core-'));
const env = { XDG_STATE_HOME: state, HOME: state };
const JOURNAL = join(state, 'tsnode', 'sweeps.jsonl');
const journal = (): JournalEntry[] =>
  readFileSync(JOURNAL, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as JournalEntry);
const history = async (): Promise<Array<Record<string, unknown> & { run: string; pending: string[] }>> => {
  const h = await runCli(['history', '-o', 'json'], { env });
  expect(h.code, h.stderr).toBe(0);
  return (JSON.parse(h.stdout) as { runs: Array<Record<string, unknown> & { run: string; pending: string[] }> }).runs;
};

let a: TestNode;
let b: TestNode;
let dead: string;

beforeAll(async () => {
  [a, b] = await Promise.all([startNode({ memory: true, sweepPaceMs: 30 }), startNode({ memory: true, sweepPaceMs: 30 })]);
  dead = await deadAddress();
}, 30_000);

afterAll(async () => {
  await stopAllNodes();
  await agent.close();
});

describe('a refused run leaves a trace', () => {
  it('retention apply with a node down: exit 2, a run.refused record, history shows it refused, no node left', async () => {
    const r = await runCli(['retention', 'apply', '--rule', 'nnt:*=30d', '--nodes', `${a.url},${dead}`, '--yes', '--retries', '0'], { env });
    expect(r.code, r.stderr).toBe(2);
    expect(r.stderr).toContain('refusing to apply the retention policy: nothing was sent');
    const refused = journal().filter((e) => e.kind === 'run.refused');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ command: 'retention apply', codes: ['unreachable'], nodes: [a.url, dead], nodeSource: expect.stringContaining('--nodes') });
    expect(refused[0]!.reason).toContain(dead);
    const run = (await history()).find((x) => x.run === refused[0]!.run)!;
    // Nothing of it ran: no node left behind by it, no catch-up (its reason says why it did not run).
    expect(run).toMatchObject({ kind: 'retention', exit_code: 2, refused: { codes: ['unreachable'], run_again: null }, pending: [], catch_up: null });
    expect((run.nodes as { state: string }[]).map((n) => n.state)).toEqual(['refused', 'refused']);
    const text = await runCli(['history'], { env, timeoutMs: 20_000 });
    expect(text.stdout).toMatch(/refused, nothing sent/);
    expect(text.stdout).toContain('none (refused)');
  });

  it('a sweep refused because a node is busy: journaled; history shows no node left and a run-again command that runs as printed', async () => {
    await seed(a.url, 80);
    await client(a.url).sweepDelete({ before: BEFORE, types: ['nnt'] });
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', a.url, '--yes'], { env });
    expect(r.code, r.stderr).toBe(2);
    const refused = journal().filter((e) => e.kind === 'run.refused' && e.command === 'sweep');
    expect(refused).toHaveLength(1);
    expect(refused[0]).toMatchObject({ codes: ['busy'], sweep: { before: BEFORE, types: ['nnt'] } });
    const run = (await history()).find((x) => x.run === refused[0]!.run)!;
    expect(run).toMatchObject({ kind: 'sweep', refused: { codes: ['busy'] }, pending: [], catch_up: null });
    const again = (run.refused as { run_again: { command: string } }).run_again.command;
    expect(again).toBe(`tsnode sweep --before ${BEFORE} --types nnt --nodes ${a.url} --yes`);
    const text = await runCli(['history'], { env, timeoutMs: 20_000 });
    expect(text.stdout).toContain(`refused (nothing was sent); to run again:\n  run ${refused[0]!.run}: ${again}`);
    expect(text.stdout).not.toContain(`to catch up:\n  run ${refused[0]!.run}:`);
    // Once the other sweep ended, it runs as printed.
    await waitIdle(a.url);
    const rerun = await runCli(again.split(' ').slice(1), { env });
    expect(rerun.code, rerun.stderr).toBe(0);
  });
});

async function waitIdle(url: string): Promise<void> {
  const deadline = Date.now() + 30_000;
  while (Date.now() < deadline) {
    if (!(await client(url).sweepStatus()).nnt.running) return;
    await new Promise((r) => setTimeout(r, 50));
  }
  throw new Error(`${url} still sweeping`);
}

describe('one destructive run per target set from a host', () => {
  it('two retention apply of one policy at once: the second is refused naming the first, which finishes truthfully', async () => {
    await Promise.all([seed(a.url, 120), seed(b.url, 120)]);
    const args = ['retention', 'apply', '--rule', 'nnt:*=30d', '--nodes', `${a.url},${b.url}`, '--yes', '--poll-interval', '100ms'];
    const first = startCli(args, { env, timeoutMs: 60_000 });
    await first.waitForStderr(/step 1\/1 running/, 30_000);
    const second = await runCli(args, { env });
    expect(second.code, second.stderr).toBe(2);
    expect(second.stderr).toMatch(
      /refusing to apply the retention policy: \S+ is the target of another destructive run: tsnode retention apply \(new run\) process \d+ on \S+ by \S+ since /,
    );
    const done = await first.done;
    expect(done.code, done.stderr).toBe(0);
    expect(done.stderr).not.toMatch(/replaced|cancelled/);
    const locked = journal().filter((e) => e.kind === 'run.refused' && (e.codes as string[]).includes('lock'));
    expect(locked).toHaveLength(1);
    // the lock is gone with its run: the next one goes ahead
    const again = await runCli(args, { env });
    expect(again.code, again.stderr).toBe(0);
  }, 90_000);
});

describe('our sweep, not an identical one', () => {
  it('a sweep replaced by an identical one from another client ends replaced, naming both request ids (exit 1)', async () => {
    await seed(a.url, 120);
    const ours = startCli(['sweep', '--before', String(BEFORE), '--nodes', a.url, '--yes', '--poll-interval', '100ms', '-o', 'json'], { env, timeoutMs: 60_000 });
    await ours.waitForStderr(new RegExp(`${a.url}: running`), 30_000);
    // Another client: the very same request, its own id.
    await client(a.url).sweepDelete({ before: BEFORE, types: ['nnt'], requestId: 'other-client-1' });
    const r = await ours.done;
    expect(r.code, r.stderr).toBe(1);
    const node = (JSON.parse(r.stdout) as { nodes: Array<{ state: string; reason: string }> }).nodes[0]!;
    expect(node.state).toBe('replaced');
    expect(node.reason).toMatch(/request id other-client-1 \(ours: [0-9a-f]{16}\)/);
    await waitIdle(a.url);
    expect((await client(a.url).sweepStatus()).nnt.last).toMatchObject({ result: 'completed', requestId: 'other-client-1' });
  });
});

describe('signals, handled once in main.ts', () => {
  it('SIGTERM while a sweep is watched: exit 130, said and journaled like Ctrl-C (the sweep keeps running on its node)', async () => {
    await seed(b.url, 120);
    const cli = startCli(['sweep', '--before', String(BEFORE), '--nodes', b.url, '--yes', '--poll-interval', '100ms'], { env, timeoutMs: 60_000 });
    await cli.waitForStderr(new RegExp(`${b.url}: running`), 30_000);
    cli.child.kill('SIGTERM');
    const r = await cli.done;
    expect(r.code, r.stderr).toBe(130);
    expect(r.stderr).toContain('interrupted: stopped watching; sweeps already started keep running on their nodes');
    const end = journal()
      .filter((e) => e.kind === 'sweep.end')
      .at(-1)!;
    expect(end).toMatchObject({ interrupted: true, exit: 130 });
    await waitIdle(b.url);
  });
});

describe('the library gives a script what the CLI gives', () => {
  it('runClusterSweep and tsnode sweep on the same nodes: the same states, summary, exit code and journal kinds', async () => {
    await Promise.all([seed(a.url, 20), seed(b.url, 20)]);
    const cli = await runCli(['sweep', '--before', String(BEFORE), '--nodes', `${a.url},${b.url}`, '--yes', '--poll-interval', '100ms', '-o', 'json'], { env });
    expect(cli.code, cli.stderr).toBe(0);
    const doc = JSON.parse(cli.stdout) as {
      nodes: Array<{ node: string; state: string; reason: string }>;
      summary: Record<string, number>;
      exit_code: number;
      coverage: { verdict: string };
    };
    await Promise.all([seed(a.url, 20), seed(b.url, 20)]);
    const records: JournalEntry[] = [];
    const lib = await runClusterSweep([client(a.url), client(b.url)], { before: BEFORE, types: ['nnt'] }, { intervalMs: 100, journal: { append: (e) => records.push(e) > 0 } });
    expect(lib.nodes.map((n) => [n.node, n.state, n.reason])).toEqual(doc.nodes.map((n) => [n.node, n.state, n.reason]));
    expect(Object.fromEntries(Object.entries(lib.summary).filter(([, n]) => n > 0))).toEqual(Object.fromEntries(Object.entries(doc.summary).filter(([, n]) => n > 0)));
    expect(lib.exitCode).toBe(doc.exit_code);
    expect(lib.coverage?.verdict).toBe(doc.coverage.verdict);
    const cliKinds = journal()
      .filter((e) => e.kind.startsWith('sweep.'))
      .slice(-2)
      .map((e) => e.kind);
    expect(records.map((e) => e.kind)).toEqual(cliKinds);
  });

  it('runClusterSweep takes the receipt the CLI takes: journaled between start and end, returned, counting the removed shards', async () => {
    await Promise.all([seed(a.url, 20), seed(b.url, 20)]);
    const records: JournalEntry[] = [];
    const run = await runClusterSweep(
      [client(a.url), client(b.url)],
      { before: BEFORE, types: ['nnt'] },
      { intervalMs: 100, receipt: { settleMs: 0 }, journal: { append: (e) => records.push(e) > 0 } },
    );
    expect(run.exitCode).toBe(0);
    expect(records.map((e) => e.kind)).toEqual(['sweep.start', 'receipt', 'sweep.end']);
    expect(records[1]).toMatchObject({ run: run.runId });
    expect(run.receipt?.nodes.map((n) => n.node)).toEqual([a.url, b.url]);
    const removed = run.receipt!.nodes.flatMap((n) => n.spans.map((sp) => sp.shardsRemoved ?? 0)).reduce((x, y) => x + y, 0);
    expect(removed).toBeGreaterThan(0);
    // Without `receipt`, none is taken (a script that does not ask pays for no looks).
    await Promise.all([seed(a.url, 5), seed(b.url, 5)]);
    const plain = await runClusterSweep([client(a.url), client(b.url)], { before: BEFORE, types: ['nnt'] }, { intervalMs: 100 });
    expect(plain.receipt).toBeNull();
  });

  it('runClusterSweep looks again after the confirmation: a sweep started meanwhile refuses the run, nothing sent, journaled', async () => {
    await seed(b.url, 40);
    const records: JournalEntry[] = [];
    const err = await runClusterSweep(
      [client(a.url), client(b.url)],
      { before: BEFORE, types: ['nnt'] },
      {
        journal: { append: (e) => records.push(e) > 0 },
        // Someone starts a sweep on b while the question is open.
        confirm: async () => {
          await client(b.url).sweepDelete({ before: BEFORE - 60, types: ['nnt'] });
          return true;
        },
      },
    ).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(SweepRefusedError);
    expect((err as SweepRefusedError).phase).toBe('recheck');
    expect((err as SweepRefusedError).busy.map((n) => n.node)).toEqual([b.url]);
    expect(records.map((e) => e.kind)).toEqual(['run.refused']);
    expect((await client(a.url).sweepStatus()).nnt.running).toBe(false);
    await waitIdle(b.url);
  });
});
