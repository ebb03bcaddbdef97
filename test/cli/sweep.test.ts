import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { NntRecord, SweepStatus, TextRecord } from '../../src/protocol/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { deadAddress, startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startRecordingNode } from '../helpers/recording-node.js';

const agent = new Agent();
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });

// A day ago, on the hour: data 10 minutes before it must go, data 10 minutes after it must stay.
const NOW_S = Math.floor(Date.now() / 1000);
const BEFORE = NOW_S - 86_400 - ((NOW_S - 86_400) % 3600);
const OLD = BEFORE - 600;
const NEW = BEFORE + 600;
const uuid = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** `series` checks with one `cpu` record before and one after BEFORE. */
async function seed(url: string, series = 3): Promise<void> {
  const recs: NntRecord[] = [];
  for (let i = 0; i < series; i++) {
    for (const offset of [OLD, NEW]) {
      recs.push({ metric: 'cpu', id: uuid(i), offset, count: 1, value: i + 1, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 });
    }
  }
  await client(url).writeNnt(recs);
}

/** For check `i`: is the old point still there, is the new one? */
async function points(url: string, i = 0): Promise<{ old: boolean; new: boolean }> {
  const r = await client(url).readRollup({ uuid: uuid(i), metric: 'cpu', startMs: OLD * 1000, endMs: (NEW + 60) * 1000, spanMs: 60_000 });
  const at = (s: number): boolean => r.points.find((p) => p.timestampMs === s * 1000)?.value != null;
  return { old: at(OLD), new: at(NEW) };
}

const status = (url: string): Promise<SweepStatus> => client(url).sweepStatus();

const FAST = ['--poll-interval', '100ms', '--retries', '0'];
let a: TestNode;
let b: TestNode;
let paced: TestNode;

beforeAll(async () => {
  [a, b, paced] = await Promise.all([startNode({ memory: true }), startNode({ memory: true }), startNode({ memory: true, sweepPaceMs: 40 })]);
});
afterAll(async () => {
  await stopAllNodes();
  await agent.close();
});

