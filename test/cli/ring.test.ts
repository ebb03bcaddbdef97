/**
 * A real five-node ring from `tsnode cluster up --write-copies 2`: discovery from a seed, the
 * nodes and locate commands, and the production client's startup sequence replayed against it.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ring, topologyFromJson, topologyFromXml, topologyHash, type Topology } from '../../src/ring/index.js';
import type { ClusterState } from '../../src/cli/local-cluster/state.js';
import { runCli } from '../helpers/cli.js';
import { startNode, stopAllNodes } from '../helpers/nodes.js';
import { killMentioning } from '../helpers/procs.js';
import { startRecordingNode } from '../helpers/recording-node.js';

const root = mkdtempSync(join(tmpdir(), 'tsnode-ring-test-'));
const dir = join(root, 'ring');
let urls: string[];
let topology: Topology;
let hash: string;
let upStderr: string;

async function get(url: string, headers: Record<string, string> = {}): Promise<{ status: number; text: string; headers: Record<string, unknown> }> {
  const res = await request(url, { headers });
  return { status: res.statusCode, text: await res.body.text(), headers: res.headers };
}

beforeAll(async () => {
  const up = await runCli(['cluster', 'up', '--count', '5', '--write-copies', '2', '--base-port', '0', '--dir', dir, '--detach', '-o', 'json'], { timeoutMs: 60_000 });
  upStderr = up.stderr;
  expect(up.code, up.stderr).toBe(0);
  urls = (JSON.parse(up.stdout) as { nodes: Array<{ url: string }> }).nodes.map((n) => n.url);
  topology = topologyFromJson(JSON.parse(readFileSync(join(dir, 'topology.json'), 'utf8')));
  hash = topologyHash(topology);
}, 90_000);

afterAll(async () => {
  await runCli(['cluster', 'down', '--dir', dir, '--grace', '2s']);
  await stopAllNodes();
  killMentioning(root);
  rmSync(root, { recursive: true, force: true });
});

describe('cluster up --write-copies 2 on five nodes', () => {
  it('starts one ring: a topology of five nodes, each node running it under its own identity', async () => {
    expect(urls).toHaveLength(5);
    expect(topology.writeCopies).toBe(2);
    expect(topology.nodes.map((n) => `http://${n.address}:${n.apiport}`)).toEqual(urls);
    expect(upStderr).toContain(`topology ${hash}`);
    expect(upStderr).toContain(`seed: ${urls[0]}`);
    const state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
    expect(state.ring).toMatchObject({ hash, writeCopies: 2 });
    for (const [i, url] of urls.entries()) {
      const s = JSON.parse((await get(`${url}/state`)).text);
      expect(s).toMatchObject({ identity: topology.nodes[i]!.id, current: hash, next: '-' });
      expect(state.nodes[i]!.id).toBe(topology.nodes[i]!.id);
    }
  });

  it('refuses more copies than nodes before starting anything', async () => {
    const r = await runCli(['cluster', 'up', '--count', '2', '--write-copies', '3', '--dir', join(root, 'never')]);
    expect(r.code).toBe(2);
    expect(r.stderr).toContain('--write-copies: 3 copies need at least 3 nodes, and --count is 2');
    expect(r.stdout).toBe('');
  });
});

describe('--seed', () => {
  it('finds all five nodes from any one of them', async () => {
    for (const seed of [urls[0]!, urls[3]!]) {
      const r = await runCli(['nodes', '--seed', seed, '--output', 'json']);
      expect(r.code, r.stderr).toBe(0);
      expect(r.stderr).toContain(`nodes: --seed ${seed}, 5 nodes discovered (topology ${hash.slice(0, 12)}, write_copies 2)`);
      const doc = JSON.parse(r.stdout);
      expect(doc.ring).toMatchObject({ hash, write_copies: 2, node_count: 5, verified: true, next: null });
      expect(doc.nodes.map((n: { url: string }) => n.url)).toEqual(urls);
      expect(doc.nodes.map((n: { id: string }) => n.id)).toEqual(topology.nodes.map((n) => n.id));
      for (const n of doc.nodes) {
        expect(n).toMatchObject({ state: 'ok', in_ring: true, listed: true, weight: 64, topology: hash, topology_match: 'same', base_rollup: 60, error: null });
        expect(n.nnt_rollups).toEqual([60, 300, 1800, 10800, 86400]);
      }
    }
  });

  it('gives every command taking nodes the whole ring', async () => {
    const r = await runCli(['status', '--seed', urls[2]!, '--output', 'json']);
    expect(r.code, r.stderr).toBe(0);
    expect(JSON.parse(r.stdout).nodes.map((n: { node: string }) => n.node)).toEqual(urls);
  });

  it("a profile's seed: is discovered the same way (tsnode status --profile ring)", async () => {
    const home = join(root, 'home');
    const env = { HOME: home, XDG_CONFIG_HOME: join(home, '.config') };
    expect((await runCli(['profile', 'set', 'ring', '--seed', urls[3]!], { env })).code).toBe(0);
    const r = await runCli(['--profile', 'ring', 'status', '-o', 'json'], { env });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stderr).toContain(`nodes: profile ring (seed ${urls[3]}), 5 nodes discovered (topology ${hash.slice(0, 12)}, write_copies 2)`);
    expect(JSON.parse(r.stdout).nodes.map((n: { node: string }) => n.node)).toEqual(urls);
    const l = await runCli(['locate', '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f', 'cpu', '-o', 'json'], { env: { ...env, TSNODE_PROFILE: 'ring' } });
    expect(l.code, l.stderr).toBe(0);
    expect(JSON.parse(l.stdout).check.result).toBe('agrees');
  });

  it('is asked nothing when the command stops first: an unknown profile, a bad flag', async () => {
    const seed = await startRecordingNode();
    try {
      const missing = await runCli(['--profile', 'nope', 'nodes', '--seed', seed.url]);
      expect(missing.code).toBe(2);
      expect(missing.stderr).toContain('--profile: no profile named "nope"');
      const bad = await runCli(['status', '--seed', seed.url, '--watch', '1ms']);
      expect(bad.code).toBe(2);
      expect(seed.requests).toEqual([]);
    } finally {
      await seed.close();
    }
  });

  it('is refused with --nodes, and on a node without a topology (exit 2, naming why)', async () => {
    const both = await runCli(['status', '--seed', urls[0]!, '--nodes', urls[1]!]);
    expect(both.code).toBe(2);
    expect(both.stderr).toContain('--nodes and --seed both name the nodes');
    const plain = await startNode({ memory: true });
    const r = await runCli(['sweep', '--before', '90d', '--yes', '--seed', plain.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/--seed: .* runs without a topology/);
    expect(r.stdout).toBe('');
    await plain.stop();
  });
});

describe('tsnode locate', () => {
  const UUID = '3f2a9c1e-0b7d-4c55-9a0e-1d2b3c4d5e6f';

  it('agrees with /locate/json on every node, and with the ring computed here', async () => {
    const ring = Ring.compile(topology);
    for (const metric of ['cpu', 'mem|ST[host:a]', 'disk/used %']) {
      const r = await runCli(['locate', UUID, metric, '--seed', urls[1]!, '--output', 'json']);
      expect(r.code, r.stderr).toBe(0);
      const doc = JSON.parse(r.stdout);
      const owners = doc.owners.map((o: { id: string }) => o.id);
      expect(owners).toHaveLength(2);
      expect(doc.check.result).toBe('agrees');
      expect(owners).toEqual(ring.ownersOf(UUID, metric).map((n) => n.id));
      for (const url of urls) {
        const answer = JSON.parse((await get(`${url}/locate/json/${UUID}/${encodeURIComponent(metric)}`)).text);
        expect(answer.key).toBe(`${UUID}-${metric}`);
        expect(answer.location.map((l: { id: string }) => l.id)).toEqual(owners);
      }
    }
  });

  it('prints the owners as a table and CSV, primary first', async () => {
    const table = await runCli(['locate', UUID, 'cpu', '--seed', urls[0]!]);
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/copy.*id.*url/);
    const csv = await runCli(['locate', UUID, 'cpu', '--seed', urls[0]!, '--output', 'csv']);
    const lines = csv.stdout.trim().split(/\r?\n/);
    expect(lines[0]).toBe('rank,id,url,address,apiport,weight');
    expect(lines.slice(1).map((l) => l.split(',')[0])).toEqual(['1', '2']);
  });

  it('refuses a bad UUID before sending anything, and needs a ring', async () => {
    const bad = await runCli(['locate', 'nope', 'cpu', '--seed', 'http://127.0.0.1:1']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toContain('"nope" is not a UUID');
    expect(bad.stderr).not.toContain('127.0.0.1:1');
    const plain = await startNode({ memory: true });
    const r = await runCli(['locate', UUID, 'cpu', '--nodes', plain.url]);
    expect(r.code).toBe(2);
    expect(r.stderr).toMatch(/locate needs a ring topology/);
    await plain.stop();
  });
});

describe("the production client's startup sequence (gosnowth NewClient, GetTopologyInfo, FindMetric)", () => {
  // As gosnowth's do() sends every request: Connection: close, X-Snowth-Timeout (its timeout - 1s).
  const goHeaders = { 'user-agent': 'Go-http-client/1.1', connection: 'close', 'x-snowth-timeout': '9s', 'accept-encoding': 'gzip' };

  it('reads /stats.json, then /topology/xml/<hash>, compiles the ring and finds the same owners as the nodes', async () => {
    const seed = urls[4]!;
    // 1. GET /stats.json: identity, semver and topology.current are {"_value": "<string>"} leaves.
    const stats = await get(`${seed}/stats.json`, goHeaders);
    expect(stats.status).toBe(200);
    const tree = JSON.parse(stats.text);
    const leaf = (v: unknown): string | undefined =>
      typeof v === 'object' && v !== null && typeof (v as { _value?: unknown })._value === 'string' ? (v as { _value: string })._value : undefined;
    const identity = leaf(tree.identity);
    const semver = leaf(tree.semver);
    const current = leaf(tree.topology?.current);
    expect(identity).toBe(topology.nodes[4]!.id);
    expect(semver).toMatch(/^\d+\.\d+\.\d+/);
    expect(current).toBe(hash);
    // 2. GET /topology/xml/<current>: <nodes n|write_copies><node id address port apiport weight/>.
    const xml = await get(`${seed}/topology/xml/${current}`, goHeaders);
    expect(xml.status).toBe(200);
    expect(xml.text).toMatch(/^<nodes n="2" write_copies="2">/);
    expect(xml.text).not.toMatch(/^<\?xml/);
    const t = topologyFromXml(xml.text);
    // gosnowth recomputes the hash from what it decoded: it must be the one the node announced.
    expect(topologyHash(t)).toBe(current);
    // Its discovery adds every node at http://address:apiport.
    expect(t.nodes.map((n) => `http://${n.address}:${n.apiport}`)).toEqual(urls);
    // 3. isNodeActive: GET /gossip/json, the entry with the node's id, gossip_age (a string) <= 10.
    for (const [i, url] of urls.entries()) {
      const gossip = JSON.parse((await get(`${url}/gossip/json`, goHeaders)).text) as Array<Record<string, unknown>>;
      const mine = gossip.find((g) => g.id === topology.nodes[i]!.id);
      expect(mine).toBeDefined();
      expect(typeof mine!.gossip_age).toBe('string');
      expect(Number(mine!.gossip_age)).toBeLessThanOrEqual(10);
      expect(typeof mine!.gossip_time).toBe('string');
    }
    // 4. FindMetric on the compiled ring = the owners every node reports.
    const ring = Ring.compile(t);
    for (let k = 0; k < 10; k++) {
      const metric = `requests.${k}`;
      const expected = ring.ownersOf('1F846F26-0CFD-4DF5-B4F1-E0930604E577', metric).map((n) => n.id);
      const answer = JSON.parse((await get(`${urls[k % 5]}/locate/json/1f846f26-0cfd-4df5-b4f1-e0930604e577/${metric}`, goHeaders)).text);
      expect(answer.location.map((l: { id: string }) => l.id)).toEqual(expected);
    }
  });

  it('decodes /state the way gosnowth types it (features as strings, numbers as numbers)', async () => {
    const s = JSON.parse((await get(`${urls[0]}/state`, goHeaders)).text);
    expect(typeof s.base_rollup).toBe('number');
    expect(s.rollups.every((r: unknown) => typeof r === 'number')).toBe(true);
    expect(Object.values(s.features).every((v) => typeof v === 'string')).toBe(true);
    expect(typeof s.version).toBe('string');
  });
});

describe('tsnode nodes with a ring node down', () => {
  it('lists it as unreachable (exit 3), the others as they are', async () => {
    const state = JSON.parse(readFileSync(join(dir, 'cluster.json'), 'utf8')) as ClusterState;
    const victim = state.nodes[2]!;
    process.kill(victim.pid, 'SIGKILL');
    await expect.poll(async () => (await get(`${victim.url}/state`).catch(() => undefined)) === undefined, { timeout: 10_000 }).toBe(true);
    const r = await runCli(['nodes', '--seed', urls[0]!, '--retries', '0', '--output', 'json']);
    expect(r.code).toBe(3);
    const doc = JSON.parse(r.stdout);
    expect(doc.nodes.map((n: { state: string }) => n.state)).toEqual(['ok', 'ok', 'unreachable', 'ok', 'ok']);
    expect(doc.nodes[2]).toMatchObject({ id: victim.id, reachable: false, version: null });
    expect(doc.nodes[2].error).toEqual({ code: 'unreachable', message: expect.stringMatching(/refused/) });
  });
});
