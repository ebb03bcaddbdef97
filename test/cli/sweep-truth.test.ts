/**
 * Issue 12's acceptance: every way a sweep can fail to happen ends in a state other than `done`,
 * with a reason, a catch-up command and the right exit code, against real reference nodes (small
 * fake nodes only for what a real one cannot produce: an HTML answer, counting DELETEs). Every run
 * of this file goes to one journal, which `tsnode history` must then show.
 */
import { mkdtempSync, readFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord, SweepStatus } from '../../src/protocol/index.js';
import { startServer, type RunningNode } from '../../src/server/server.js';
import { runCli, startCli, type CliResult } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startRecordingNode, type RecordingNode } from '../helpers/recording-node.js';

const agent = new Agent();
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });
const status = (url: string): Promise<SweepStatus> => client(url).sweepStatus();

const NOW_S = Math.floor(Date.now() / 1000);
const BEFORE = NOW_S - 86_400 - ((NOW_S - 86_400) % 3600);
const OLD = BEFORE - 600;
const uuid = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

async function seed(url: string, series: number): Promise<void> {
  const recs: NntRecord[] = [];
  for (let i = 0; i < series; i++)
    recs.push({ metric: 'cpu', id: uuid(i), offset: OLD, count: 1, value: 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 });
  await client(url).writeNnt(recs);
}

const state = mkdtempSync(join(tmpdir(), 'tsnode-state-'));
// Every run writes the default journal under this XDG_STATE_HOME (never the user's own).
const env = { XDG_STATE_HOME: state, HOME: state };
const JOURNAL = join(state, 'tsnode', 'sweeps.jsonl');
const FAST = ['--poll-interval', '100ms', '--retries', '0', '--output', 'json'];

interface NodeDoc {
  node: string;
  state: string;
  reason: string;
  error: { code: string; message: string } | null;
  other: string | null;
  elapsed_ms: number | null;
}
interface SweepDoc {
  nodes: NodeDoc[];
  summary: Record<string, number>;
  catch_up: { nodes: string[]; command: string; add_back: string[] } | null;
}
const doc = (r: CliResult): SweepDoc => JSON.parse(r.stdout) as SweepDoc;
const catchUpFor = (nodes: string[], before = BEFORE): string => `tsnode sweep --before ${before} --types nnt --nodes ${nodes.join(',')} --yes`; // the runs had --yes: their catch-ups do too

/** A sweep through the CLI on `url` that is seen running before `then` acts; returns its result. */
async function whileRunning(url: string, then: () => Promise<unknown>, extra: string[] = []): Promise<CliResult> {
  const cli = startCli(['sweep', '--before', String(BEFORE), '--nodes', url, '--yes', ...FAST, ...extra], { env, timeoutMs: 60_000 });
  await cli.waitForStderr(new RegExp(`${url}: running`), 30_000);
  await then();
  return cli.done;
}

afterAll(async () => {
  await stopAllNodes();
  await agent.close();
});

