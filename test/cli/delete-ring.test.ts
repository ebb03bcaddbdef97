/**
 * `tsnode delete` on a real replicating 3-node ring (write copies 2), each node behind a recording
 * proxy its topology names: records are written once and reach their owners by replication; every
 * owner is read for its own copy with the no-proxy header. A query selecting one host's metrics
 * removes exactly those on every node and nothing else; the dry run deletes nothing; --before
 * keeps newer data; a small --batch loops on the incomplete-results header; a metric brought back
 * by a real late replay (replication paused towards an owner, a write, the delete, then the resume
 * before the after-look) is reported with a catch-up that completes the delete as printed.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { printedArgs, runCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { caughtUp, eventually, startProxiedRing } from '../helpers/ring.js';
import { call, UUID, write } from '../integration/server-helpers.js';

const T0 = 1_700_000_040;
const root = mkdtempSync(join(tmpdir(), 'tsnode-delete-ring-'));
let ring: Awaited<ReturnType<typeof startProxiedRing>>;
let list: string;

/** What node `i` holds itself (the no-proxy header), every metric of account 1. */
async function own(i: number, query = 'and(*:*)'): Promise<string[]> {
  const r = await call(ring.nodes[i]!.url, 'GET', `/find/1/tags?query=${encodeURIComponent(query)}`, { headers: { 'x-snowth-proxied': '1' } });
  return (r.json as Array<{ metric_name: string }>).map((m) => m.metric_name).sort();
}
const everyNode = (): Promise<string[][]> => Promise.all(ring.nodes.map((_, i) => own(i)));
const ownersOf = (metric: string): number[] => ring.ring.ownersOf(UUID, metric).map((n) => ring.indexOf(n.id));
const rec = (metric: string, offset = T0) => ({ metric, id: UUID, offset, count: 1, value: 1 });

/** Writes once, to node 0's ring address, and waits until replication put each metric on all its owners (and nowhere else). */
async function seed(records: Array<ReturnType<typeof rec>>): Promise<void> {
  expect((await write(ring.proxies[0]!.url, records)).status).toBe(200);
  const metrics = [...new Set(records.map((r) => r.metric))];
  await eventually('replication put every metric on its owners', async () => {
    const held = await everyNode();
    return metrics.every((m) => ring.nodes.every((_, i) => held[i]!.includes(m) === ownersOf(m).includes(i)));
  });
  await caughtUp(ring);
}

beforeAll(async () => {
  ring = await startProxiedRing(3, 2);
  list = ring.proxies.map((p) => p.url).join(',');
}, 60_000);

afterAll(async () => {
  await stopAllNodes();
  rmSync(root, { recursive: true, force: true });
});

const hosts = (host: string) => ['cpu', 'mem', 'disk', 'net', 'load', 'swap'].map((m) => `${m}|ST[host:${host}]`);

it('a list missing a ring node is refused: nothing deleted, a run.refused record, the hint names --allow-partial', async () => {
  await seed(hosts('ref1').map((m) => rec(m)));
  const journal = join(root, 'refused.jsonl');
  const r = await runCli([
    'delete',
    'and(host:ref1)',
    '--full',
    '--yes',
    '--nodes',
    ring.proxies
      .slice(0, 2)
      .map((p) => p.url)
      .join(','),
    '--journal',
    journal,
  ]);
  expect(r.code).toBe(2);
  const lines = readFileSync(journal, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; command: string; codes: string[] });
  // The refusal says what was refused: the query and the scope, which history shows.
  expect(lines).toMatchObject([{ kind: 'run.refused', command: 'delete', codes: ['coverage'], query: 'and(host:ref1)', account: 1, scope: { kind: 'full' } }]);
  const hist = await runCli(['history', '--journal', journal]);
  expect(hist.stdout).toContain('delete and(host:ref1): all data and the names');
  expect(r.stderr).toMatch(/ring node not in the list/);
  expect(r.stderr).toMatch(/--allow-partial/);
  expect((await everyNode()).flat().filter((m) => m.includes('host:ref1')).length).toBe(6 * 2);
});

it("the dry run deletes nothing; the delete removes exactly one host's metrics on every owner, in batches, and nothing else", async () => {
  await seed([...hosts('web1').map((m) => rec(m)), ...hosts('web2').map((m) => rec(m))]);
  const before = await everyNode();
  const dry = await runCli(['delete', 'and(host:web1)', '--full', '--dry-run', '--nodes', list, '-o', 'json']);
  expect(dry.code, dry.stderr).toBe(0);
  const shown = JSON.parse(dry.stdout) as { metrics: Array<{ metric_name: string; nodes: Record<string, string> }> };
  expect(shown.metrics.map((m) => m.metric_name).sort()).toEqual(hosts('web1').sort());
  // The dry run names each metric on exactly its owners.
  for (const m of shown.metrics)
    expect(
      Object.keys(m.nodes)
        .filter((n) => m.nodes[n] === 'found')
        .sort(),
    ).toEqual(
      ownersOf(m.metric_name)
        .map((i) => ring.proxies[i]!.url)
        .sort(),
    );
  expect(await everyNode()).toEqual(before);

  const journal = join(root, 'web1.jsonl');
  const r = await runCli(['delete', 'and(host:web1)', '--full', '--yes', '--batch', '1', '--nodes', list, '--journal', journal, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/coverage: every node of ring/);
  const out = JSON.parse(r.stdout) as { nodes: Array<{ node: string; state: string; found: number; deleted: number; rounds: number; gone: number }> };
  for (const n of out.nodes) {
    // One metric per call: as many rounds as metrics (the node said more remain after each but the last).
    expect(n.state).toBe('deleted');
    expect([n.deleted, n.gone, n.rounds]).toEqual([n.found, n.found, n.found]);
  }
  expect(out.nodes.reduce((s, n) => s + n.found, 0)).toBe(6 * 2);
  expect(Math.max(...out.nodes.map((n) => n.rounds))).toBeGreaterThan(1);
  const after = await everyNode();
  after.forEach((held, i) => expect(held).toEqual(before[i]!.filter((m) => !m.includes('host:web1'))));
  // The journal: a start line, one line per node and round with what it deleted, the receipt.
  const lines = readFileSync(journal, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; deleted?: unknown[] });
  expect(lines[0]!.kind).toBe('delete.start');
  expect(lines.at(-1)!.kind).toBe('delete.end');
  const rounds = lines.filter((l) => l.kind === 'delete.round');
  expect(rounds.length).toBe(6 * 2);
  expect(rounds.every((l) => l.deleted?.length === 1)).toBe(true);
});

