/**
 * Writes and reads routed by the ring, on a real five-node `cluster up --write-copies 2`: every
 * record on exactly its two owners, an owner that goes down mid-write named in the rejects file
 * and filled in by a replay once it is back, reads from an owner (the next one when the primary
 * is down, never a non-owner), and the span and routing checks before anything is sent.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Agent } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { NodeClient } from '../../src/client/node-client.js';
import type { ClusterState } from '../../src/cli/local-cluster/state.js';
import { Ring, topologyFromJson, type Topology } from '../../src/ring/index.js';
import { runCli, startCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { isAlive, killMentioning } from '../helpers/procs.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-owners-test-'));
const dir = join(root, 'ring');
const dispatcher = new Agent();
const IDS = ['3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', '11111111-2222-4333-8444-555555555555'];
const METRICS = ['cpu', 'mem|ST[host:a]', 'disk used %', 'net`in', 'load', 'io'];
let urls: string[];
let topology: Topology;
let ring: Ring;
let state: ClusterState;
/** Nodes restarted by a test (their cluster process was killed): index -> node. */
const restarted = new Map<number, TestNode>();

beforeAll(async () => {
  // --no-replication: these tests are about where tsnode's own client sends and reads records, so each
  // node must keep exactly what it is sent (a replicating ring moves records to their owners itself,
  // and proxies reads; test/integration/ring-replication.test.ts covers that).
  const up = await runCli(['cluster', 'up', '--count', '5', '--write-copies', '2', '--base-port', '0', '--dir', dir, '--detach', '--no-replication', '-o', 'json'], {
    timeoutMs: 60_000,
  });
  expect(up.code, up.stderr).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
  topology = topologyFromJson(JSON.parse(readFileSync(join(dir, 'topology.json'), 'utf8')));
  ring = Ring.compile(topology);
  state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
}, 90_000);

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
  await stopAllNodes();
  await dispatcher.close();
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

/** The node index (0-based, topology order = url order) of each owner of a metric, primary first. */
const owners = (id: string, metric: string): number[] => ring.ownersOf(id, metric).map((n) => topology.nodes.findIndex((t) => t.id === n.id));

