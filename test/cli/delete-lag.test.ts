/**
 * `tsnode delete` on a real replicating three-node ring (write_copies 2), as sweeps behave there:
 * a list that leaves a ring node out with --allow-partial ends partial (exit 3, "N of M ring
 * nodes", the catch-up and history name the node left); while a peer's replication towards a node
 * is paused the delete is refused (exit 2, the node, its lag and the peer named) unless
 * --allow-lag, the dry run shows the lag, and the refusal's journal record carries the query and
 * scope so `history` says what was refused.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { printedArgs, runCli } from '../helpers/cli.js';
import { stopAllNodes } from '../helpers/nodes.js';
import { caughtUp, eventually, lagRing, putJson, startRing, type TestRing } from '../helpers/ring.js';
import { call, UUID, write } from '../integration/server-helpers.js';

const T0 = 1_700_000_040;
const dir = mkdtempSync(join(tmpdir(), 'tsnode-delete-lag-'));
let ring: TestRing;
const urls = (idx = [0, 1, 2]): string => idx.map((i) => ring.nodes[i]!.url).join(',');
const { seriesOwnedBy, held, pause } = lagRing(() => ring, T0);

beforeAll(async () => {
  ring = await startRing(3, 2);
}, 60_000);
afterAll(async () => {
  await stopAllNodes();
  rmSync(dir, { recursive: true, force: true });
});

/** What node `i` holds itself (the no-proxy header) of `query`. */
async function own(i: number, query: string): Promise<string[]> {
  const r = await call(ring.nodes[i]!.url, 'GET', `/find/1/tags?query=${encodeURIComponent(query)}`, { headers: { 'x-snowth-proxied': '1' } });
  return (r.json as Array<{ metric_name: string }>).map((m) => m.metric_name).sort();
}

const journalOf = (file: string) =>
  readFileSync(file, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as Record<string, unknown>);

it('a ring node left out with --allow-partial makes the delete partial: exit 3, "2 of 3 ring nodes", the catch-up and history name it', async () => {
  const names = ['cpu', 'mem', 'disk', 'net', 'load', 'swap', 'io', 'fd'].map((m) => `${m}|ST[host:part1]`);
  const owners = (m: string) => ring.ring.ownersOf(UUID, m).map((n) => ring.indexOf(n.id));
  expect(
    (
      await write(
        ring.nodes[0]!.url,
        names.map((metric) => ({ metric, id: UUID, offset: T0, count: 1, value: 1 })),
      )
    ).status,
  ).toBe(200);
  await eventually('replication put every metric on its owners', async () => {
    const on = await Promise.all([0, 1, 2].map((i) => own(i, 'and(host:part1)')));
    return names.every((m) => owners(m).every((i) => on[i]!.includes(m)));
  });
  await caughtUp(ring);
  const onLeft = await own(2, 'and(host:part1)');
  expect(onLeft.length).toBeGreaterThan(0);
  const journal = join(dir, 'partial.jsonl');
  const r = await runCli(['delete', 'and(host:part1)', '--full', '--yes', '--allow-partial', '--nodes', urls([0, 1]), '--journal', journal, '-o', 'json']);
  expect(r.code, r.stderr).toBe(3);
  expect(r.stderr).toMatch(/2 of 3 ring nodes; not deleted on: [0-9a-f-]+ \(http:\/\/127\.0\.0\.1:\d+\)/);
  const out = JSON.parse(r.stdout) as { run: string; exit: number; catch_up: string; not_swept: Array<{ id: string; node: string }>; nodes: Array<{ state: string }> };
  expect(out.exit).toBe(3);
  expect(out.not_swept).toEqual([{ id: ring.ids[2], node: ring.nodes[2]!.url }]);
  expect(out.nodes.map((n) => n.state)).toEqual(['deleted', 'deleted']);
  expect(out.catch_up).toBe(`tsnode delete 'and(host:part1)' --full --nodes ${ring.nodes[2]!.url} --allow-partial --journal ${journal} --yes`);
  // The node left out still holds its copies; the journal's end line counts it as left.
  expect(await own(2, 'and(host:part1)')).toEqual(onLeft);
  const end = journalOf(journal).find((e) => e.kind === 'delete.end') as { exit: number; nodes: Array<{ node: string; state: string }> };
  expect(end.exit).toBe(3);
  expect(end.nodes).toContainEqual(expect.objectContaining({ node: ring.nodes[2]!.url, state: 'not_swept' }));
  const hist = await runCli(['history', '--journal', journal, '-o', 'json']);
  expect(hist.code, hist.stderr).toBe(0);
  expect(hist.stdout).toContain(ring.nodes[2]!.url);
  const runs = JSON.parse(hist.stdout) as Array<{ run: string; pending: string[] }> | { runs: Array<{ run: string; pending: string[] }> };
  const list = Array.isArray(runs) ? runs : runs.runs;
  expect(list.find((x) => x.run === out.run)!.pending).toEqual([ring.nodes[2]!.url]);

  // The catch-up, run as printed, deletes the rest: nothing of the host left anywhere.
  // The nodes the first run deleted on count as done by it (the journal says so), not as left.
  await caughtUp(ring); // the catch-up's lag preflight runs once replication is caught up
  const again = await runCli([...printedArgs(out.catch_up), '-o', 'json']);
  expect(again.code, again.stderr).toBe(0);
  expect(again.stderr).toMatch(/ring: 3 of 3 ring nodes; deleted on by an earlier run: .*run [0-9a-f]+\)/);
  for (const i of [0, 1, 2]) expect(await own(i, 'and(host:part1)')).toEqual([]);
});

