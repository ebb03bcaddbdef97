import { randomUUID } from 'node:crypto';
import { Agent, MockAgent } from 'undici';
import { afterAll, afterEach, beforeAll, describe, expect, it } from 'vitest';
import { DiscoveryError, discoverRing } from '../../src/client/discovery.js';
import { NodeRequestError } from '../../src/client/errors.js';
import { NodeClient } from '../../src/client/node-client.js';
import { topologyHash, type Topology } from '../../src/ring/index.js';
import type { RunningNode } from '../../src/server/server.js';
import { memoryNode } from './server-helpers.js';

const NO_RETRY = { retries: 0, baseDelayMs: 1, maxDelayMs: 1 };

describe('discovery from a real reference node', () => {
  const ids = [randomUUID(), randomUUID(), randomUUID()];
  const topology: Topology = { writeCopies: 2, nodes: ids.map((id, i) => ({ id, address: '127.0.0.1', port: 30_000 + i, apiport: 30_000 + i, weight: 8 })) };
  let node: RunningNode;
  let plain: RunningNode;
  const agent = new Agent();
  beforeAll(async () => {
    node = await memoryNode({ nodeId: ids[0]!, topology });
    plain = await memoryNode();
  });
  afterAll(async () => {
    await node.close();
    await plain.close();
    await agent.close();
  });

  it('reads the seed, its topology (JSON) and builds node URLs from address and API port', async () => {
    const ring = await discoverRing(new NodeClient(node.url, { dispatcher: agent, retry: NO_RETRY }));
    expect(ring.seed).toMatchObject({ identity: ids[0], via: 'state', baseRollup: 60 });
    expect(ring).toMatchObject({ hash: topologyHash(topology), next: null, format: 'json', verified: true });
    expect(ring.nodes.map((n) => n.url)).toEqual(['http://127.0.0.1:30000', 'http://127.0.0.1:30001', 'http://127.0.0.1:30002']);
  });

  it('says so when the seed runs without a topology', async () => {
    const err = await discoverRing(new NodeClient(plain.url, { dispatcher: agent, retry: NO_RETRY })).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(DiscoveryError);
    expect((err as DiscoveryError).code).toBe('no_topology');
    expect((err as Error).message).toMatch(/runs without a topology/);
  });
});

// A production store as gosnowth's tests mock it: /stats.json and /topology/xml only. MockAgent,
// because a reference node always has /state and /topology/json.
const GOSNOWTH_HASH = '6c5f3aefde5c1f32d088b450fb3f0d9f33dedaaf8bed9cf5f77906f13fd65fc8';
const IDS = [
  '5c32c076-ffeb-cfdd-a541-97e25c028dd6',
  '1533fc6b-de08-6eac-eb46-d3920a1a18a3',
  '18111a24-5832-42c8-e780-bcbf88f47215',
  '4ec7bd67-f279-6f9a-fbe7-be9a0dee4c39',
  '0475df4e-ee2d-c96c-b6d7-e9d1b0239c2c',
  '9d1a34cd-b150-4c19-a894-e20280b42b62',
  '3d8ae36d-3d4d-4eda-ab53-c58538985062',
  'd2b9a8aa-9503-6cb3-dfdd-e407c1a6bee7',
  '15e35e06-4069-ecb8-c7a4-93e4c540693d',
  '8f0073e1-5d52-67da-bd59-e8017e5b5aa1',
];
const XML = `<nodes n="3">\n${IDS.map((id, i) => `<node id="${id}" address="10.128.0.${100 + i}" port="8112" apiport="8112" weight="51" side="${i % 2 ? 'b' : 'a'}"/>`).join('\n')}\n</nodes>`;
const stats = (current: string): string =>
  JSON.stringify({
    application: { _type: 's', _value: 'snowth' },
    identity: { _type: 's', _value: IDS[0] },
    version: { _type: 's', _value: 'test' },
    topology: { next: { _type: 's', _value: '-' }, current: { _type: 's', _value: current } },
    semver: { _type: 's', _value: '0.1.1570000000' },
  });

describe('discovery from a store that has only /stats.json and the XML topology', () => {
  let agents: MockAgent[] = [];
  afterEach(async () => {
    await Promise.all(agents.map((a) => a.close()));
    agents = [];
  });
  function store(origin: string, routes: Record<string, [number, string]>): NodeClient {
    const agent = new MockAgent();
    agent.disableNetConnect();
    agents.push(agent);
    const pool = agent.get(origin);
    pool
      .intercept({ path: () => true, method: 'GET' })
      .reply((opts) => {
        const [status, body] = routes[opts.path] ?? [404, JSON.stringify({ error: 'no such endpoint' })];
        return { statusCode: status, data: body };
      })
      .persist();
    return new NodeClient(origin, { dispatcher: agent, retry: NO_RETRY });
  }

  it("falls back to /stats.json and /topology/xml, checks the hash, and keeps the seed's scheme", async () => {
    const seed = store('https://10.128.0.100:8112', { '/stats.json': [200, stats(GOSNOWTH_HASH)], [`/topology/xml/${GOSNOWTH_HASH}`]: [200, XML] });
    const ring = await discoverRing(seed);
    expect(ring.seed).toMatchObject({ identity: IDS[0], via: 'stats.json', version: '0.1.1570000000', baseRollup: null });
    expect(ring).toMatchObject({ hash: GOSNOWTH_HASH, format: 'xml', verified: true });
    expect(ring.topology.writeCopies).toBe(3);
    expect(ring.nodes.map((n) => n.url)).toEqual(IDS.map((_, i) => `https://10.128.0.${100 + i}:8112`));
    expect(ring.ring.ownersOf('1f846f26-0cfd-4df5-b4f1-e0930604e577', 'test').map((n) => n.id)).toEqual([IDS[5], IDS[6], IDS[1]]);
  });

  it('flags a topology whose content does not hash to the announced hash', async () => {
    const announced = 'a'.repeat(64);
    const ring = await discoverRing(store('http://s:8112', { '/stats.json': [200, stats(announced)], [`/topology/xml/${announced}`]: [200, XML] }));
    expect(ring.verified).toBe(false);
    expect(ring.computedHash).toBe(GOSNOWTH_HASH);
  });

  it('names a seed without cluster endpoints, and one whose topology is gone', async () => {
    const none = await discoverRing(store('http://old:8112', {})).catch((e: unknown) => e);
    expect((none as DiscoveryError).code).toBe('no_cluster_endpoints');
    expect((none as Error).message).toMatch(/neither GET \/state nor GET \/stats\.json/);
    const gone = await discoverRing(store('http://s:8112', { '/stats.json': [200, stats(GOSNOWTH_HASH)] })).catch((e: unknown) => e);
    expect((gone as DiscoveryError).code).toBe('topology_unavailable');
  });

  it("reports a broken topology answer as the node's bad answer, not as a missing node", async () => {
    const err = await discoverRing(store('http://s:8112', { '/stats.json': [200, stats(GOSNOWTH_HASH)], [`/topology/json/${GOSNOWTH_HASH}`]: [200, '[{"id": "x"}]'] })).catch(
      (e: unknown) => e,
    );
    expect(err).toBeInstanceOf(NodeRequestError);
    expect((err as NodeRequestError).code).toBe('bad_answer');
    expect((err as Error).message).toMatch(/\[0\]\.id: "x" is not a node identity/);
  });
});