describe('tsnode sweep', () => {
  it('deletes data before the time on every node, keeps what is after, and exits 0', async () => {
    await Promise.all([seed(a.url), seed(b.url), seed(paced.url, 40)]);
    const nodes = [a.url, b.url, paced.url].join(',');
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', nodes, '--yes', '--output', 'json', ...FAST]);
    expect(r.stderr).toMatch(new RegExp(`${paced.url}: running \\(nnt 0000`)); // the paced node was seen working
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as {
      before: number;
      before_iso: string;
      types: string[];
      nnt_rollups: unknown;
      node_source: string;
      exit_code: number;
      nodes: { node: string; state: string; reason: string; error: null; elapsed_ms: number }[];
      summary: Record<string, number>;
      catch_up: unknown;
    };
    expect(doc.before).toBe(BEFORE);
    expect(doc.before_iso).toBe(new Date(BEFORE * 1000).toISOString().replace('.000Z', 'Z'));
    expect(doc.types).toEqual(['nnt']);
    expect(doc.nnt_rollups).toBeNull();
    expect(doc.node_source).toBe('--nodes');
    expect(doc.exit_code).toBe(0);
    expect(doc.nodes.map((n) => [n.node, n.state, n.error])).toEqual([a.url, b.url, paced.url].map((u) => [u, 'done', null]));
    // reference nodes keep a record of their sweeps: done rests on it
    expect(doc.nodes.every((n) => n.reason === "the node's record says our sweep completed")).toBe(true);
    expect(doc.nodes.every((n) => Number.isInteger(n.elapsed_ms))).toBe(true);
    expect(doc.summary).toEqual({ done: 3, late_data: 0, started: 0, replaced: 0, cancelled: 0, failed: 0, unconfirmed: 0, lost: 0, skipped: 0, timed_out: 0, interrupted: 0 });
    expect(doc.catch_up).toBeNull();
    for (const url of [a.url, b.url, paced.url]) {
      expect(await points(url, 0)).toEqual({ old: false, new: true });
      expect(await points(url, 2)).toEqual({ old: false, new: true });
    }
  });

  it('prints a table with one row per node by default', async () => {
    await seed(a.url);
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', a.url, '--yes', ...FAST]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(/node\s+│ types │ state\s+│ duration │ reason/);
    expect(r.stdout).toMatch(new RegExp(`${a.url}\\s+│ nnt\\s+│ done\\s+│\\s+[0-9.]+s │ the node's record says our sweep completed`));
    expect(r.stderr).toMatch(/summary: 1 done/);
  });

  it('refuses an unreachable node (exit 2, nothing sent); with --skip-unreachable sweeps the rest and exits 3', async () => {
    await seed(a.url);
    const dead = await deadAddress();
    const refused = await runCli(['sweep', '--before', String(BEFORE), '--nodes', `${a.url},${dead}`, '--yes', ...FAST]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toContain(`${dead} is unreachable: connection refused`);
    expect(refused.stderr).toMatch(/--skip-unreachable/);
    expect(refused.stdout).toBe('');
    expect(await points(a.url)).toEqual({ old: true, new: true });

    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', `${a.url},${dead}`, '--yes', '--skip-unreachable', '--output', 'json', ...FAST]);
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.stdout) as { nodes: unknown[]; summary: Record<string, number>; catch_up: { command: string } };
    expect(doc.nodes).toEqual([
      { node: a.url, state: 'done', reason: expect.any(String), error: null, other: null, elapsed_ms: expect.any(Number) },
      {
        node: dead,
        state: 'skipped',
        reason: expect.stringMatching(/^not sent: unreachable: connection refused .* \(at preflight\)$/),
        error: { code: 'skipped', message: expect.stringMatching(/^connection refused/) },
        other: null,
        elapsed_ms: null,
      },
    ]);
    expect(doc.summary).toMatchObject({ done: 1, skipped: 1 });
    // the skipped node is the one to catch up
    expect(doc.catch_up.command).toBe(`tsnode sweep --before ${BEFORE} --types nnt --nodes ${dead} --yes`);
    expect(await points(a.url)).toEqual({ old: false, new: true });
  });

  it('with every node unreachable and --skip-unreachable, lists them all as skipped and exits 1', async () => {
    const dead = await deadAddress();
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', dead, '--yes', '--skip-unreachable', ...FAST]);
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(new RegExp(`${dead}\\s+│ nnt\\s+│ skipped │\\s+│ not sent: unreachable: connection refused`));
    expect(r.stderr).toMatch(/every node was unreachable: nothing was sent/);
  });

  it('a span a node does not report is refused before anything is sent (exit 2), naming the node and its spans', async () => {
    const odd = await startNode({ memory: true, rollups: [60, 120], histogramRollups: [60] });
    await Promise.all([seed(a.url), seed(odd.url)]);
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nnt-rollups', '120', '--nodes', `${a.url},${odd.url}`, '--yes', '--output', 'json', ...FAST]);
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    expect(r.stderr).toContain(`nnt span 120 is not configured on ${a.url} (its nnt spans: 60, 300, 1800, 10800, 86400): its DELETE would be refused`);
    expect(r.stderr).toMatch(/refusing to sweep: nothing was sent/);
    expect(await points(a.url)).toEqual({ old: true, new: true });
    expect(await points(odd.url)).toEqual({ old: true, new: true });
    expect((await status(odd.url)).nnt.last).toBeUndefined();
    await odd.stop();
  });

  it('a node that rejects the DELETE (spans it does not report) is failed with its own message; the others are done (exit 3)', async () => {
    // A node that answers no /state (an older store) cannot have its spans checked: its DELETE is refused by the node itself.
    const older = await startRecordingNode((req) => {
      if (req.method === 'GET' && req.rawUrl === '/sweep_delete')
        return { body: JSON.stringify({ nnt: { running: 'false' }, text: { running: 'false' }, histogram: { running: 'false' } }) };
      if (req.method === 'DELETE') return { status: 400, body: JSON.stringify({ error: 'unknown span 120 (allowed: 60, 300)', code: 'bad_span' }) };
      return { status: 404, body: JSON.stringify({ error: 'not found', code: 'not_found' }) };
    });
    await seed(b.url);
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nnt-rollups', '60', '--nodes', `${older.url},${b.url}`, '--yes', '--output', 'json', ...FAST]);
    expect(r.code).toBe(3);
    expect(r.stderr).toContain(`spans could not be checked on 1 node (they do not report them): ${older.url}`);
    const doc = JSON.parse(r.stdout) as { nodes: { node: string; state: string; error: unknown }[] };
    expect(doc.nodes[0]).toMatchObject({
      node: older.url,
      state: 'failed',
      reason: expect.stringMatching(/^the node refused the DELETE: HTTP 400: .*120/),
      error: { code: 'failed', message: expect.stringMatching(/^HTTP 400: .*120/) },
    });
    expect(doc.nodes[1]).toMatchObject({ node: b.url, state: 'done', error: null });
    expect(older.requests.filter((q) => q.method === 'DELETE')).toHaveLength(1);
    await older.close();
  });

  it('refuses without a TTY and without --yes, sending nothing', async () => {
    await seed(a.url);
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', a.url, ...FAST]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/not on a terminal: pass --yes/);
    expect(r.stdout).toBe('');
    expect(await points(a.url)).toEqual({ old: true, new: true });
    expect((await status(a.url)).nnt.running).toBe(false);
  });

  it('--dry-run prints the exact requests and sends nothing, not even a status check', async () => {
    await seed(a.url);
    const dead = await deadAddress();
    const r = await runCli(['sweep', '--before', String(BEFORE), '--types', 'nnt,histogram', '--nnt-rollups', '60,300', '--nodes', `${a.url},${dead}`, '--dry-run']);
    expect(r.code).toBe(0);
    expect(r.stdout).toBe(
      [a.url, dead]
        .map((u) => `DELETE ${u}/sweep_delete\n  X-Service-Delete-Time: ${BEFORE}\n  X-Service-Delete-Data-Types: nnt,histogram\n  X-Service-NNT-Delete-Rollups: 60,300\n`)
        .join('\n'),
    );
    expect(r.stderr).toMatch(/nothing was sent/);
    expect(await points(a.url)).toEqual({ old: true, new: true });
  });

  it('--header-prefix X-Snowth drives nodes with the production header names', async () => {
    const text: TextRecord[] = [
      { metric: 'log', id: uuid(0), offset: OLD, value: 'old' },
      { metric: 'log', id: uuid(0), offset: NEW, value: 'new' },
    ];
    await client(a.url).writeText(text);
    const dry = await runCli(['sweep', '--before', String(BEFORE), '--types', 'text', '--nodes', a.url, '--dry-run', '--header-prefix', 'X-Snowth']);
    expect(dry.stdout).toContain(`X-Snowth-Delete-Time: ${BEFORE}\n  X-Snowth-Delete-Data-Types: text`);
    const r = await runCli(['sweep', '--before', String(BEFORE), '--types', 'text', '--nodes', a.url, '--yes', '--header-prefix', 'X-Snowth', ...FAST]);
    expect(r.code).toBe(0);
    // Had the node not read the X-Snowth type header it would have swept nnt (its default) and kept the text.
    const res = await fetch(`${a.url}/read/${OLD}/${NEW + 1}/${uuid(0)}/log`);
    expect(await res.json()).toEqual([[NEW * 1000, 'new']]); // text change points are in ms
  });

  it('--no-wait leaves nodes as started and exits 0', async () => {
    await seed(paced.url, 300); // 300 x 40 ms: still sweeping long after the CLI has left
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', paced.url, '--yes', '--no-wait', '--output', 'json', ...FAST]);
    expect(r.code).toBe(0);
    const doc = JSON.parse(r.stdout) as { nodes: { state: string }[]; summary: Record<string, number> };
    expect(doc.nodes[0]!.state).toBe('started');
    expect(doc.summary.started).toBe(1);
    expect(r.stderr).toMatch(/watch them with: tsnode status --nodes http/);
    expect((await status(paced.url)).nnt).toMatchObject({ running: true, timestamp: BEFORE });
    await client(paced.url).cancelSweep();
    await expect.poll(async () => (await status(paced.url)).nnt.running, { timeout: 10_000, message: 'the paced sweep to stop' }).toBe(false);
  });
});

