/**
 * Reading a node's shard inventories in the store's documented shapes. A stub node plays the
 * production store here: the reference node answers in one spelling, the store's two documents
 * in two (`block_ceiling` in the API page, `block:ceiling` in the OpenAPI spec), and a store of
 * 0.19.23 or later has no sweep API at all.
 */
import { afterAll, describe, expect, it } from 'vitest';
import { Agent } from 'undici';
import { fetchRetentionFacts, gatherRetentionFacts } from '../../src/client/inventory.js';
import { NodeClient } from '../../src/client/node-client.js';
import { NO_RETRY } from '../../src/client/retry.js';
import { answerEndlessly, startStubNode, type StubNode } from '../helpers/stub-node.js';

const agent = new Agent();
const stubs: StubNode[] = [];
afterAll(async () => {
  await Promise.all(stubs.map((s) => s.close()));
  await agent.close();
});

/** The documented example answers (irondb/api/maintenance.md, administration.yaml). */
const NNT = [
  {
    period: 10,
    shard: [
      { block_floor: 1598218800, block_ceiling: 1598234040, mode: 'online' },
      { block_floor: 1598234040, 'block:ceiling': 1598249280, mode: 'online' },
    ],
  },
  { period: 60, shard: [{ block_floor: 1598188320, block_ceiling: 1598279760, mode: 'offline' }] },
];
const RAW = [{ start: 1625097600, end: 1625702400 }];

async function store(answers: Record<string, unknown>, opts: { sweep?: boolean } = {}): Promise<StubNode> {
  const s = await startStubNode({
    answer: (req, res) => {
      const path = (req.url ?? '').split('?')[0]!;
      if (path === '/sweep_delete' && opts.sweep === false) {
        res.writeHead(404).end();
        return true;
      }
      if (!(path in answers)) return false;
      const a = answers[path];
      if (a === 'endless') {
        void answerEndlessly(res, '[{"start":1,"end":2},');
        return true;
      }
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify(a));
      return true;
    },
  });
  stubs.push(s);
  return s;
}

const STATE = {
  identity: 'a6b4d5e2-0000-4000-8000-000000000001',
  histogram: { rollups: [60] },
  nntbs: { rollups: [10, 60], rollup_60: { fs: { id: 'fs0', totalMB: 1000, freeMB: 420.5 } }, rollup_10: { fs: 'not reported' } },
  retention: { nnt: { '60': 2592000 }, histogram: {}, raw: null },
};

describe('fetchRetentionFacts', () => {
  it('reads the store shapes, both spellings of the shard end, the fs and the configured retention', async () => {
    const s = await store(
      { '/state': STATE, '/list_nntbs_shards': NNT, '/raw/list_shards': RAW, '/histogram_raw/list_shards': [], '/histogram/60/list_shards': RAW },
      { sweep: false },
    );
    const f = await fetchRetentionFacts(new NodeClient(s.url, { dispatcher: agent }), { histogramPeriods: [300] });
    expect(f.problem).toBeUndefined();
    expect(f.managedBy).toBe('node');
    const nnt = f.inventory!.nnt;
    expect('byPeriod' in nnt && [...nnt.byPeriod.entries()]).toEqual([
      [
        10,
        [
          { start: 1598218800, end: 1598234040 },
          { start: 1598234040, end: 1598249280 },
        ],
      ],
      [60, [{ start: 1598188320, end: 1598279760 }]],
    ]);
    expect(f.inventory!.raw).toEqual({ shards: RAW });
    expect(f.inventory!.histogram.get(60)).toEqual({ shards: RAW });
    // A period the node does not have: said so, not an empty list.
    expect(f.inventory!.histogram.get(300)).toEqual({ problem: expect.stringMatching(/GET \/histogram\/300\/list_shards answered 404/) });
    expect([...f.fs.entries()]).toEqual([[60, { id: 'fs0', totalMB: 1000, freeMB: 420.5 }]]);
    expect(f.retention).toEqual({ nnt: { '60': 2592000 }, histogram: {}, raw: null });
    // The inventories are asked for as JSON (the store's default is FlatBuffers).
    expect(s.requests.find((r) => r.path === '/list_nntbs_shards')!.headers.accept).toBe('application/json');
  });

  it('a sweep-era node without inventories: every list names its 404', async () => {
    const s = await store({ '/state': { identity: 'x' } });
    const f = await fetchRetentionFacts(new NodeClient(s.url, { dispatcher: agent }));
    expect(f.managedBy).toBe('sweep');
    expect(f.inventory!.nnt).toEqual({ problem: expect.stringMatching(/list_nntbs_shards answered 404/) });
    expect(f.inventory!.raw).toEqual({ problem: expect.stringMatching(/raw\/list_shards answered 404/) });
    expect(f.retention).toBeNull();
  });

  it('an endless inventory is cut off at its cap and named, not read into memory', async () => {
    const s = await store({ '/state': { identity: 'x' }, '/list_nntbs_shards': [], '/raw/list_shards': 'endless' });
    const f = await fetchRetentionFacts(new NodeClient(s.url, { dispatcher: agent }));
    expect(f.inventory!.raw).toEqual({ problem: expect.stringMatching(/raw\/list_shards.*(larger|too large|bytes)/i) });
  });

  it('a malformed list is a bad answer naming the expected shape', async () => {
    const s = await store({ '/state': { identity: 'x' }, '/list_nntbs_shards': [{ period: 60, shard: [{ block_floor: 1 }] }] });
    const f = await fetchRetentionFacts(new NodeClient(s.url, { dispatcher: agent }));
    expect(f.inventory!.nnt).toEqual({ problem: expect.stringMatching(/block_ceiling/) });
  });

  it('an unreachable node is a problem on its own, the others are read', async () => {
    const s = await store({ '/state': { identity: 'x' }, '/list_nntbs_shards': [] });
    const dead = new NodeClient('http://127.0.0.1:1', { dispatcher: agent, retry: NO_RETRY });
    const facts = await gatherRetentionFacts([dead, new NodeClient(s.url, { dispatcher: agent })]);
    expect(facts[0]!.problem).toBeDefined();
    expect(facts[0]!.inventory).toBeNull();
    expect(facts[1]!.problem).toBeUndefined();
  });
});