describe('a sweep that did not happen is never done', () => {
  it('replaced by a forced sweep: replaced, naming the other sweep (exit 1); the forced one is done', async () => {
    const n = await startNode({ memory: true, sweepPaceMs: 40 });
    await seed(n.url, 120);
    const other = BEFORE - 3600;
    let forced: CliResult | undefined;
    const r = await whileRunning(n.url, async () => {
      forced = await runCli(['sweep', '--before', String(other), '--nodes', n.url, '--yes', '--force', ...FAST], { env, timeoutMs: 60_000 });
    });
    expect(r.code).toBe(1);
    const d = doc(r);
    expect(d.nodes).toEqual([
      {
        node: n.url,
        state: 'replaced',
        reason: expect.stringMatching(new RegExp(`replaced by another: nnt before [0-9T:-]+Z \\(${other}\\), nnt spans all`)),
        error: null,
        other: expect.stringContaining(`(${other})`),
        elapsed_ms: expect.any(Number),
      },
    ]);
    expect(d.catch_up).toEqual({ nodes: [n.url], command: catchUpFor([n.url]), add_back: [] });
    expect(r.stderr).toContain(`to catch up (1 node(s) not done): ${catchUpFor([n.url])}`);
    expect(forced!.code).toBe(0);
    expect(doc(forced!).nodes[0]).toMatchObject({ state: 'done', reason: "the node's record says our sweep completed" });
    expect(doc(forced!).catch_up).toBeNull();
  });

  it('cancelled by tsnode sweep cancel: cancelled (exit 1), with the catch-up', async () => {
    const n = await startNode({ memory: true, sweepPaceMs: 40 });
    await seed(n.url, 120);
    const r = await whileRunning(n.url, async () => {
      const c = await runCli(['sweep', 'cancel', '--nodes', n.url, '--yes'], { env });
      expect(c.code).toBe(0);
    });
    expect(r.code).toBe(1);
    expect(doc(r).nodes[0]).toMatchObject({ state: 'cancelled', reason: "the node's record says the sweep of nnt was cancelled" });
    expect(doc(r).catch_up!.command).toBe(catchUpFor([n.url]));
    expect(doc(r).summary).toMatchObject({ cancelled: 1, done: 0 });
  });

  it('node SIGKILLed and restarted mid-sweep: unconfirmed, naming the restart (exit 1); the data is still there', async () => {
    const n = await startNode({ sweepPaceMs: 40 }); // on disk: the restarted node has the data
    await seed(n.url, 150);
    let again: TestNode | undefined;
    const r = await whileRunning(
      n.url,
      async () => {
        await n.kill();
        again = await n.restart();
      },
      ['--lost-after', '30s'],
    );
    expect(r.code).toBe(1);
    const node = doc(r).nodes[0]!;
    expect(node.state).toBe('unconfirmed');
    expect(node.reason).toMatch(/^no record of our sweep of nnt on the node: the node restarted \(instance [0-9a-f]{12} -> [0-9a-f]{12}\); whether it ran to the end is unknown$/);
    expect(r.stderr).toMatch(new RegExp(`${n.url}: no answer`));
    expect(doc(r).catch_up!.command).toBe(catchUpFor([n.url]));
    // and indeed: the last series still holds its old point
    const last = await client(again!.url).readRollup({ uuid: uuid(149), metric: 'cpu', startMs: OLD * 1000, endMs: (OLD + 60) * 1000, spanMs: 60_000 });
    expect(last.points[0]!.value).not.toBeNull();
    await again!.stop();
  });

  describe('a job failing on the node and a DELETE answered with HTML', () => {
    let broken: RunningNode;
    let healthy: TestNode;
    let html: RecordingNode;
    beforeAll(async () => {
      // In process, so its store can be made to fail as a full disk would (no hook in the product).
      broken = await startServer({ port: 0, dataDir: null }, { onInternalError: () => {} });
      broken.node.store.sweepNnt = () => {
        throw new Error('SQLITE_FULL: database or disk is full');
      };
      healthy = await startNode({ memory: true });
      html = await startRecordingNode((req) =>
        req.method === 'DELETE'
          ? { status: 200, headers: { 'content-type': 'text/html' }, body: '<html><body><h1>Welcome to nginx!</h1></body></html>' }
          : { body: JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } }) },
      );
      await Promise.all([seed(broken.url, 5), seed(healthy.url, 5)]);
    });
    afterAll(async () => {
      await broken.close();
      await html.close();
    });

    it('failed with the node error, failed for the HTML answer, done for the healthy node (exit 3); no header value printed', async () => {
      const r = await runCli(
        ['sweep', '--before', String(BEFORE), '--nodes', `${healthy.url},${broken.url},${html.url}`, '--yes', '--header', 'Authorization: Bearer s3cr3t-t0ken', ...FAST],
        { env },
      );
      expect(r.code).toBe(3);
      const d = doc(r);
      expect(d.nodes.map((x) => [x.node, x.state])).toEqual([
        [healthy.url, 'done'],
        [broken.url, 'failed'],
        [html.url, 'failed'],
      ]);
      expect(d.nodes[1]).toMatchObject({
        reason: "the node's record says the sweep of nnt failed: SQLITE_FULL: database or disk is full",
        error: { code: 'failed', message: 'nnt: SQLITE_FULL: database or disk is full' },
      });
      expect(d.nodes[2]!.reason).toMatch(
        /^the DELETE was answered with something other than \[\] \(sweep delete: the answer is not JSON .*Welcome to nginx.*\); whether a sweep started is unknown$/,
      );
      expect(html.requests.filter((q) => q.method === 'DELETE')).toHaveLength(1);
      expect(d.catch_up).toEqual({ nodes: [broken.url, html.url], command: catchUpFor([broken.url, html.url]), add_back: ['--header (1 given; values not shown)'] });
      expect(r.stderr).toContain('add back: --header (1 given; values not shown)');
      expect(`${r.stdout}${r.stderr}${readFileSync(JOURNAL, 'utf8')}`).not.toContain('s3cr3t');
    });
  });

  it('the same node under two spellings gets one DELETE and is done (exit 0), with a warning naming both', async () => {
    const n = await startNode({ memory: true });
    await seed(n.url, 5);
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', `127.0.0.1:${n.port},http://LOCALHOST:${n.port}/`, '--yes', ...FAST], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toContain(`--nodes item 2: http://localhost:${n.port} is the same node as http://127.0.0.1:${n.port} (item 1) under another spelling; using it once`);
    expect(doc(r).nodes.map((x) => [x.node, x.state])).toEqual([[n.url, 'done']]);
    expect(doc(r).catch_up).toBeNull();
    // Counting what arrives needs a fake node: exactly one DELETE for the two spellings.
    const rec = await startRecordingNode((req) =>
      req.method === 'DELETE' ? { body: '[]' } : { body: JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } }) },
    );
    const port = new URL(rec.url).port;
    const r2 = await runCli(['sweep', '--before', String(BEFORE), '--nodes', `localhost:${port},127.0.0.1:${port},[::1]:${port}`, '--yes', ...FAST], { env });
    await rec.close();
    expect(r2.code).toBe(0);
    expect(rec.requests.filter((q) => q.method === 'DELETE')).toHaveLength(1);
  });

  it.each([
    ['2026-02-31', /--before: "2026-02-31" is not a valid date: 2026-02 has no day 31/],
    ['2025-06-31T00:00:00Z', /2025-06 has no day 31/],
    ['1969-12-31T23:59:59Z', /before 1970-01-01T00:00:00Z/],
  ])('an impossible --before (%s) is a usage error and nothing is sent (exit 2)', async (before, why) => {
    const n = await startNode({ memory: true });
    await seed(n.url, 3);
    const r = await runCli(['sweep', '--before', before, '--nodes', n.url, '--yes', ...FAST], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(why);
    expect(r.stdout).toBe('');
    // the node never got a DELETE: it has no record of any sweep
    expect((await status(n.url)).nnt.last).toBeUndefined();
    await n.stop();
  });

  it('an unwritable journal is a warning; the sweep still runs and is done', async () => {
    const n = await startNode({ memory: true });
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', n.url, '--yes', '--journal', '/dev/null/sweeps.jsonl', ...FAST], { env });
    expect(r.code).toBe(0);
    expect(r.stderr).toMatch(/warning: cannot write the journal \/dev\/null\/sweeps\.jsonl: .*the sweep goes on/);
    expect(doc(r).nodes[0]!.state).toBe('done');
    await n.stop();
  });

  it('nodes from --seed: the prompt, the journal and the catch-up name where they came from', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'tsnode-seed-ring-'));
    const up = await runCli(['cluster', 'up', '--count', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json'], { timeoutMs: 60_000, env });
    expect(up.code, up.stderr).toBe(0);
    const urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
    try {
      const journal = join(dir, 'seed.jsonl');
      const r = await runCli(['sweep', '--before', String(BEFORE), '--seed', urls[0]!, '--yes', '--journal', journal, ...FAST], { env });
      expect(r.code, r.stderr).toBe(0);
      const described = `nodes: --seed ${urls[0]}, 2 nodes discovered (topology `;
      expect(r.stderr).toContain(`on 2 nodes (${described}`);
      const lines = readFileSync(journal, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { kind: string; nodeSource: string; described: string; nodes: unknown[] });
      // The receipt line (its own shape) sits between start and end.
      expect(lines.map((l) => l.kind)).toEqual(['sweep.start', 'receipt', 'sweep.end']);
      expect(lines.filter((l) => l.kind !== 'receipt').map((l) => [l.kind, l.nodeSource, l.described.slice(0, described.length), l.nodes.length])).toEqual([
        ['sweep.start', `--seed ${urls[0]}`, described, 2],
        ['sweep.end', `--seed ${urls[0]}`, described, 2],
      ]);
      expect(JSON.parse(r.stdout)).toMatchObject({ node_source: `--seed ${urls[0]}`, profile: null });
    } finally {
      await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s'], { env });
    }
  });

  it('a tsnode killed mid-run leaves a start line: history says no outcome recorded', async () => {
    const n = await startNode({ memory: true, sweepPaceMs: 40 });
    await seed(n.url, 100);
    const cli = startCli(['sweep', '--before', String(BEFORE - 60), '--nodes', n.url, '--yes', ...FAST], { env });
    await cli.waitForStderr(new RegExp(`${n.url}: running`), 30_000);
    cli.child.kill('SIGKILL');
    await cli.done;
    await client(n.url).cancelSweep();
  });
});