it('refuses while data is in flight to a node (named with its lag and peer); the dry run shows it; history names the refused query; --allow-lag goes ahead', async () => {
  const [a, b] = [0, 1];
  const s = seriesOwnedBy(a, b);
  const query = `and(__name:${s.metric})`;
  await pause(a, b, true);
  try {
    expect((await putJson(`${ring.nodes[a]!.url}/write/nnt`, [{ id: s.id, metric: s.metric, offset: T0, count: 1, value: 5 }])).status).toBe(200);
    expect(await held(a, s)).toBe(true);
    const journal = join(dir, 'lag.jsonl');

    const dry = await runCli(['delete', query, '--full', '--dry-run', '--nodes', urls()]);
    expect(dry.code, dry.stderr).toBe(0);
    expect(dry.stderr).toContain(`${ring.nodes[b]!.url}: replication `);
    expect(dry.stderr).toContain(`1 record pending at ${ring.nodes[a]!.url} (replication paused) (the delete refuses this without --allow-lag)`);

    const refused = await runCli(['delete', query, '--full', '--yes', '--nodes', urls(), '--journal', journal]);
    expect(refused.code, refused.stderr).toBe(2);
    expect(refused.stderr).toContain(`${ring.nodes[b]!.url}: replication is behind: `);
    expect(refused.stderr).toContain(`1 record pending at ${ring.nodes[a]!.url} (replication paused)`);
    expect(refused.stderr).toMatch(/refusing to delete: nothing was deleted/);
    expect(refused.stderr).toContain('--allow-lag <duration>');
    expect(await held(a, s)).toBe(true);
    const [rec] = journalOf(journal);
    expect(rec).toMatchObject({ kind: 'run.refused', command: 'delete', query, metric: null, account: 1, scope: { kind: 'full' } });
    const hist = await runCli(['history', '--journal', journal]);
    expect(hist.stdout).toContain(`delete ${query}: all data and the names`);
    expect(hist.stdout).not.toContain('query not journaled');

    const ahead = await runCli(['delete', query, '--full', '--yes', '--allow-lag', '1h', '--nodes', urls(), '--journal', journal, '-o', 'json']);
    expect(ahead.code, ahead.stderr).not.toBe(2);
    expect(ahead.stderr).toContain(`${ring.nodes[b]!.url}: replication `);
    expect(ahead.stderr).toContain('going ahead: --allow-lag 1h');
    expect(await held(a, s)).toBe(false);
  } finally {
    await pause(a, b, false);
  }
});
