/**
 * `tsnode delete` on a real 3-node ring from `tsnode cluster up` (a plain ring: the reference node
 * does not replicate yet, so each metric is written to its owners directly, as replication would
 * leave it): a query selecting one host's metrics removes exactly those on every owner, read with
 * the no-proxy header, and nothing else; a list missing a ring node is refused without --allow-partial.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { Ring, topologyFromJson, type Topology } from '../../src/ring/index.js';
import { runCli } from '../helpers/cli.js';
import { killMentioning } from '../helpers/procs.js';
import { call, UUID, write } from '../integration/server-helpers.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-delete-ring-'));
const dir = join(root, 'ring');
let urls: string[];
let topology: Topology;
const METRICS = [...['cpu', 'mem', 'disk', 'net'].map((m) => `${m}|ST[host:web1]`), ...['cpu', 'mem'].map((m) => `${m}|ST[host:web2]`)];
const owners = new Map<string, string[]>();

async function own(url: string): Promise<string[]> {
  const r = await call(url, 'GET', `/find/1/tags?query=${encodeURIComponent('and(*:*)')}`, { headers: { 'x-snowth-proxied': '1' } });
  return (r.json as Array<{ metric_name: string }>).map((m) => m.metric_name).sort();
}

beforeAll(async () => {
  const up = await runCli(['cluster', 'up', '--count', '3', '--write-copies', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json'], { timeoutMs: 60_000 });
  expect(up.code, up.stderr).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
  topology = topologyFromJson(JSON.parse(readFileSync(join(dir, 'topology.json'), 'utf8')));
  const ring = Ring.compile(topology);
  for (const metric of METRICS) {
    const to = ring.ownersOf(UUID, metric).map((n) => `http://${n.address}:${n.apiport}`);
    owners.set(metric, to);
    for (const u of to) expect((await write(u, [{ metric, id: UUID, offset: 1_700_000_040, count: 1, value: 1 }])).status).toBe(200);
  }
}, 90_000);

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

it('a list missing a ring node is refused (nothing deleted) unless --allow-partial', async () => {
  const journal = join(root, 'refused.jsonl');
  const r = await runCli(['delete', 'and(host:web1)', '--full', '--yes', '--nodes', urls.slice(0, 2).join(','), '--journal', journal]);
  expect(r.code).toBe(2);
  // The run core's trace of a refused run.
  const refused = readFileSync(journal, 'utf8')
    .trim()
    .split('\n')
    .map((l) => JSON.parse(l) as { kind: string; command: string; codes: string[] });
  expect(refused).toMatchObject([{ kind: 'run.refused', command: 'delete', codes: ['coverage'] }]);
  expect(r.stderr).toMatch(/ring node not in the list/);
  expect(r.stderr).toMatch(/--allow-partial/);
  for (const u of urls) expect((await own(u)).length).toBeGreaterThan(0);
});

it("removes exactly one host's metrics on every owner, and nothing else", async () => {
  const before = new Map(await Promise.all(urls.map(async (u) => [u, await own(u)] as const)));
  const r = await runCli(['delete', 'and(host:web1)', '--full', '--yes', '--batch', '1', '--seed', urls[0]!, '-o', 'json']);
  expect(r.code, r.stderr).toBe(0);
  expect(r.stderr).toMatch(/coverage: every node of ring/);
  for (const u of urls) {
    const expected = before.get(u)!.filter((m) => !m.includes('host:web1'));
    expect(await own(u)).toEqual(expected);
  }
  const web2Copies = METRICS.filter((m) => m.includes('web2')).reduce((n, m) => n + owners.get(m)!.length, 0);
  expect((await Promise.all(urls.map(own))).flat().length).toBe(web2Copies);
});