it('--before keeps the newer data on every owner', async () => {
  const names = hosts('db1');
  await seed([...names.map((m) => rec(m)), ...names.map((m) => rec(m, T0 + 600))]);
  const r = await runCli(['delete', 'and(host:db1)', '--before', String(T0 + 60), '--types', 'nnt', '--yes', '--nodes', list, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  const p = new URLSearchParams({ start_ts: `${T0}.000`, end_ts: `${T0 + 660}.000`, rollup_span: '60s', get_engine: 'recalc', type: 'count' });
  for (const m of names) {
    for (const i of ownersOf(m)) {
      const got = await call(ring.nodes[i]!.url, 'GET', `/rollup/${UUID}/${encodeURIComponent(m)}?${p.toString()}`, { headers: { 'x-snowth-proxied': '1' } });
      expect((got.json as Array<[number, number | null]>).filter(([, v]) => v !== null).map(([t]) => t)).toEqual([T0 + 600]);
    }
  }
  for (const [i, held] of (await everyNode()).entries()) expect(held.filter((m) => m.includes('host:db1')).length).toBe(names.filter((m) => ownersOf(m).includes(i)).length);
});

it('a metric a late replay brings back is reported, with a catch-up that completes the delete as printed', async () => {
  const names = hosts('late1');
  await seed(names.map((m) => rec(m)));
  const metric = names[0]!;
  const [a, b] = ownersOf(metric) as [number, number];
  // Replication from a towards b paused, then a newer write of the metric to a: journaled for b, not sent.
  const pause = (what: 'pause' | 'resume') => fetch(`${ring.nodes[a]!.url}/replication/${what}/${ring.ids[b]}`, { method: 'POST' });
  expect((await pause('pause')).status).toBe(200);
  expect((await write(ring.proxies[a]!.url, [rec(metric, T0 + 60)])).status).toBe(200);
  // b's after-look (its second unconfirmed DELETE) waits until the journal replayed the write back to b.
  let looks = 0;
  const afterLook = ring.proxies[b]!.hold((ex) => ex.method === 'DELETE' && ex.headers['x-snowth-confirm-delete'] === undefined && ++looks === 2);
  const journal = join(root, 'late.jsonl');
  const running = runCli(['delete', 'and(host:late1)', '--full', '--yes', '--allow-lag', '1h', '--nodes', list, '--journal', journal, '-o', 'json']);
  await afterLook.arrived;
  expect(await own(b, 'and(host:late1)')).toEqual([]);
  expect((await pause('resume')).status).toBe(200);
  await eventually('the replay brought the metric back to b', async () => (await own(b, 'and(host:late1)')).includes(metric));
  afterLook.release();
  const r = await running;
  expect(r.code, r.stderr).toBe(3);
  const out = JSON.parse(r.stdout) as { catch_up: string; nodes: Array<{ node: string; state: string; reappeared: Array<{ metric_name: string }> }> };
  const nodeB = out.nodes.find((n) => n.node === ring.proxies[b]!.url)!;
  expect(nodeB.state).toBe('partial');
  expect(nodeB.reappeared.map((m) => m.metric_name)).toEqual([metric]);
  expect(out.nodes.filter((n) => n !== nodeB).every((n) => n.state === 'deleted')).toBe(true);
  expect(r.stderr).toContain(`${ring.proxies[b]!.url}: 1 metric came back after the delete (a late replay?), e.g. ${metric}`);
  expect(r.stderr).toContain(`to catch up: ${out.catch_up}`);
  expect(out.catch_up).toBe(`tsnode delete 'and(host:late1)' --full --nodes ${ring.proxies[b]!.url} --allow-partial --journal ${journal} --yes`);

  // The catch-up runs once replication is caught up (before, its lag preflight refuses it, rightly).
  await caughtUp(ring);
  const again = await runCli([...printedArgs(out.catch_up), '-o', 'json']);
  expect(again.code, again.stderr).toBe(0);
  expect((JSON.parse(again.stdout) as { nodes: Array<{ state: string }> }).nodes.map((n) => n.state)).toEqual(['deleted']);
  for (const held of await everyNode()) expect(held.filter((m) => m.includes('host:late1'))).toEqual([]);
  // history shows the receipt: the metric's way on b, found then reappeared.
  const show = await runCli(['history', 'show', JSON.parse(r.stdout).run as string, '--journal', journal]);
  expect(show.stdout).toMatch(new RegExp(`${ring.proxies[b]!.url.replace(/[.]/g, '\\.')}.*${metric.replace(/[|[\]]/g, '\\$&')}.*found.*reappeared`));
});
