import { describe, expect, it } from 'vitest';
import { checkCoverage, type ListedNode } from '../../src/client/coverage.js';
import { selfFromState, selfFromStats, type NodeSelf } from '../../src/client/discovery.js';
import { checkSpans, smallestSpan } from '../../src/client/spans.js';
import { nodeStateSchema, nodeStatsSchema } from '../../src/protocol/schemas.js';
import { topologyHash, type Topology } from '../../src/ring/index.js';

const IDS = ['1f846f26-0cfd-4df5-b4f1-e0930604e577', '765ac4cc-1929-4642-9ef1-d194d08f9538', '8c2fc7b8-c569-402d-a393-db433fb267aa'];
const TOPOLOGY: Topology = { writeCopies: 2, nodes: IDS.map((id, i) => ({ id, address: '10.0.0.1', port: 8112 + i, apiport: 8112 + i, weight: 32 })) };
const HASH = topologyHash(TOPOLOGY);
const url = (i: number): string => `http://10.0.0.1:${8112 + i}`;

function self(i: number, over: Partial<NodeSelf> = {}): NodeSelf {
  return { url: url(i), identity: IDS[i]!, current: HASH, next: null, version: 'x', baseRollup: 60, nntRollups: [60, 300], histogramRollups: [60], via: 'state', ...over };
}

