import { randomUUID } from 'node:crypto';
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Ring, topologyFromXml, topologyHash, type Topology } from '../../src/ring/index.js';
import { NODE_ID_FILE } from '../../src/server/identity.js';
import { StartError, startServer, type RunningNode } from '../../src/server/server.js';
import { call, memoryNode } from './server-helpers.js';

const IDS = [randomUUID(), randomUUID(), randomUUID()];
const NOW = 1_800_000_000_123;

function topologyOf(ids: readonly string[], copies = 2): Topology {
  return { writeCopies: copies, nodes: ids.map((id, i) => ({ id, address: '127.0.0.1', port: 20_000 + i, apiport: 20_000 + i, weight: 16 + i })) };
}

let ringNode: RunningNode;
let lone: RunningNode;
const topology = topologyOf(IDS);
const hash = topologyHash(topology);

beforeAll(async () => {
  ringNode = await memoryNode({ nodeId: IDS[1]!, topology, rollups: [60, 300, 3600], histogramRollups: [60, 600], now: () => NOW });
  lone = await memoryNode();
});
afterAll(async () => {
  await ringNode.close();
  await lone.close();
});

describe('GET /state', () => {
  it('reports identity, topology hashes, spans, features and version with the types the production client decodes', async () => {
    const r = await call(ringNode.url, 'GET', '/state');
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^application\/json/);
    expect(r.json).toMatchObject({
      identity: IDS[1],
      current: hash,
      next: '-',
      base_rollup: 60,
      rollups: [60, 300, 3600],
      nnt: { rollups: [60, 300, 3600] },
      histogram: { rollups: [60, 600] },
      application: 'tsnode',
    });
    expect(r.json.version).toMatch(/^tsnode \d+\.\d+\.\d+/);
    // gosnowth decodes features as map[string]string: every value must be a string.
    expect(Object.values(r.json.features).every((v) => v === '1')).toBe(true);
    expect(r.json.features).toHaveProperty(['nnt:store'], '1');
  });

  it('says "-" for the topology of a node started without one, and has a fresh identity', async () => {
    const r = await call(lone.url, 'GET', '/state');
    expect(r.json.current).toBe('-');
    expect(r.json.next).toBe('-');
    expect(r.json.identity).toMatch(/^[0-9a-f-]{36}$/);
    expect(lone.identity.origin).toBe('memory');
  });

  it('is GET only', async () => {
    const r = await call(ringNode.url, 'POST', '/state');
    expect(r.status).toBe(405);
    expect(r.headers.allow).toBe('GET');
  });
});

describe('GET /stats.json', () => {
  it('is a libmtev tree with the leaves gosnowth reads (identity, semver, topology.current, topology.next)', async () => {
    const r = await call(ringNode.url, 'GET', '/stats.json');
    expect(r.status).toBe(200);
    expect(r.json.identity).toEqual({ _type: 's', _value: IDS[1] });
    expect(r.json.semver._type).toBe('s');
    expect(r.json.semver._value).toMatch(/^\d+\.\d+\.\d+/);
    expect(r.json.topology).toEqual({ current: { _type: 's', _value: hash }, next: { _type: 's', _value: '-' } });
    expect(r.json.application).toEqual({ _type: 's', _value: 'tsnode' });
  });
});

describe('GET /topology/json|xml/<hash>', () => {
  it('answers the node objects with n = write_copies for the current hash', async () => {
    const r = await call(ringNode.url, 'GET', `/topology/json/${hash}`);
    expect(r.status).toBe(200);
    expect(r.json).toEqual(topology.nodes.map((n) => ({ ...n, n: 2 })));
    // The hash is matched without regard to case.
    expect((await call(ringNode.url, 'GET', `/topology/json/${hash.toUpperCase()}`)).status).toBe(200);
  });

  it("answers the store's XML, which hashes back to the announced hash", async () => {
    const r = await call(ringNode.url, 'GET', `/topology/xml/${hash}`);
    expect(r.status).toBe(200);
    expect(r.headers['content-type']).toMatch(/^text\/xml/);
    expect(r.text).toMatch(/^<nodes n="2" write_copies="2">/);
    const t = topologyFromXml(r.text);
    expect(topologyHash(t)).toBe(hash);
    expect(t).toEqual(topology);
    // Without a hash: the current topology (what older clients ask for).
    expect((await call(ringNode.url, 'GET', '/topology/xml')).text).toBe(r.text);
  });

  it('is a 404 JSON error naming the current hash for any other hash', async () => {
    for (const form of ['json', 'xml']) {
      const r = await call(ringNode.url, 'GET', `/topology/${form}/${'0'.repeat(64)}`);
      expect(r.status).toBe(404);
      expect(r.json).toMatchObject({ code: 'not_found', current: hash });
      expect(r.json.error).toContain(hash);
    }
  });

  it('is a 404 JSON error saying why on a node without a topology', async () => {
    const r = await call(lone.url, 'GET', `/topology/xml/${hash}`);
    expect(r.status).toBe(404);
    expect(r.json.code).toBe('not_found');
    expect(r.json.error).toMatch(/without a topology/);
    expect(r.json.current).toBe('-');
  });
});

