/**
 * `tsnode write --to primary` (the default on a ring) on a real three-node ring, write_copies 2,
 * whose topology names recording proxies in front of the nodes: what each proxy saw is what went
 * on the wire. Each record goes out once, to its primary owner; with the primary's node stopped,
 * its records go to the next owner and the run still exits 0; with every owner of a record down,
 * the record is in the rejects file naming the owners tried.
 */
import { mkdtempSync, readFileSync, rmSync, statSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ring, topologyFromJson, type Topology } from '../../src/ring/index.js';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes, type TestNode } from '../helpers/nodes.js';
import { startRecordingProxy, type RecordingProxy } from '../helpers/recording-proxy.js';
import { eventually, getJson } from '../helpers/ring.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-primary-test-'));
const NODE_IDS = ['a1000000-0000-4000-8000-000000000001', 'a2000000-0000-4000-8000-000000000002', 'a3000000-0000-4000-8000-000000000003'];
const IDS = ['3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', '11111111-2222-4333-8444-555555555555'];
const METRICS = ['cpu', 'mem', 'disk', 'net', 'load', 'io', 'swap', 'temp'];
let proxies: RecordingProxy[];
let nodes: TestNode[];
let topology: Topology;
let ring: Ring;
let urls: string[];

beforeAll(async () => {
  // The proxies first: the topology names them, so every write (and, on a replicating ring, every replay between nodes) passes through one.
  proxies = await Promise.all(NODE_IDS.map(() => startRecordingProxy('http://127.0.0.1:9')));
  urls = proxies.map((p) => p.url);
  const file = join(root, 'topology.json');
  const doc = {
    write_copies: 2,
    nodes: proxies.map((p, k) => {
      const port = Number(new URL(p.url).port);
      return { id: NODE_IDS[k], address: '127.0.0.1', port, apiport: port, weight: 1 };
    }),
  };
  writeFileSync(file, JSON.stringify(doc));
  topology = topologyFromJson(doc);
  ring = Ring.compile(topology);
  nodes = await Promise.all(NODE_IDS.map((id) => startNode({ args: ['--node-id', id, '--topology', file] })));
  nodes.forEach((n, k) => proxies[k]!.retarget(n.url));
}, 60_000);

afterAll(async () => {
  await stopAllNodes();
  await Promise.all(proxies.map((p) => p.close()));
  rmSync(root, { recursive: true, force: true });
});

/** The node index (topology order) of each owner of a metric, primary first. */
const owners = (id: string, metric: string): number[] => ring.ownersOf(id, metric).map((n) => topology.nodes.findIndex((t) => t.id === n.id));

function recordsFile(name: string, prefix: string, n: number): { path: string; keys: string[] } {
  const lines: string[] = [];
  const keys: string[] = [];
  for (let i = 0; i < n; i++)
    for (const id of IDS)
      for (const m of METRICS) {
        lines.push(JSON.stringify({ metric: `${prefix}${m}`, id, offset: 60 * i, count: 1, value: i }));
        keys.push(`${id}|${prefix}${m}|${60 * i}`);
      }
  const path = join(root, name);
  writeFileSync(path, `${lines.join('\n')}\n`);
  return { path, keys };
}

/** Per proxy (node), the records of the client's writes it passed on since `from[k]`, as id|metric|offset keys. */
function writtenThrough(from: number[]): string[][] {
  return proxies.map((p, k) =>
    p.exchanges
      .slice(from[k])
      .filter((ex) => ex.method === 'POST' && ex.url.startsWith('/write/nnt') && ex.headers['x-tsnode-replayed-from'] === undefined && ex.status === 200)
      .flatMap((ex) => (JSON.parse(ex.requestBody!.toString('utf8')) as Array<{ id: string; metric: string; offset: number }>).map((r) => `${r.id}|${r.metric}|${r.offset}`)),
  );
}

const marks = (): number[] => proxies.map((p) => p.exchanges.length);

