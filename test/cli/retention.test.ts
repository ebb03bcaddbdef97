/**
 * Issue 17's acceptance on a real 3-node local cluster (reference nodes on 127.0.0.1:0, the real
 * CLI): the example policy leaves exactly the data it should per type and span, a node never has
 * two DELETEs in flight (every request recorded by an HTTP proxy in front of each node), a node
 * killed during step 2 stops there while the others finish and --resume finishes it with the same
 * cut-offs, an unknown span and a busy node are refused with nothing sent, a stopped run continues
 * when the same command runs again, and tsnode history shows the runs.
 */
import { mkdtempSync, readFileSync, readdirSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { HistogramRecord, NntRecord, SweepStatus, TextRecord } from '../../src/protocol/index.js';
import { runCli, startCli, type CliResult } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { showsIdle, startRecordingProxy, type ProxiedExchange, type RecordingProxy } from '../helpers/recording-proxy.js';

const agent = new Agent();
const client = (url: string): NodeClient => new NodeClient(url, { dispatcher: agent, retry: { retries: 0, baseDelayMs: 0, maxDelayMs: 0 } });
const status = (url: string): Promise<SweepStatus> => client(url).sweepStatus();

const DAY = 86_400;
const NOW_S = Math.floor(Date.now() / 1000);
/** Days ago, on a UTC midnight: far from every cut-off of the example policy (30d, 90d, 1y). */
const AGES = [10, 45, 120, 200, 400] as const;
const at = (days: number): number => Math.floor((NOW_S - days * DAY) / DAY) * DAY;
const uuid = (i: number): string => `00000000-0000-4000-8000-${String(i).padStart(12, '0')}`;

/** `series` checks, each with a numeric, a text and a histogram metric at every age (histograms at periods 60 and 300). */
async function seed(url: string, series: number, types: ReadonlyArray<'nnt' | 'text' | 'histogram'> = ['nnt', 'text', 'histogram']): Promise<void> {
  const nnt: NntRecord[] = [];
  const text: TextRecord[] = [];
  const hist: HistogramRecord[] = [];
  for (let i = 0; i < series; i++) {
    for (const d of AGES) {
      nnt.push({ metric: 'cpu', id: uuid(i), offset: at(d), count: 1, value: d, derivative: 0, counter: 0, stddev: 0, derivative_stddev: 0, counter_stddev: 0 });
      text.push({ metric: 'version', id: uuid(i), offset: at(d), value: `v${d}` });
      for (const period of [60, 300]) hist.push({ metric: 'latency', id: uuid(i), offset: at(d), period, histogram: 'AAA=' });
    }
  }
  const c = client(url);
  if (types.includes('nnt')) await c.writeNnt(nnt);
  if (types.includes('text')) await c.writeText(text);
  if (types.includes('histogram')) await c.writeHistogram(hist);
}

/** Which of AGES still have data for check `i`, per numeric span (read with get_engine=nnt), histogram period and text. */
async function survivors(url: string, i = 0): Promise<Record<string, number[]>> {
  const c = client(url);
  const out: Record<string, number[]> = {};
  for (const span of [60, 300, 1800, 10800, 86400]) {
    const kept: number[] = [];
    for (const d of AGES) {
      const r = await c.readRollup({ uuid: uuid(i), metric: 'cpu', startMs: at(d) * 1000, endMs: (at(d) + span) * 1000, spanMs: span * 1000, engine: 'nnt' });
      if (r.points[0]?.value != null) kept.push(d);
    }
    out[`nnt ${span}`] = kept;
  }
  for (const period of [60, 300]) {
    const kept: number[] = [];
    for (const d of AGES) {
      const rows = await c.readHistogram({ uuid: uuid(i), metric: 'latency', startMs: at(d) * 1000, endMs: (at(d) + DAY) * 1000, periodS: period });
      if (rows.length) kept.push(d);
    }
    out[`histogram ${period}`] = kept;
  }
  const textKept: number[] = [];
  for (const d of AGES) {
    const rows = await c.readText({ uuid: uuid(i), metric: 'version', startMs: at(d) * 1000, endMs: (at(d) + DAY) * 1000 });
    if (rows.length) textKept.push(d);
  }
  out.text = textKept;
  return out;
}

const ALL = [...AGES];
/** What the example policy leaves: nnt 60 for 30d, 300 for 1y, others forever; histogram 60 for 30d; text 90d. */
const EXPECTED = {
  'nnt 60': [10],
  'nnt 300': [10, 45, 120, 200],
  'nnt 1800': ALL,
  'nnt 10800': ALL,
  'nnt 86400': ALL,
  'histogram 60': [10],
  'histogram 300': ALL,
  text: [10, 45],
};

const state = mkdtempSync(join(tmpdir(), 'tsnode-retention-'));
const env = { XDG_STATE_HOME: state, HOME: state };
const JOURNAL = join(state, 'tsnode', 'sweeps.jsonl');
const RUNS = join(state, 'tsnode', 'retention');
const POLICY = join(state, 'retention.yaml');
writeFileSync(POLICY, '# the example of issue 17\nnnt:\n  60: 30d\n  300: 1y\nhistogram:\n  60: 30d\ntext: 90d\n');
const FAST = ['--poll-interval', '100ms', '--retries', '0'];

interface StepDoc {
  step: number;
  state: string;
  reason: string | null;
  attempt: number;
  sent_at: number | null;
}
interface ApplyDoc {
  run_id: string;
  attempt: number;
  outcome: string;
  exit_code: number;
  now: number;
  plan: { now: number; steps: { step: number; cutoff: number; types: string[] }[] };
  nodes: { node: string; finished: boolean; stopped_at: { step: number; state: string; reason: string } | null; steps: StepDoc[] }[];
  catch_up: { nodes: string[]; command: string } | null;
  coverage: { verdict: string } | null;
}
const doc = (r: CliResult): ApplyDoc => JSON.parse(r.stdout) as ApplyDoc;

let nodes: TestNode[];
let proxies: RecordingProxy[];
let list: string;

beforeAll(async () => {
  // Different paces, so the nodes finish their steps at different times.
  nodes = await Promise.all([5, 10, 20].map((sweepPaceMs) => startNode({ memory: true, sweepPaceMs })));
  proxies = await Promise.all(nodes.map((n) => startRecordingProxy(n.url)));
  list = proxies.map((p) => p.url).join(',');
}, 60_000);

afterAll(async () => {
  await Promise.all(proxies.map((p) => p.close()));
  await stopAllNodes();
  await agent.close();
});

const deletes = (p: RecordingProxy): ProxiedExchange[] => p.exchanges.filter((e) => e.method === 'DELETE');

describe('tsnode retention plan', () => {
  it("pins now, checks the spans against every node (GET /state), prints each step's exact requests, sends no DELETE", async () => {
    const before = proxies.map((p) => p.exchanges.length);
    const r = await runCli(['retention', 'plan', POLICY, '--nodes', list, '-o', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    const plan = JSON.parse(r.stdout);
    expect(plan.steps.map((s: { age: string; types: string[] }) => [s.age, s.types])).toEqual([
      ['30d', ['nnt', 'histogram']],
      ['90d', ['text']],
      ['1y', ['nnt']],
    ]);
    expect(plan.steps.map((s: { cutoff: number }) => plan.now - s.cutoff)).toEqual([30 * DAY, 90 * DAY, 365 * DAY]);
    expect(plan.nodes).toHaveLength(3);
    for (const [i, n] of plan.nodes.entries()) {
      expect(n.spans_from).toEqual({ nnt: 'node', histogram: 'node' });
      expect(n.steps[0].request).toEqual({
        method: 'DELETE',
        url: `${proxies[i]!.url}/sweep_delete`,
        headers: {
          'X-Service-Delete-Time': String(plan.steps[0].cutoff),
          'X-Service-Delete-Data-Types': 'nnt,histogram',
          'X-Service-NNT-Delete-Rollups': '60',
          'X-Service-Histogram-Delete-Rollups': '60',
        },
      });
      expect(n.steps[2].request.headers).toEqual({
        'X-Service-Delete-Time': String(plan.steps[2].cutoff),
        'X-Service-Delete-Data-Types': 'nnt',
        'X-Service-NNT-Delete-Rollups': '300',
      });
      expect(n.kept_forever).toEqual([
        { type: 'nnt', all: false, spans: [1800, 10800, 86400], other_spans: false, raw: true },
        { type: 'histogram', all: false, spans: [300, 1800, 10800, 86400], other_spans: false, raw: null },
      ]);
    }
    expect(plan.node_source).toBe('--nodes');
    expect(r.stderr).toContain('nothing was sent');
    proxies.forEach((p, i) => {
      const sent = p.exchanges.slice(before[i]);
      // GET /state for the spans, GET /sweep_delete to tell a sweep-era node from a node-managed one,
      // GET /state, /replication/json and /gossip/json again for the replication lag apply would
      // check (the gossip read is the lag source of stores without /replication/json): reads only.
      expect(sent.map((e) => `${e.method} ${e.url}`).sort()).toEqual(['GET /gossip/json', 'GET /replication/json', 'GET /state', 'GET /state', 'GET /sweep_delete']);
    });
    expect(plan.nodes.map((n: { retention: string }) => n.retention)).toEqual(['sweep', 'sweep', 'sweep']);
    // the table form: steps, what stays, the requests
    const t = await runCli(['retention', 'plan', POLICY, '--nodes', list], { env });
    expect(t.code).toBe(0);
    expect(t.stdout).toMatch(/│ 1 +│ \d{4}-\d\d-\d\dT[\d:]+Z \(\d+\) │ 30d │ nnt spans 60; histogram spans 60 +│/);
    expect(t.stdout).toContain('kept forever: nnt spans 1800, 10800, 86400 and the nnt raw records; histogram spans 300, 1800, 10800, 86400');
    expect(t.stdout).toContain('X-Service-NNT-Delete-Rollups: 300');
  });
});

describe('tsnode retention apply', () => {
  it('the example policy leaves exactly what it should per type and span; never two DELETEs in flight on a node', async () => {
    await Promise.all(nodes.map((n) => seed(n.url, 6)));
    for (const p of proxies) p.exchanges.length = 0;
    const r = await runCli(['retention', 'apply', POLICY, '--nodes', list, '--yes', '-o', 'json', ...FAST], { env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    const d = doc(r);
    expect(d.outcome).toBe('complete');
    expect(d.catch_up).toBeNull();
    for (const n of d.nodes) {
      expect(n.finished).toBe(true);
      expect(n.steps.map((s) => s.state)).toEqual(['done', 'done', 'done']);
      expect(n.steps[0]!.reason).toBe("the node's record says our sweep completed");
    }
    // the data, per type and span, on every node and for every check
    for (const n of nodes) for (const i of [0, 5]) expect(await survivors(n.url, i)).toEqual(EXPECTED);

    // the requests: per node three DELETEs with the pinned cut-offs in order, each sent only after
    // the previous one's sweep was seen idle, and never overlapping
    const cutoffs = d.plan.steps.map((s) => String(s.cutoff));
    for (const p of proxies) {
      const dels = deletes(p);
      expect(dels.map((e) => e.headers['x-service-delete-time'])).toEqual(cutoffs);
      expect(dels.map((e) => e.headers['x-service-delete-data-types'])).toEqual(['nnt,histogram', 'text', 'nnt']);
      for (let k = 1; k < dels.length; k++) {
        const prev = dels[k - 1]!;
        const next = dels[k]!;
        expect(prev.end).toBeLessThan(next.start);
        const idleBetween = p.exchanges.filter((e) => showsIdle(e) && e.start > prev.end! && e.end! < next.start);
        expect(idleBetween.length, `${p.url}: an idle status between DELETE ${k} and ${k + 1}`).toBeGreaterThan(0);
      }
    }
    // one run file, 0600, and the journal has a step line per node and step
    const files = readdirSync(RUNS).filter((f) => f === `${d.run_id}.json`);
    expect(files).toHaveLength(1);
    expect(statSync(join(RUNS, files[0]!)).mode & 0o777).toBe(0o600);
    const lines = readFileSync(JOURNAL, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.run === d.run_id);
    expect(lines.map((e) => e.kind)).toEqual(['retention.start', ...Array(9).fill('retention.step'), 'receipt', 'retention.end']);
    expect(lines[0]).toMatchObject({ v: 1, attempt: 1, now: d.now, policySource: POLICY, nodes: proxies.map((p) => p.url) });
    expect(lines[0].at).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
    expect(lines.at(-1)).toMatchObject({ kind: 'retention.end', outcome: 'complete', exit: 0, catchUp: null });
  });

  it('--no-receipt (a benchmark knob) takes no inventory looks and journals no receipt', async () => {
    await Promise.all(nodes.map((n) => seed(n.url, 2)));
    const looks = (): number => proxies.reduce((n, p) => n + p.exchanges.filter((e) => /list_nntbs_shards|list_shards/.test(e.url)).length, 0);
    for (const p of proxies) p.exchanges.length = 0;
    const r = await runCli(['retention', 'apply', POLICY, '--nodes', list, '--yes', '-o', 'json', '--no-receipt', ...FAST], { env, timeoutMs: 60_000 });
    expect(r.code, r.stderr).toBe(0);
    expect(looks()).toBe(0);
    const kinds = readFileSync(JOURNAL, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((e) => e.run === doc(r).run_id)
      .map((e) => e.kind);
    expect(kinds).not.toContain('receipt');
    expect(kinds.at(-1)).toBe('retention.end');
  });

  it('an unknown span is refused before anything is sent (exit 2)', async () => {
    for (const p of proxies) p.exchanges.length = 0;
    const r = await runCli(['retention', 'apply', '--rule', 'nnt:120=30d', '--rule', 'text=90d', '--nodes', list, '--yes', ...FAST], { env });
    expect(r.code).toBe(2);
    expect(r.stdout).toBe('');
    // named once for the whole ring, not once per node (issue 25)
    expect(r.stderr).toContain(`nnt span 120 of --rule "nnt:120=30d" is not configured on any of the ${proxies.length} nodes (their nnt spans: 60, 300, 1800, 10800, 86400)`);
    expect(r.stderr.split('nnt span 120').length).toBe(2);
    expect(r.stderr).toContain('nothing was sent');
    for (const p of proxies) expect(deletes(p)).toEqual([]);
  });

  it('a busy node is refused: nothing is sent to any node, its sweep keeps running', async () => {
    const busy = nodes[2]!;
    // 400 series at 20 ms each: the sweep outlasts the CLI on a loaded machine (cancelled below).
    await seed(busy.url, 400, ['nnt']);
    await client(busy.url).sweepDelete({ before: at(300), types: ['nnt'] });
    for (const p of proxies) p.exchanges.length = 0;
    const r = await runCli(['retention', 'apply', POLICY, '--nodes', list, '--yes', ...FAST], { env });
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`${proxies[2]!.url} is already sweeping nnt: a retention run never cancels a sweep`);
    expect(r.stderr).toContain('refusing to apply the retention policy: nothing was sent');
    for (const p of proxies) expect(deletes(p)).toEqual([]);
    expect((await status(busy.url)).nnt).toMatchObject({ running: true, timestamp: at(300) });
    await client(busy.url).cancelSweep();
  });
});

describe('stopping and resuming', () => {
  let ring: TestNode[];
  beforeAll(async () => {
    // On disk, so a killed node comes back with its data; the third one is slow at text (step 2).
    ring = await Promise.all([startNode({ sweepPaceMs: 2 }), startNode({ sweepPaceMs: 2 }), startNode({ sweepPaceMs: 60 })]);
    await Promise.all(ring.map((n, i) => seed(n.url, i === 2 ? 60 : 3)));
  }, 60_000);

  it('a node killed during step 2 stops there (lost) while the others finish; --resume finishes it with the same cut-offs', async () => {
    const [a, b] = ring as [TestNode, TestNode, TestNode];
    let c = ring[2]!;
    const urls = ring.map((n) => n.url).join(',');
    const cli = startCli(['retention', 'apply', POLICY, '--nodes', urls, '--yes', '-o', 'json', '--lost-after', '1500ms', '--poll-interval', '100ms', '--retries', '0'], {
      env,
      timeoutMs: 60_000,
    });
    await cli.waitForStderr(new RegExp(`${c.url}: step 2/3 running`), 30_000);
    await c.kill();
    const r = await cli.done;
    expect(r.code, r.stderr).toBe(3);
    const first = doc(r);
    expect(first.outcome).toBe('partial');
    const byNode = new Map(first.nodes.map((n) => [n.node, n]));
    for (const n of [a, b]) expect(byNode.get(n.url)!.steps.map((s) => s.state)).toEqual(['done', 'done', 'done']);
    const stopped = byNode.get(c.url)!;
    expect(stopped.steps.map((s) => s.state)).toEqual(['done', 'lost', 'pending']);
    expect(stopped.stopped_at).toMatchObject({ step: 2, state: 'lost', reason: expect.stringMatching(/^no answer for \ds: /) });
    expect(first.catch_up).toEqual({ nodes: [c.url], command: `tsnode retention apply --resume ${first.run_id} --yes`, add_back: [] });
    expect(r.stderr).toContain(`to catch up (1 node(s) not finished): tsnode retention apply --resume ${first.run_id} --yes`);
    c = await c.restart();
    // step 2 never finished there: the last check (swept last) still has its old text
    expect(await survivors(c.url, 59)).toMatchObject({ text: ALL });

    const again = await runCli(['retention', 'apply', '--resume', first.run_id, '--yes', '-o', 'json', ...FAST], { env, timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    const second = doc(again);
    expect(second).toMatchObject({ run_id: first.run_id, attempt: 2, outcome: 'complete', now: first.now });
    expect(second.plan.steps).toEqual(first.plan.steps);
    const resumed = second.nodes.find((n) => n.node === c.url)!;
    expect(resumed.steps.map((s) => [s.state, s.attempt])).toEqual([
      ['done', 1],
      ['done', 2],
      ['done', 2],
    ]);
    expect(resumed.steps[1]!.reason).toMatch(/sent again: idle, and the node's record does not show this sweep completed/);
    // the others were left alone: their steps are still the first attempt's
    for (const n of [a, b]) expect(second.nodes.find((x) => x.node === n.url)!.steps.every((s) => s.attempt === 1)).toBe(true);
    // the same pinned cut-offs reached the node: its own records of its last sweeps say so
    const st = await status(c.url);
    expect(st.text.last).toMatchObject({ timestamp: first.plan.steps[1]!.cutoff, result: 'completed' });
    expect(st.nnt.last).toMatchObject({ timestamp: first.plan.steps[2]!.cutoff, rollups: '300', result: 'completed' });
    for (const i of [0, 59]) expect(await survivors(c.url, i)).toEqual(EXPECTED);
    expect(again.stderr).toContain(`continuing run ${first.run_id} (attempt 2)`);
    // a finished run has nothing left: resuming it sends nothing
    const done = await runCli(['retention', 'apply', '--resume', first.run_id, '--yes', ...FAST], { env });
    expect(done.code).toBe(0);
    expect(done.stderr).toContain(`run ${first.run_id} finished every step on every node already: nothing to do (nothing was sent)`);
  });

  it('SIGTERM stops a run (exit 130); the same command again continues it with the same cut-offs', async () => {
    const slow = ring[2]!;
    await seed(slow.url, 60, ['nnt']);
    const urls = ring.map((n) => n.url).join(',');
    const args = ['retention', 'apply', '--rule', 'nnt:60=20d', '--rule', 'text=100d', '--nodes', urls, '--yes', '-o', 'json', ...FAST];
    const cli = startCli(args, { env, timeoutMs: 60_000 });
    await cli.waitForStderr(new RegExp(`${slow.url}: step 1/2 running`), 30_000);
    cli.child.kill('SIGTERM');
    const r = await cli.done;
    expect(r.code, r.stderr).toBe(130);
    const first = doc(r);
    expect(first.outcome).toBe('interrupted');
    expect(first.nodes.find((n) => n.node === slow.url)!.stopped_at).toMatchObject({ step: 1, state: 'interrupted' });
    expect(r.stderr).toContain('to continue with the same cut-offs: run the same command again');

    const again = await runCli(args, { env, timeoutMs: 60_000 });
    expect(again.code, again.stderr).toBe(0);
    const second = doc(again);
    expect(second).toMatchObject({ run_id: first.run_id, attempt: 2, outcome: 'complete', now: first.now });
    expect(again.stderr).toContain(`continuing run ${first.run_id} of the same policy on the same nodes`);
    // the interrupted step was looked at before anything was sent again
    const step1 = second.nodes.find((n) => n.node === slow.url)!.steps[0]!;
    expect(step1).toMatchObject({ state: 'done', attempt: 2, sent_at: first.nodes.find((n) => n.node === slow.url)!.steps[0]!.sent_at });
    expect(step1.reason).toMatch(/found still running on resume|the node's record says this sweep completed after it was sent/);
  });

  it('tsnode history shows the retention runs, resumed ones as one row with every node finished', async () => {
    const r = await runCli(['history', '--output', 'json'], { env });
    expect(r.code).toBe(0);
    const runs = (
      JSON.parse(r.stdout) as {
        runs: Array<{ run: string; kind: string; outcome_recorded: boolean; pending: string[]; nodes: { state: string }[]; retention?: { attempt: number; outcome: string } }>;
      }
    ).runs.filter((x) => x.kind === 'retention');
    expect(runs.length).toBeGreaterThanOrEqual(3);
    const resumed = runs.filter((x) => x.retention!.attempt === 2);
    expect(resumed).toHaveLength(2);
    for (const x of resumed) {
      expect(x).toMatchObject({ outcome_recorded: true, pending: [] });
      expect(x.retention!.outcome).toBe('complete');
      expect(x.nodes.every((n) => n.state === 'finished')).toBe(true);
    }
    const table = await runCli(['history'], { env });
    expect(table.stdout).toMatch(/retention .*retention\.yaml: 3 step\(s\) \(nnt:60=30d histogram:60=30d; text=90d; nnt:300=1y\)/);
  });
});