describe('sweeps in progress', () => {
  let slow: TestNode;
  beforeAll(async () => {
    slow = await startNode({ memory: true, sweepPaceMs: 100 });
  });

  it('refuses a node that is already sweeping (naming what it runs); --force replaces the sweep', async () => {
    await seed(slow.url, 200);
    const earlier = BEFORE - 7200;
    await client(slow.url).sweepDelete({ before: earlier, types: ['nnt'] });
    const refused = await runCli(['sweep', '--before', String(BEFORE), '--nodes', `${a.url},${slow.url}`, '--yes', ...FAST]);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(new RegExp(`${slow.url} is already sweeping nnt before .*\\(${earlier}\\)`));
    expect(refused.stderr).toMatch(/--force/);
    // still the original sweep
    expect((await status(slow.url)).nnt).toMatchObject({ running: true, timestamp: earlier });

    const forced = await runCli(['sweep', '--before', String(BEFORE), '--nodes', slow.url, '--yes', '--force', '--no-wait', ...FAST]);
    expect(forced.code).toBe(0);
    expect(forced.stderr).toMatch(/--force replaces that sweep/);
    expect((await status(slow.url)).nnt).toMatchObject({ running: true, timestamp: BEFORE });
  });

  it('sweep cancel needs --yes off a terminal, then cancels', async () => {
    expect((await status(slow.url)).nnt.running).toBe(true);
    const refused = await runCli(['sweep', 'cancel', '--nodes', slow.url]);
    expect(refused.code).toBe(2);
    expect((await status(slow.url)).nnt.running).toBe(true);
    const r = await runCli(['sweep', 'cancel', '--nodes', slow.url, '--yes', '--output', 'json']);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.stdout)).toEqual({
      node_source: '--nodes',
      profile: null,
      exit_code: 0,
      nodes: [{ node: slow.url, state: 'cancelling', cancelled: ['nnt'], error: null }],
      coverage: expect.objectContaining({ verdict: 'unchecked', missing: [], allowed_partial: false }),
    });
    await expect.poll(async () => (await status(slow.url)).nnt.running, { timeout: 10_000, message: 'the cancelled sweep to stop' }).toBe(false);
  });

  it('Ctrl-C while waiting exits 130, leaves the sweep running and says how to watch it', async () => {
    await seed(slow.url, 200);
    const cli = startCli(['sweep', '--before', String(BEFORE), '--nodes', slow.url, '--yes', ...FAST]);
    await cli.waitForStderr(new RegExp(`${slow.url}: running`));
    cli.child.kill('SIGINT');
    const r = await cli.done;
    expect(r.code).toBe(130);
    expect(r.stdout).toMatch(/interrupted/);
    expect(r.stderr).toMatch(/sweeps already started keep running/);
    expect(r.stderr).toContain(`tsnode status --nodes ${slow.url} --watch`);
    expect((await status(slow.url)).nnt).toMatchObject({ running: true, timestamp: BEFORE });
    await client(slow.url).cancelSweep();
  });

  it('--timeout stops waiting with timed out (the sweep keeps running) and exits 1 when no node is done', async () => {
    await seed(slow.url, 200);
    const t0 = performance.now();
    const r = await runCli(['sweep', '--before', String(BEFORE), '--nodes', slow.url, '--yes', '--timeout', '500ms', '--output', 'json', ...FAST]);
    const wallMs = performance.now() - t0;
    expect(r.code).toBe(1);
    const doc = JSON.parse(r.stdout) as { nodes: { state: string; elapsed_ms: number }[]; summary: Record<string, number> };
    expect(doc.nodes[0]!.state).toBe('timed_out');
    // The timeout counts from the start of the run; elapsed_ms from the node's DELETE, a round trip
    // later. So the run lasted at least the timeout, and the node's time lies within the run.
    expect(wallMs).toBeGreaterThanOrEqual(500);
    expect(doc.nodes[0]!.elapsed_ms).toBeGreaterThan(0);
    expect(doc.nodes[0]!.elapsed_ms).toBeLessThanOrEqual(wallMs);
    expect(doc.summary.timed_out).toBe(1);
    expect(r.stderr).toMatch(/watch them with: tsnode status/);
    expect((await status(slow.url)).nnt).toMatchObject({ running: true, timestamp: BEFORE });
    await client(slow.url).cancelSweep();
  });

  it('a node that dies while being polled is reported lost (exit 3)', async () => {
    const doomed = await startNode({ memory: true, sweepPaceMs: 100 });
    await Promise.all([seed(doomed.url, 200), seed(a.url)]);
    const cli = startCli(['sweep', '--before', String(BEFORE), '--nodes', `${a.url},${doomed.url}`, '--yes', '--lost-after', '1s', '--output', 'json', ...FAST]);
    await cli.waitForStderr(new RegExp(`${doomed.url}: running`));
    await doomed.kill();
    const r = await cli.done;
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.stdout) as { nodes: { node: string; state: string; error: string | null }[] };
    expect(doc.nodes[0]).toMatchObject({ node: a.url, state: 'done' });
    expect(doc.nodes[1]).toMatchObject({ node: doomed.url, state: 'lost', reason: expect.stringMatching(/^no answer for 1s: connection refused.*; last seen running nnt$/) });
    expect(r.stderr).toMatch(new RegExp(`${doomed.url}: no answer`));
    expect(r.stderr).toMatch(new RegExp(`${doomed.url}: lost`));
  });

  it('status shows one row per node and type in table, json and csv; unreachable nodes exit 3', async () => {
    // A fresh paced node: 300 checks x 100 ms keeps it sweeping nnt for 30 s, far longer than the three
    // status runs below take; it is cancelled afterwards.
    const st = await startNode({ memory: true, sweepPaceMs: 100 });
    await seed(st.url, 300);
    await client(st.url).sweepDelete({ before: BEFORE, types: ['nnt', 'histogram'], histogramRollups: [60] });
    const dead = await deadAddress();
    const nodes = ['--nodes', `${a.url},${st.url},${dead}`, '--retries', '0'];

    const table = await runCli(['status', ...nodes, '--per-type']);
    expect(table.code).toBe(3);
    expect(table.stdout).toMatch(/node\s+│ type\s+│ running\s+│ current\s+│ delete time\s+│ rollups/);
    expect(table.stdout).toMatch(new RegExp(`${a.url}\\s+│ nnt\\s+│ no `));
    expect(table.stdout).toMatch(new RegExp(`${st.url}\\s+│ nnt\\s+│ yes\\s+│ 0000[^│]*│ [0-9T:-]+Z \\(${BEFORE}\\) │ all`));
    expect(table.stdout).toMatch(new RegExp(`${st.url}\\s+│ histogram │ yes\\s+│[^│]*│ [0-9T:-]+Z \\(${BEFORE}\\) │ 60`));
    expect(table.stdout).toMatch(new RegExp(`${dead}\\s+│ -\\s+│ unreachable │ connection refused`));
    // a swept before by the tests above: its own record of the last sweep is shown
    expect(table.stdout).toMatch(/│ last sweep\s+│/);
    expect(table.stdout).toMatch(new RegExp(`${a.url}\\s+│ nnt\\s+│ no .*│ completed: before [0-9T:-]+Z \\(\\d+\\) spans all at [0-9T:.-]+Z`));

    const json = await runCli(['status', ...nodes, '--output', 'json']);
    expect(json.code).toBe(3);
    const doc = JSON.parse(json.stdout) as { nodes: Array<Record<string, unknown>> };
    expect(doc.nodes[0]).toMatchObject({
      node: a.url,
      ok: true,
      state: 'idle',
      status: {
        nnt: { running: false, instance: expect.any(String), last: { result: 'completed', rollups: null, delete_time: expect.any(Number), finished: expect.any(Number) } },
        histogram: { running: false },
      },
    });
    expect(doc.nodes[1]).toMatchObject({
      node: st.url,
      ok: true,
      state: 'running',
      status: { nnt: { running: true, delete_time: BEFORE, rollups: null }, text: { running: false } },
    });
    expect(doc.nodes[2]).toEqual({
      node: dead,
      ok: false,
      state: 'unreachable',
      lag_seconds: null,
      error: { code: 'unreachable', message: expect.stringMatching(/connection refused/) },
    });

    const csv = await runCli(['status', ...nodes, '--output', 'csv']);
    expect(csv.code).toBe(3);
    const lines = csv.stdout.trimEnd().split('\r\n');
    expect(lines[0]).toBe(
      'node,ok,state,type,running,current_uuid,current_metric,delete_time,delete_time_iso,rollups,error_code,error,last_result,last_delete_time,last_delete_time_iso,last_rollups,last_finished,last_finished_iso,last_error,lag_seconds',
    );
    expect(lines).toHaveLength(1 + 3 + 3 + 1);
    expect(lines[1]).toMatch(new RegExp(`^${a.url},true,idle,nnt,false,,,,,,,,completed,\\d+,[0-9T:-]+Z,all,[0-9.]+,[0-9T:.-]+Z,,[0-9.]*$`));
    expect(lines[4]).toMatch(new RegExp(`^${st.url},true,running,nnt,true,0000[^,]*,,${BEFORE},[0-9T:-]+Z,all,,,,,,,,,,[0-9.]*$`));
    expect(lines[7]).toMatch(new RegExp(`^${dead},false,unreachable,,,,,,,,unreachable,connection refused`));

    const none = await runCli(['status', '--nodes', dead, '--retries', '0']);
    expect(none.code).toBe(1);

    await client(st.url).cancelSweep();

    // --watch follows a sweep (20 checks x 100 ms x 2 types, ~4 s) until the node is idle by itself.
    const w = await startNode({ memory: true, sweepPaceMs: 100 });
    await seed(w.url, 20);
    await client(w.url).sweepDelete({ before: BEFORE, types: ['nnt', 'histogram'] });
    const watch = await runCli(['status', '--nodes', w.url, '--watch', '100ms', '--output', 'json']);
    expect(watch.code).toBe(0);
    expect(watch.stderr).toMatch(new RegExp(`${w.url}: running`));
    expect(watch.stderr).toMatch(new RegExp(`${w.url}: idle`));
    expect(JSON.parse(watch.stdout)).toMatchObject({
      nodes: [
        {
          node: w.url,
          ok: true,
          state: 'idle',
          status: {
            nnt: { running: false, last: { result: 'completed', delete_time: BEFORE } },
            text: { running: false },
            histogram: { running: false, last: { result: 'completed' } },
          },
        },
      ],
    });
  });
});