describe('reading what a node says about itself', () => {
  it("reads gosnowth's /state test document", () => {
    // From gosnowth state_test.go (stateTestData), trimmed to the members tsnode reads plus some it ignores.
    const wire = nodeStateSchema.parse({
      identity: 'bb6f7162-4828-11df-bab8-6bac200dcc2a',
      current: '294cbd39999c2270964029691e8bc5e231a867d525ccba62181dc8988ff218dc',
      next: '-',
      base_rollup: 60,
      rollups: [60, 600, 7200, 86400],
      nnt: { rollups: [60, 600, 7200, 86400], rollup_60: { 'put.calls': 0 } },
      histogram: { rollups: [60, 300, 1800, 10800, 86400] },
      'rusage.utime': 106.105692,
      features: { 'nnt:store': '1' },
      version: 'v52bcc96a9a1a41acd96352b9b63e59cba2b6a8a9/65ab82cb7281e76e96b2fedafdc6594d50437d91',
      application: 'snowth',
    });
    expect(selfFromState('http://n:8112', wire)).toEqual({
      url: 'http://n:8112',
      identity: 'bb6f7162-4828-11df-bab8-6bac200dcc2a',
      current: '294cbd39999c2270964029691e8bc5e231a867d525ccba62181dc8988ff218dc',
      next: null,
      version: 'v52bcc96a9a1a41acd96352b9b63e59cba2b6a8a9/65ab82cb7281e76e96b2fedafdc6594d50437d91',
      baseRollup: 60,
      nntRollups: [60, 600, 7200, 86400],
      histogramRollups: [60, 300, 1800, 10800, 86400],
      // gosnowth's document has no max_peer_lag: the lag is unknown, not 0.
      lagSeconds: null,
      via: 'state',
    });
  });

  it("reads gosnowth's /stats.json test document", () => {
    // From gosnowth stats_test.go (statsTestData).
    const wire = nodeStatsSchema.parse({
      application: { _type: 's', _value: 'snowth' },
      identity: { _type: 's', _value: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee' },
      version: { _type: 's', _value: 'test' },
      topology: { next: { _type: 's', _value: '-' }, current: { _type: 's', _value: 'test' } },
      semver: { _type: 's', _value: '0.1.1570000000' },
    });
    expect(selfFromStats('http://n:8112', wire)).toMatchObject({
      identity: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee',
      current: 'test',
      next: null,
      version: '0.1.1570000000',
      via: 'stats.json',
      baseRollup: null,
    });
    expect(selfFromStats('http://n:8112', nodeStatsSchema.parse({}))).toBeUndefined();
  });
});

describe('coverage', () => {
  it('is covered when every ring node is listed (matched by identity, whatever the URL spelling)', () => {
    const listed: ListedNode[] = [0, 1, 2].map((i) => ({ url: `http://node${i}.example:8112`, self: self(i) }));
    const r = checkCoverage(listed, TOPOLOGY);
    expect(r).toMatchObject({ verdict: 'covered', hash: HASH, missing: [], notInRing: [], unknown: [], problems: [] });
  });

  it('names the ring nodes a list misses', () => {
    const r = checkCoverage(
      [
        { url: url(0), self: self(0) },
        { url: url(2), self: self(2) },
      ],
      TOPOLOGY,
    );
    expect(r.verdict).toBe('missing');
    expect(r.missing.map((n) => n.id)).toEqual([IDS[1]]);
    expect(r.problems.join('\n')).toContain(`${IDS[1]} (http://10.0.0.1:8113)`);
  });

  it('counts a listed node that did not answer as reaching its ring node when the address matches', () => {
    const r = checkCoverage([{ url: url(0), self: self(0) }, { url: url(1) }, { url: 'http://10.0.0.1:8114/' }], TOPOLOGY);
    expect(r.verdict).toBe('covered');
    const unknown = checkCoverage([{ url: url(0), self: self(0) }, { url: url(1) }, { url: 'http://elsewhere:1' }], TOPOLOGY);
    expect(unknown.verdict).toBe('missing');
    expect(unknown.unknown).toEqual(['http://elsewhere:1']);
    expect(unknown.missing.map((n) => n.id)).toEqual([IDS[2]]);
  });

  it('refuses to judge when the nodes disagree on the topology hash, naming who says what', () => {
    const other = 'f'.repeat(64);
    const r = checkCoverage(
      [
        { url: url(0), self: self(0) },
        { url: url(1), self: self(1, { current: other }) },
        { url: url(2), self: self(2) },
      ],
      TOPOLOGY,
    );
    expect(r.verdict).toBe('disagree');
    expect(r.hash).toBeNull();
    expect(r.hashes).toEqual([
      { hash: HASH, nodes: [url(0), url(2)] },
      { hash: other, nodes: [url(1)] },
    ]);
    expect(r.problems[0]).toMatch(/different topologies/);
  });

  it('reports a rebalance in progress (next is not "-")', () => {
    const r = checkCoverage(
      [0, 1, 2].map((i) => ({ url: url(i), self: self(i, i === 2 ? { next: 'a'.repeat(64) } : {}) })),
      TOPOLOGY,
    );
    expect(r.verdict).toBe('rebalancing');
    expect(r.rebalancing).toEqual([{ url: url(2), next: 'a'.repeat(64) }]);
  });

  it('names listed nodes that are not in the ring, and says when there is no topology to check against', () => {
    const stranger = { ...self(0), identity: 'aaaaaaaa-bbbb-cccc-dddd-eeeeeeeeeeee', url: 'http://x:1' };
    const r = checkCoverage([...[0, 1, 2].map((i) => ({ url: url(i), self: self(i) })), { url: 'http://x:1', self: stranger }], TOPOLOGY);
    expect(r.verdict).toBe('covered');
    expect(r.notInRing).toEqual(['http://x:1']);
    const plain = checkCoverage([{ url: url(0), self: self(0, { current: null }) }, { url: url(1) }], null);
    expect(plain.verdict).toBe('no_topology');
  });
});

describe('spans', () => {
  const nodes = [self(0), self(1, { nntRollups: [60, 300, 3600], histogramRollups: [60, 600] }), self(2, { nntRollups: null, histogramRollups: null, baseRollup: null })];

  it('passes spans every node has', () => {
    expect(checkSpans({ nnt: [60, 300], histogram: [60] }, nodes.slice(0, 2))).toEqual({ ok: true, unknown: [], unreported: [], problems: [] });
    expect(checkSpans({}, nodes).ok).toBe(true);
  });

  it('names each node lacking a requested span, with what it has', () => {
    const r = checkSpans({ nnt: [3600], histogram: [600] }, nodes.slice(0, 2));
    expect(r.ok).toBe(false);
    expect(r.unknown).toEqual([
      { url: url(0), kind: 'nnt', span: 3600, configured: [60, 300] },
      { url: url(0), kind: 'histogram', span: 600, configured: [60] },
    ]);
    expect(r.problems[0]).toBe(`${url(0)} has no numeric span 3600s (it has 60, 300)`);
  });

  it('does not pass nodes that did not report their spans', () => {
    const r = checkSpans({ nnt: [60] }, nodes);
    expect(r.ok).toBe(false);
    expect(r.unreported).toEqual([url(2)]);
  });

  it('takes the smallest span from base_rollup, and detects disagreement and silence', () => {
    expect(smallestSpan(nodes.slice(0, 2))).toEqual({ kind: 'agreed', span: 60 });
    expect(smallestSpan([self(0), self(1, { baseRollup: 300 }), self(2, { baseRollup: 60 })])).toEqual({
      kind: 'disagree',
      spans: [
        { span: 60, nodes: [url(0), url(2)] },
        { span: 300, nodes: [url(1)] },
      ],
    });
    expect(smallestSpan(nodes)).toEqual({ kind: 'unreported', nodes: [url(2)] });
    expect(smallestSpan([])).toEqual({ kind: 'unreported', nodes: [] });
  });
});