describe('GET /gossip/json', () => {
  it('lists the node itself with string times, as the store and gosnowth have them, then every peer', async () => {
    const r = await call(ringNode.url, 'GET', '/gossip/json');
    expect(r.status).toBe(200);
    const peers = topology.nodes.map((n) => n.id).filter((id) => id !== IDS[1]);
    const latency = Object.fromEntries(peers.map((id) => [id, '0']));
    expect(r.json[0]).toEqual({ id: IDS[1], gossip_time: (NOW / 1000).toFixed(6), gossip_age: '0.000000', topo_current: hash, topo_next: '-', topo_state: 'n/a', latency });
    // Peers this node never heard from (none runs here): gossip_time 0, their age the whole epoch.
    expect(r.json.slice(1).map((e: { id: string }) => e.id)).toEqual(peers);
    expect(r.json[1]).toMatchObject({ gossip_time: '0.000000', gossip_age: (NOW / 1000).toFixed(6) });
  });
});

describe('GET /locate/json/<uuid>/<metric>', () => {
  const ring = Ring.compile(topology);

  it('answers the owners, primary first, as the ring places them', async () => {
    for (let k = 0; k < 20; k++) {
      const uuid = randomUUID();
      const metric = `cpu/${k}|ST[host:a b]`;
      const r = await call(ringNode.url, 'GET', `/locate/json/${uuid.toUpperCase()}/${encodeURIComponent(metric)}`);
      expect(r.status).toBe(200);
      expect(r.json.key).toBe(`${uuid}-${metric}`);
      expect(r.json.location.map((n: { id: string }) => n.id)).toEqual(ring.ownersOf(uuid, metric).map((n) => n.id));
      expect(r.json.location[0]).toMatchObject({ address: '127.0.0.1', n: 2 });
    }
  });

  it('refuses a bad UUID (400) and answers 404 without a topology', async () => {
    const bad = await call(ringNode.url, 'GET', '/locate/json/not-a-uuid/cpu');
    expect(bad.status).toBe(400);
    expect(bad.json.code).toBe('invalid_uuid');
    const none = await call(lone.url, 'GET', `/locate/json/${IDS[0]}/cpu`);
    expect(none.status).toBe(404);
    expect(none.json.error).toMatch(/without a topology/);
  });
});

describe('identity', () => {
  const dirs: string[] = [];
  afterAll(() => dirs.forEach((d) => rmSync(d, { recursive: true, force: true })));
  const fresh = (): string => {
    const d = mkdtempSync(join(tmpdir(), 'tsnode-identity-'));
    dirs.push(d);
    return d;
  };

  it('is generated once and kept in the data dir', async () => {
    const dir = fresh();
    const a = await startServer({ dataDir: dir });
    const id = a.identity.id;
    expect(a.identity.origin).toBe('new');
    await a.close();
    expect(readFileSync(join(dir, NODE_ID_FILE), 'utf8').trim()).toBe(id);
    const b = await startServer({ dataDir: dir });
    expect(b.identity).toMatchObject({ id, origin: 'data dir' });
    await b.close();
  });

  it("takes --node-id for a new dir, and refuses one that names another node than the dir's", async () => {
    const dir = fresh();
    const a = await startServer({ dataDir: dir, nodeId: IDS[0]! });
    expect(a.identity).toMatchObject({ id: IDS[0], origin: 'flag' });
    await a.close();
    const err = await startServer({ dataDir: dir, nodeId: IDS[2]! }).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(StartError);
    expect((err as StartError).code).toBe('identity_mismatch');
    expect((err as Error).message).toContain(IDS[0]);
  });

  it("must be one of the topology's nodes", async () => {
    const err = await memoryNode({ nodeId: randomUUID(), topology }).catch((e: unknown) => e);
    expect((err as StartError).code).toBe('not_in_topology');
    const dir = fresh();
    const err2 = await startServer({ dataDir: dir, topology, topologySource: 'ring.json' }).catch((e: unknown) => e);
    expect((err2 as StartError).code).toBe('not_in_topology');
    expect((err2 as Error).message).toMatch(/ring\.json.*--node-id|--node-id.*ring\.json/);
    // A refused start writes no identity: the next start with the right --node-id takes the dir.
    expect(existsSync(join(dir, NODE_ID_FILE))).toBe(false);
    const ok = await startServer({ dataDir: dir, topology, nodeId: IDS[2]! });
    expect(ok.identity).toMatchObject({ id: IDS[2], current: hash });
    await ok.close();
  });
});