describe('tsnode history', () => {
  it('shows every run of this file with its outcome and what is left to catch up', async () => {
    const r = await runCli(['history', '--output', 'json'], { env });
    expect(r.code).toBe(0);
    const h = JSON.parse(r.stdout) as {
      journal: string;
      runs: Array<{
        kind: string;
        outcome_recorded: boolean;
        nodes: Array<{ node: string; state: string | null }>;
        pending: string[];
        catch_up: { command: string } | null;
        before: number;
        before_iso: string;
        started: number;
        started_iso: string;
        by: string;
      }>;
    };
    expect(h.journal).toBe(JOURNAL);
    const sweeps = h.runs.filter((x) => x.kind === 'sweep');
    const states = sweeps.map((x) => (x.outcome_recorded ? x.nodes.map((n) => n.state).join(',') : 'no outcome'));
    // in order: replaced, the forced one (done), cancelled, unconfirmed, done/failed/failed, the two-spelling runs, the killed run
    expect(states).toEqual(['replaced', 'done', 'cancelled', 'unconfirmed', 'done,failed,failed', 'done', 'done', 'no outcome']);
    expect(h.runs.filter((x) => x.kind === 'cancel')).toHaveLength(1);
    expect(sweeps.every((x) => /@/.test(x.by))).toBe(true);
    const failed = sweeps[4]!;
    expect(failed.pending).toHaveLength(2);
    expect(failed.catch_up!.command).toMatch(/^tsnode sweep --before \d+ --types nnt --nodes http/);
    expect(sweeps[7]!.pending).toHaveLength(1);
    // times as epoch seconds beside their ISO string
    expect(new Date(failed.started * 1000).toISOString().replace('.000Z', 'Z')).toBe(failed.started_iso);
    expect(failed.before_iso).toBe(new Date(failed.before * 1000).toISOString().replace('.000Z', 'Z'));

    const table = await runCli(['history'], { env });
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/started\s+│ run\s+│ by\s+│ what\s+│ nodes\s+│ outcome\s+│ left/);
    expect(table.stdout).toMatch(/1 replaced/);
    expect(table.stdout).toMatch(/1 done, 2 failed\s+│ 2/);
    expect(table.stdout).toMatch(/no outcome recorded/);
    expect(table.stdout).toMatch(/to catch up:\n {2}run [0-9a-f]{12}: tsnode sweep --before/);

    const since = await runCli(['history', '--since', '1h', '--node', `localhost:${new URL(failed.nodes[0]!.node).port}`, '--output', 'json'], { env });
    expect((JSON.parse(since.stdout) as { runs: unknown[] }).runs).toHaveLength(1);
    // the node's own state in each run, found under another spelling of it
    const healthyPort = new URL(failed.nodes[0]!.node).port;
    const one = await runCli(['history', '--node', `localhost:${healthyPort}`], { env });
    expect(one.stdout).toMatch(new RegExp(`│ on http://localhost:${healthyPort}\\s+│`));
    expect(one.stdout).toMatch(/│ done: the node's record says our sweep completed\s+│/);
    const bad = await runCli(['history', '--since', '2026-02-30'], { env });
    expect(bad.code).toBe(2);
  });
});

describe('a node without a sweep API', () => {
  it('is refused at preflight as having no sweep API, never called unreachable (exit 2, nothing sent)', async () => {
    const gone = await startRecordingNode({ status: 404, headers: { 'content-type': 'application/json' }, body: '{"error":"not found","code":"not_found"}' });
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', gone.url, '--yes', ...FAST], { env });
    await gone.close();
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(new RegExp(`error: ${gone.url} has no sweep API: GET /sweep_delete answered 404`));
    expect(r.stderr).not.toMatch(/is unreachable/);
    expect(gone.requests.filter((q) => q.method === 'DELETE')).toHaveLength(0);
  });
});