/** `n` records per (id, metric) pair, offsets 0, 60, ...; value = `value(i)`. */
function recordsFile(name: string, metricPrefix: string, n: number, value: (i: number) => number = (i) => i): { path: string; pairs: Array<[string, string]> } {
  const pairs: Array<[string, string]> = [];
  for (const id of IDS) for (const m of METRICS) pairs.push([id, `${metricPrefix}${m}`]);
  const lines: string[] = [];
  for (let i = 0; i < n; i++) for (const [id, metric] of pairs) lines.push(JSON.stringify({ metric, id, offset: 60 * i, count: 1, value: value(i) }));
  const path = join(root, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return { path, pairs };
}

/** How many of offsets 0..n-1 (minutes) a node holds for a metric. */
async function heldOn(url: string, id: string, metric: string, n: number): Promise<number> {
  const res = await new NodeClient(url, { dispatcher }).readRollup({ uuid: id, metric, startMs: 0, endMs: n * 60_000, spanMs: 60_000, engine: 'nnt', type: 'count' });
  return res.points.filter((p) => p.value !== null).length;
}

/** Kills node `index` (SIGKILL: a crash; the OS lets go of its data directory lock as it dies). */
async function stop(index: number): Promise<void> {
  const node = restarted.get(index);
  if (node) {
    restarted.delete(index);
    await node.kill();
    return;
  }
  const pid = state.nodes[index]!.pid;
  process.kill(pid, 'SIGKILL');
  await expect.poll(() => !isAlive(pid), { timeout: 10_000 }).toBe(true);
}

/** Starts node `index` again on its data dir, port, identity and topology (as cluster up did). */
async function revive(index: number): Promise<void> {
  const n = state.nodes[index]!;
  const node = await startNode({ dataDir: n.dataDir, port: n.port, args: ['--node-id', n.id!, '--topology', state.ring!.file, '--no-replication'] });
  restarted.set(index, node);
}

describe('write --to owners on a five-node ring (write_copies 2)', () => {
  it('with --seed: every record lands on exactly its two owners', async () => {
    const { path, pairs } = recordsFile('owners.ndjson', 'a.', 10);
    const r = await runCli(['write', '--to', 'owners', path, '--seed', urls[2]!, '--batch-size', '25', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/--to owners: each record to its 2 owners on ring [0-9a-f]{12} \(5 nodes\); smallest span 60s \(the nodes' base_rollup\)/);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({
      status: 'done',
      to: 'owners',
      ring: { write_copies: 2, node_count: 5 },
      smallest_span: { seconds: 60, from: 'nodes' },
      read: 120,
      written: 120,
      written_to_some: 0,
      rejected: 0,
    });
    // Per node, what it was sent is what it acknowledged, and the copies add up to 2 per record.
    expect(doc.nodes.map((n: { node: string }) => n.node)).toEqual(urls);
    expect(doc.nodes.reduce((a: number, n: { records: number }) => a + n.records, 0)).toBe(240);
    // ...and each owner counts none of them misdirected (the node once counted after its store had
    // rewritten the records' series slots, and called every record misdirected).
    expect(doc.nodes.map((n: { misdirected: number }) => n.misdirected)).toEqual(urls.map(() => 0));
    expect(r.stderr).not.toContain('misdirected');
    // Bytes on the wire: each record's text once per owner, a comma or bracket each, one more bracket per request.
    const sum = (k: string): number => doc.nodes.reduce((a: number, n: Record<string, number>) => a + n[k]!, 0);
    expect(sum('bytes_sent')).toBe(2 * statSync(path).size + sum('batches'));
    for (const [id, metric] of pairs) {
      const own = owners(id, metric);
      const held = await Promise.all(urls.map((u) => heldOn(u, id, metric, 10)));
      expect(held, `${id}-${metric}`).toEqual(urls.map((_, k) => (own.includes(k) ? 10 : 0)));
    }
  });

  it('follows the ring from a list too, also to ring nodes the list does not name', async () => {
    const { path, pairs } = recordsFile('partial-list.ndjson', 'b.', 3);
    const r = await runCli(['write', '--to', 'owners', path, '--nodes', `${urls[0]},${urls[4]}`, '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`ring nodes the list does not name are written at their ring address: ${urls[1]}, ${urls[2]}, ${urls[3]}`);
    expect(JSON.parse(r.stdout)).toMatchObject({ to: 'owners', written: 36, written_to_some: 0 });
    for (const [id, metric] of pairs) {
      const own = owners(id, metric);
      expect(await Promise.all(urls.map((u) => heldOn(u, id, metric, 3)))).toEqual(urls.map((_, k) => (own.includes(k) ? 3 : 0)));
    }
  });

  it('--dry-run counts what each owner would get and sends nothing', async () => {
    const { path, pairs } = recordsFile('dry.ndjson', 'dry.', 4);
    const r = await runCli(['write', '--to', 'owners', path, '--seed', urls[0]!, '--dry-run', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    const expected = urls.map((_, k) => pairs.filter(([id, m]) => owners(id, m).includes(k)).length * 4);
    expect(JSON.parse(r.stdout).nodes.map((n: { records: number }) => n.records)).toEqual(expected);
    for (const u of urls) expect(await heldOn(u, pairs[0]![0], pairs[0]![1], 4)).toBe(0);
  });

  it('an owner down mid-write: its records go to the rejects file naming it; a replay once it is back completes', async () => {
    const victim = 3;
    const { path, pairs } = recordsFile('down.ndjson', 'c.', 100);
    const rejectsPath = `${path}.rejects.ndjson`;
    const statePath = `${path}.tsnode-state.json`;
    // Slow enough (1,200 records at 300/s, 4 s) that the node dies with most of the run still to come,
    // also when a loaded machine keeps this test from noticing the first acknowledgement for a while.
    const run = startCli(['write', '--to', 'owners', path, '--seed', urls[0]!, '--batch-size', '24', '--concurrency', '1', '--rate', '300', '--retries', '1', '--output', 'json']);
    await run.waitForStderr(/--to owners/);
    await expect.poll(() => existsSync(statePath), { timeout: 15_000 }).toBe(true);
    await stop(victim);
    const r = await run.done;
    expect(r.code, r.stderr).toBe(3);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ status: 'done', to: 'owners', read: 1200, refused: 0, invalid: 0 });
    expect(doc.written + doc.written_to_some).toBe(1200);
    expect(doc.written_to_some).toBeGreaterThan(0);
    expect(r.stderr).toContain(`${urls[victim]} is failing`);

    const lines = readFileSync(rejectsPath, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l));
    expect(lines).toHaveLength(doc.written_to_some);
    for (const l of lines) {
      // Named: the node (its URL) and the ring node the copy is owed to; owned by it; nothing else failed.
      expect(l).toMatchObject({ file: path, node: urls[victim], owner: topology.nodes[victim]!.id });
      expect(l.error).toMatch(/^not written: /);
      expect(owners(l.input.id, l.input.metric)).toContain(victim);
    }
    const victimPairs = pairs.filter(([id, m]) => owners(id, m).includes(victim));
    expect(victimPairs.length).toBeGreaterThan(0);

    await revive(victim);
    const replay = await runCli(['write', '--to', 'owners', rejectsPath, '--seed', urls[0]!, '--output', 'json']);
    expect(replay.code, replay.stderr).toBe(0);
    expect(JSON.parse(replay.stdout)).toMatchObject({ to: 'owners', read: lines.length, written: lines.length, to_named_owner: lines.length, rejected: 0 });
    // Sent to the node each line names, and nowhere else.
    const perNode = JSON.parse(replay.stdout).nodes.map((n: { records: number }) => n.records);
    expect(perNode).toEqual(urls.map((_, k) => (k === victim ? lines.length : 0)));
    // Now every owner holds every record, and no other node any.
    for (const [id, metric] of pairs) {
      const own = owners(id, metric);
      expect(await Promise.all(urls.map((u) => heldOn(u, id, metric, 100))), `${id}-${metric}`).toEqual(urls.map((_, k) => (own.includes(k) ? 100 : 0)));
    }
  }, 60_000);
});

describe('text and histogram records on the ring', () => {
  it('go to the owners of their <uuid>-<metric> key, as numeric records do, and are read back from them', async () => {
    const pairs: Array<[string, string]> = IDS.flatMap((id) => METRICS.map((m): [string, string] => [id, `t.${m}`]));
    const text = join(root, 'ring-text.ndjson');
    writeFileSync(text, pairs.map(([id, metric], k) => JSON.stringify({ metric, id, offset: String(1_700_000_000 + k), value: `v${k}` })).join('\n') + '\n');
    const w = await runCli(['write', '--to', 'owners', text, '--kind', 'text', '--seed', urls[0]!, '--output', 'json']);
    expect(w.code, w.stderr).toBe(0);
    expect(JSON.parse(w.stdout)).toMatchObject({ kind: 'text', to: 'owners', written: pairs.length, written_to_some: 0 });
    const range = { startMs: 1_699_999_000_000, endMs: 1_700_001_000_000 };
    for (const [k, [id, metric]] of pairs.entries()) {
      const own = owners(id, metric);
      const held = await Promise.all(urls.map(async (u) => (await new NodeClient(u, { dispatcher }).readText({ uuid: id, metric, ...range })).length));
      expect(held, `${id}-${metric}`).toEqual(urls.map((_, j) => (own.includes(j) ? 1 : 0)));
      if (k > 2) continue;
      // Read from the owners (primary first): the value, from a seed that need not own it.
      const r = await runCli(['read', id, metric, '--kind', 'text', '--seed', urls[4]!, '--start', '1699999000', '--end', '1700001000', '--output', 'json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`${urls[own[0]!]} (primary)`);
      expect(JSON.parse(r.stdout)).toMatchObject({ kind: 'text', node: urls[own[0]!], rows: [{ time: 1_700_000_000 + k, value: `v${k}` }] });
    }

    const [hid, hmetric] = pairs[5]!;
    const hist = join(root, 'ring-hist.ndjson');
    writeFileSync(hist, `${JSON.stringify({ metric: hmetric, id: hid, offset: 1_700_000_040, period: 60, histogram: 'AAEX/QAB' })}\n`);
    const h = await runCli(['write', '--to', 'owners', hist, '--kind', 'histogram', '--seed', urls[1]!, '--output', 'json']);
    expect(h.code, h.stderr).toBe(0);
    expect(JSON.parse(h.stdout).nodes.map((n: { records: number }) => n.records)).toEqual(urls.map((_, j) => (owners(hid, hmetric).includes(j) ? 1 : 0)));
    const hr = await runCli([
      'read',
      hid,
      hmetric,
      '--kind',
      'histogram',
      '--period',
      '60',
      '--seed',
      urls[1]!,
      '--start',
      '1700000000',
      '--end',
      '1700000100',
      '--output',
      'json',
    ]);
    expect(hr.code, hr.stderr).toBe(0);
    expect(JSON.parse(hr.stdout).rows).toEqual([{ time: 1_700_000_040, time_iso: '2023-11-14T22:14:00Z', period: 60, count: 1, bins: { '+23e-004': 1 } }]);
  });
});

describe('write --to owners: interrupted and resumed', () => {
  it('Ctrl-C drops what the queues hold unacknowledged; --resume sends the rest to the owners, none lost or misplaced', async () => {
    const { path, pairs } = recordsFile('resume.ndjson', 'r.', 60);
    const statePath = `${path}.tsnode-state.json`;
    const run = startCli(['write', '--to', 'owners', path, '--seed', urls[1]!, '--batch-size', '30', '--rate', '400', '--output', 'json']);
    await expect.poll(() => existsSync(statePath), { timeout: 15_000 }).toBe(true);
    run.child.kill('SIGINT');
    const r = await run.done;
    expect(r.code, r.stderr).toBe(130);
    const first = JSON.parse(r.stdout);
    expect(first).toMatchObject({ status: 'interrupted', to: 'owners' });
    expect(first.read).toBeLessThan(720);
    const saved = JSON.parse(readFileSync(statePath, 'utf8')).inputs[path];
    expect(saved.record).toBeGreaterThan(0);
    expect(saved.record).toBeLessThan(720);

    const resumed = await runCli(['write', '--to', 'owners', path, '--seed', urls[1]!, '--batch-size', '30', '--resume', '--output', 'json']);
    expect(resumed.code, resumed.stderr).toBe(0);
    expect(JSON.parse(resumed.stdout)).toMatchObject({ status: 'done', to: 'owners', read: 720 - saved.record, written_to_some: 0, rejected: 0 });
    for (const [id, metric] of pairs) {
      const own = owners(id, metric);
      expect(await Promise.all(urls.map((u) => heldOn(u, id, metric, 60))), `${id}-${metric}`).toEqual(urls.map((_, k) => (own.includes(k) ? 60 : 0)));
    }
  }, 60_000);
});

describe('read from the owners', () => {
  const id = IDS[0]!;
  const metric = 'read.cpu';
  const range = ['--start', '0', '--end', '600', '--span', '60s'];

  it('reads the primary; with it down, the second owner; with both down, fails rather than ask a non-owner', async () => {
    const [primary, second] = owners(id, metric) as [number, number];
    const others = [0, 1, 2, 3, 4].filter((k) => k !== primary && k !== second);
    const owned = join(root, 'read-owned.ndjson');
    writeFileSync(owned, Array.from({ length: 10 }, (_, i) => JSON.stringify({ metric, id, offset: 60 * i, count: 1, value: 7 })).join('\n') + '\n');
    expect((await runCli(['write', '--to', 'owners', owned, '--seed', urls[others[0]!]!])).code).toBe(0);
    // A non-owner holding other values: a read that reached it would show 999.
    const stray = join(root, 'read-stray.ndjson');
    writeFileSync(stray, Array.from({ length: 10 }, (_, i) => JSON.stringify({ metric, id, offset: 60 * i, count: 1, value: 999 })).join('\n') + '\n');
    expect((await runCli(['write', stray, '--node', urls[others[0]!]!, '--to', 'any'])).code).toBe(0);

    const seed = urls[others[1]!]!;
    const first = await runCli(['read', id, metric, ...range, '--seed', seed, '--output', 'json']);
    expect(first.code, first.stderr).toBe(0);
    expect(first.stderr).toContain(`owners of ${id}-${metric} on ring`);
    expect(first.stderr).toContain(`${urls[primary]} (primary), ${urls[second]}`);
    expect(first.stderr).toContain(`node ${urls[primary]}`);
    expect(JSON.parse(first.stdout).rows.map((row: { value: number }) => row.value)).toEqual(Array(10).fill(7));

    const cmp = await runCli(['read', id, metric, ...range, '--seed', seed, '--compare', '--output', 'json']);
    expect(cmp.code, cmp.stderr).toBe(0);
    expect(JSON.parse(cmp.stdout).nodes.map((n: { node: string }) => n.node)).toEqual([urls[primary], urls[second]]);

    await stop(primary);
    const failover = await runCli(['read', id, metric, ...range, '--seed', seed, '--retries', '0', '--output', 'json']);
    expect(failover.code, failover.stderr).toBe(0);
    expect(failover.stderr).toContain(`trying the next owner, ${urls[second]}`);
    expect(failover.stderr).toContain(`node ${urls[second]}`);
    expect(JSON.parse(failover.stdout).rows.map((row: { value: number }) => row.value)).toEqual(Array(10).fill(7));

    await stop(second);
    const none = await runCli(['read', id, metric, ...range, '--seed', seed, '--retries', '0', '--output', 'json']);
    expect(none.code).toBe(1);
    expect(none.stdout).toBe('');
    for (const k of others) expect(none.stderr).not.toContain(`node ${urls[k]}`);
    await revive(primary);
    await revive(second);
  }, 60_000);
});

describe('checks before anything is sent', () => {
  it('--to owners against nodes without a topology is a usage error naming why', async () => {
    const plain = await startNode({ memory: true });
    const f = join(root, 'plain.ndjson');
    writeFileSync(f, `${JSON.stringify({ metric: 'p', id: IDS[0], offset: 0, count: 1, value: 1 })}\n`);
    const r = await runCli(['write', f, '--node', plain.url, '--to', 'owners']);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/error: --to owners: the node runs no topology .*\(nothing was sent\)/);
    expect(await heldOn(plain.url, IDS[0]!, 'p', 1)).toBe(0);
    await plain.stop();
  });

  it('nodes that disagree on their smallest span are refused (exit 2, nothing sent); --smallest-span decides instead', async () => {
    const a = await startNode({ memory: true, rollups: [60, 300] });
    const b = await startNode({ memory: true, rollups: [300, 1800] });
    const f = join(root, 'spans.ndjson');
    writeFileSync(f, `${JSON.stringify({ metric: 's', id: IDS[0], offset: 600, count: 1, value: 1 })}\n`);
    const r = await runCli(['write', f, '--nodes', `${a.url},${b.url}`, '--to', 'all']);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain(`the nodes disagree on their smallest span (base_rollup): 60s on ${a.url}; 300s on ${b.url} (nothing was sent)`);
    expect(await heldOn(a.url, IDS[0]!, 's', 20)).toBe(0);
    const chosen = await runCli(['write', f, '--nodes', `${a.url},${b.url}`, '--to', 'all', '--smallest-span', '300']);
    expect(chosen.code, chosen.stderr).toBe(0);
    expect(await heldOn(a.url, IDS[0]!, 's', 20)).toBe(1);
    // One node reporting 300: its span is taken, and an offset off it is rejected here, before sending.
    const off = join(root, 'off.ndjson');
    writeFileSync(
      off,
      `${JSON.stringify({ metric: 'o', id: IDS[0], offset: 60, count: 1, value: 1 })}\n${JSON.stringify({ metric: 'o', id: IDS[0], offset: 300, count: 1, value: 1 })}\n`,
    );
    const one = await runCli(['write', off, '--node', b.url, '--output', 'json']);
    expect(one.code).toBe(3);
    expect(JSON.parse(one.stdout)).toMatchObject({ smallest_span: { seconds: 300, from: 'nodes' }, invalid: 1 });
    await a.stop();
    await b.stop();
  });
});