/** Whether node k holds the record of `key` in its own data (read with the no-proxy header, straight from the node). */
async function holds(k: number, key: string): Promise<boolean> {
  const [id, metric, offset] = key.split('|') as [string, string, string];
  const q = `start_ts=${offset}.000&end_ts=${Number(offset) + 60}.000&rollup_span=60s&type=count`;
  const r = await getJson(`${nodes[k]!.url}/rollup/${id}/${encodeURIComponent(metric)}?${q}`, { 'X-Snowth-Proxied': '1' });
  const rows = r.body as Array<[number, number | null]>;
  return r.status === 200 && rows.some(([, v]) => v !== null);
}

/** Every record of `keys` on every one of its owners, once the ring's replication has delivered it. */
async function onEveryOwner(keys: readonly string[]): Promise<void> {
  for (const key of keys) {
    const own = owners(key.split('|')[0]!, key.split('|')[1]!);
    await eventually(`${key} on each of its owners ${own.join(', ')}`, async () => (await Promise.all(own.map((k) => holds(k, key)))).every(Boolean), 30_000);
  }
}

describe('write --to primary on a three-node ring (write_copies 2)', () => {
  it('is the default: each record once on the wire, to its primary owner', async () => {
    const { path, keys } = recordsFile('primary.ndjson', 'p.', 20);
    const from = marks();
    const r = await runCli(['write', path, '--seed', urls[1]!, '--batch-size', '50', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/--to primary: each record once, to its primary owner on ring [0-9a-f]{12} \(3 nodes, write_copies 2/);
    const doc = JSON.parse(r.stdout);
    expect(doc).toMatchObject({ status: 'done', to: 'primary', read: keys.length, written: keys.length, fallback_records: 0, fallbacks: [], rejected: 0 });
    const seen = writtenThrough(from);
    // Once on the wire: every key exactly once over all nodes, on its primary owner.
    expect(seen.flat().sort()).toEqual([...keys].sort());
    seen.forEach((got, k) => {
      for (const key of got) expect(owners(key.split('|')[0]!, key.split('|')[1]!)[0]).toBe(k);
    });
    // The summary's per-node counts are what the wire carried.
    expect(doc.nodes.map((n: { primary_records: number }) => n.primary_records)).toEqual(seen.map((s) => s.length));
    expect(doc.nodes.map((n: { fallback_records: number }) => n.fallback_records)).toEqual([0, 0, 0]);
    const sent = doc.nodes.reduce((a: number, n: { bytes_sent: number }) => a + n.bytes_sent, 0);
    const requests = doc.nodes.reduce((a: number, n: { batches: number }) => a + n.batches, 0);
    expect(sent).toBe(statSync(path).size + requests);
    // The store's replication copies each record to its other owner.
    await onEveryOwner(keys.filter((_, k) => k % 7 === 0));
  });

  it('--to owners sends each record to both owners (twice the records on the wire)', async () => {
    const { path, keys } = recordsFile('owners.ndjson', 'o.', 5);
    const from = marks();
    const r = await runCli(['write', path, '--seed', urls[0]!, '--to', 'owners', '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(writtenThrough(from).flat()).toHaveLength(2 * keys.length);
  });

  it("a profile's write_to sets the default, and says so; --to overrides it", async () => {
    const { path, keys } = recordsFile('profile.ndjson', 'w.', 2);
    const config = join(root, 'config.yaml');
    writeFileSync(config, `current: lab\nprofiles:\n  lab:\n    seed: ${urls[2]}\n    write_to: owners\n`, { mode: 0o600 });
    const env = { TSNODE_CONFIG: config };
    const from = marks();
    const r = await runCli(['write', path, '--output', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toMatch(/--to owners \(from profiles\.lab\.write_to \(.*config\.yaml:5\)\)/);
    expect(JSON.parse(r.stdout)).toMatchObject({ to: 'owners' });
    expect(writtenThrough(from).flat()).toHaveLength(2 * keys.length);
    const o = await runCli(['write', path, '--to', 'primary', '--output', 'json'], { env });
    expect(o.code, o.stderr).toBe(0);
    expect(JSON.parse(o.stdout)).toMatchObject({ to: 'primary' });
  });

  it('the primary stopped: its records go to the next owner, exit 0, nothing rejected', async () => {
    const { path, keys } = recordsFile('fallback.ndjson', 'f.', 10);
    // The node that is primary for the fewest records: its share of each small batch is small, so a
    // request to it holds slices of several batches, each moved on with its own records.
    const share = [0, 1, 2].map((k) => keys.filter((key) => owners(key.split('|')[0]!, key.split('|')[1]!)[0] === k).length);
    const victim = share.indexOf(Math.min(...share.filter((n) => n > 0)));
    const seed = urls[(victim + 1) % 3]!;
    const moved = keys.filter((k) => owners(k.split('|')[0]!, k.split('|')[1]!)[0] === victim);
    expect(moved.length).toBeGreaterThan(0);
    await nodes[victim]!.kill();
    try {
      const from = marks();
      const r = await runCli(['write', path, '--seed', seed, '--retries', '1', '--batch-size', '20', '--output', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout);
      expect(doc).toMatchObject({ status: 'done', to: 'primary', written: keys.length, rejected: 0, failed_records: 0, fallback_records: moved.length });
      expect(doc.fallbacks).toEqual([{ from: urls[victim], records: moved.length, reason: expect.any(String) }]);
      expect(doc.nodes[victim]).toMatchObject({ primary_records: 0, fallback_records: 0, handed_on: moved.length });
      const seen = writtenThrough(from);
      // Each moved record was acknowledged by its second owner, once; every record by exactly one node.
      for (const key of moved) {
        const second = owners(key.split('|')[0]!, key.split('|')[1]!)[1]!;
        expect(seen[second]!.filter((x) => x === key)).toHaveLength(1);
      }
      expect(seen.flat().sort()).toEqual([...keys].sort());
      expect(doc.nodes.reduce((a: number, n: { fallback_records: number }) => a + n.fallback_records, 0)).toBe(moved.length);

      // The table says how many went to a non-primary owner and why.
      const t = await runCli(['write', path, '--seed', seed, '--retries', '0']);
      expect(t.code, t.stderr).toBe(0);
      expect(t.stdout).toMatch(new RegExp(`\\(${moved.length} of them to a fallback owner\\)`));
      expect(t.stdout).toContain(`${moved.length} records went past ${urls[victim]} to the next owner: `);
    } finally {
      nodes[victim] = await nodes[victim]!.restart();
      proxies[victim]!.retarget(nodes[victim].url);
    }
  }, 60_000);

  it('every owner of a record down: it is in the rejects file naming the owners tried, exit 3', async () => {
    const down = [0, 1];
    const { path, keys } = recordsFile('lost.ndjson', 'l.', 2);
    const lost = keys.filter((k) => {
      const o = owners(k.split('|')[0]!, k.split('|')[1]!);
      return o.every((x) => down.includes(x));
    });
    expect(lost.length).toBeGreaterThan(0);
    for (const k of down) await nodes[k]!.kill();
    try {
      const r = await runCli(['write', path, '--seed', urls[2]!, '--retries', '0', '--output', 'json']);
      expect(r.code, r.stderr).toBe(3);
      const lines = readFileSync(`${path}.rejects.ndjson`, 'utf8')
        .trim()
        .split('\n')
        .map((l) => JSON.parse(l) as { error: string; owner?: string; input: { id: string; metric: string; offset: number } });
      expect(lines.map((l) => `${l.input.id}|${l.input.metric}|${l.input.offset}`).sort()).toEqual([...lost].sort());
      for (const l of lines) {
        const o = owners(l.input.id, l.input.metric);
        expect(l.error).toContain(`no owner took it: tried ${urls[o[0]!]} (`);
        expect(l.error).toContain(`, then ${urls[o[1]!]} (`);
        // No owner named: a replay of the line starts at the primary again.
        expect(l.owner).toBeUndefined();
      }
    } finally {
      for (const k of down) {
        nodes[k] = await nodes[k]!.restart();
        proxies[k]!.retarget(nodes[k].url);
      }
    }
  }, 60_000);
});
