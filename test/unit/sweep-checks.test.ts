import { describe, expect, it } from 'vitest';
import type { NodeSelf } from '../../src/client/discovery.js';
import { duplicateIdentities, judgeCluster, type ClusterFacts } from '../../src/client/sweep-checks.js';
import { topologyHash, type Topology } from '../../src/ring/index.js';

const IDS = ['1f846f26-0cfd-4df5-b4f1-e0930604e577', '765ac4cc-1929-4642-9ef1-d194d08f9538', '8c2fc7b8-c569-402d-a393-db433fb267aa'];
const TOPOLOGY: Topology = { writeCopies: 2, nodes: IDS.map((id, i) => ({ id, address: '10.0.0.1', port: 8112 + i, apiport: 8112 + i, weight: 32 })) };
const HASH = topologyHash(TOPOLOGY);
const url = (i: number): string => `http://10.0.0.1:${8112 + i}`;

function self(i: number, over: Partial<NodeSelf> = {}): NodeSelf {
  return { url: url(i), identity: IDS[i]!, current: HASH, next: null, version: 'x', baseRollup: 60, nntRollups: [60, 300], histogramRollups: [60], via: 'state', ...over };
}
const facts = (listed: number[], over: Partial<ClusterFacts> = {}, selfOver: (i: number) => Partial<NodeSelf> = () => ({})): ClusterFacts => ({
  nodes: listed.map((i) => ({ url: url(i), self: self(i, selfOver(i)) })),
  topology: TOPOLOGY,
  ...over,
});

describe('judgeCluster: identity, coverage and spans before a destructive run', () => {
  it('every ring node listed: covered, nothing refused', () => {
    const r = judgeCluster(facts([0, 1, 2]));
    expect(r.problems).toEqual([]);
    expect(r.coverage).toMatchObject({ verdict: 'covered', hash: HASH, missing: [], allowed: false });
    expect(r.notes).toEqual([`coverage: every node of ring ${HASH.slice(0, 12)} is listed`]);
  });

  it('a ring node missing from the list is refused, naming it; allowPartial goes ahead and keeps it in the report', () => {
    const r = judgeCluster(facts([0, 1]));
    expect(r.coverage).toMatchObject({ verdict: 'missing', missing: [{ id: IDS[2], url: url(2) }], allowed: false });
    expect(r.problems).toEqual([{ message: `1 of 3 ring nodes are not in the list: ${IDS[2]} (${url(2)})` }]);
    const ok = judgeCluster(facts([0, 1]), { allowPartial: true });
    expect(ok.problems).toEqual([]);
    expect(ok.coverage).toMatchObject({ verdict: 'missing', missing: [{ id: IDS[2], url: url(2) }], allowed: true });
    expect(ok.notes[0]).toBe(`coverage: 1 ring node not in the list: ${IDS[2]} (${url(2)}); going ahead (--allow-partial)`);
  });

  it('nodes that disagree on the topology, or a rebalance in progress, are refused unless allowPartial', () => {
    const disagree = judgeCluster(facts([0, 1, 2], {}, (i) => (i === 2 ? { current: 'f'.repeat(64) } : {})));
    expect(disagree.coverage.verdict).toBe('disagree');
    expect(disagree.problems[0]!.message).toMatch(/^the listed nodes run different topologies: /);
    const moving = judgeCluster(facts([0, 1, 2], {}, (i) => (i === 0 ? { next: 'a'.repeat(64) } : {})));
    expect(moving.coverage.verdict).toBe('rebalancing');
    expect(moving.problems[0]!.message).toBe(`${url(0)} is rebalancing to topology ${'a'.repeat(12)}: data is moving between nodes`);
    expect(
      judgeCluster(
        facts([0, 1, 2], {}, (i) => (i === 0 ? { next: 'a'.repeat(64) } : {})),
        { allowPartial: true },
      ).problems,
    ).toEqual([]);
  });

  it('nodes without a topology or without the endpoints: not checked, one line says so, nothing refused', () => {
    const plain = judgeCluster({ nodes: [0, 1].map((i) => ({ url: url(i), self: self(i, { current: null }) })), topology: null });
    expect(plain.coverage.verdict).toBe('unchecked');
    expect(plain.problems).toEqual([]);
    expect(plain.notes[0]).toBe('coverage: could not be checked: no listed node runs with a topology; the node list is taken as complete');
    const old = judgeCluster({
      nodes: [
        { url: url(0), noEndpoints: true },
        { url: url(1), error: 'connection refused' },
      ],
      topology: null,
    });
    expect(old.notes[0]).toBe('coverage: could not be checked: no listed node reports a topology (GET /state, /stats.json); the node list is taken as complete');
  });

  it('a topology a node announces but cannot serve is refused unless allowPartial', () => {
    const r = judgeCluster(facts([0, 1, 2], { topology: null, topologyError: 'x announces topology abc but it could not be read: 404' }));
    expect(r.coverage.verdict).toBe('unreadable');
    expect(r.problems).toHaveLength(1);
    expect(judgeCluster(facts([0, 1, 2], { topology: null, topologyError: 'boom' }), { allowPartial: true }).problems).toEqual([]);
  });

  it('two URLs answering with one identity are one node: refused even with allowPartial', () => {
    const f: ClusterFacts = {
      nodes: [
        { url: url(0), self: self(0) },
        { url: 'http://db1.example:8112', self: self(0, { url: 'http://db1.example:8112' }) },
        { url: url(1), self: self(1) },
        { url: url(2), self: self(2) },
      ],
      topology: TOPOLOGY,
    };
    expect(duplicateIdentities(f)).toEqual([{ identity: IDS[0], urls: [url(0), 'http://db1.example:8112'] }]);
    const r = judgeCluster(f, { allowPartial: true });
    expect(r.problems.map((p) => p.message)).toEqual([
      `${url(0)} and http://db1.example:8112 answer as the same node (identity ${IDS[0]}): it would get one DELETE per URL, each cancelling the one before; list it once`,
    ]);
  });

  it('spans a sweep names must be configured on every node that reports its spans; the others are named as unchecked', () => {
    const f: ClusterFacts = {
      nodes: [
        { url: url(0), self: self(0) },
        { url: url(1), self: self(1, { nntRollups: null, histogramRollups: null }) },
        { url: url(2), self: self(2) },
      ],
      topology: TOPOLOGY,
    };
    const r = judgeCluster(f, { spans: { nnt: [300, 1800] } });
    // one line for the span, naming both nodes that lack it (issue 25: not one line per node)
    expect(r.unknownSpans).toEqual([`nnt span 1800 is not configured on 2 of the 3 nodes (${url(0)}, ${url(2)}) (their nnt spans: 60, 300)`]);
    expect(r.problems.map((p) => p.message)).toEqual([
      `nnt span 1800 is not configured on 2 of the 3 nodes (${url(0)}, ${url(2)}) (their nnt spans: 60, 300): their DELETEs would be refused`,
    ]);
    expect(r.notes).toContain(`spans could not be checked on 1 node (they do not report them): ${url(1)}`);
    expect(judgeCluster(f, { spans: { nnt: [300] } }).problems).toEqual([]);
  });

  it("nodes that do not report their spans are checked against the target's declared ones; the nodes' own report wins", () => {
    const f: ClusterFacts = {
      nodes: [
        { url: url(0), self: self(0) },
        { url: url(1), self: self(1, { nntRollups: null }) },
        { url: url(2), noEndpoints: true },
      ],
      topology: TOPOLOGY,
    };
    const declared = { nnt: { spans: [60, 300, 1800], from: 'profiles.prod.nnt_rollups (config.yaml:5)' } };
    // 1800 is declared, but node 0 reports its own spans without it
    const r = judgeCluster(f, { spans: { nnt: [1800] }, declared });
    expect(r.problems).toEqual([{ message: `nnt span 1800 is not configured on ${url(0)} (its nnt spans: 60, 300): its DELETE would be refused` }]);
    expect(r.notes).toContain(`nnt spans checked against profiles.prod.nnt_rollups (config.yaml:5) for 2 nodes that do not report theirs`);
    // 120 is neither: refused for the two silent nodes, naming where the declaration is
    const bad = judgeCluster(f, { spans: { nnt: [120] }, declared });
    expect(bad.problems.map((p) => p.message)).toContain(
      `nnt span 120 is not among the nnt spans profiles.prod.nnt_rollups (config.yaml:5) declares (60, 300, 1800), which stand for the 2 nodes that do not report theirs: ${url(1)}, ${url(2)}; their DELETE would be refused`,
    );
    // histogram spans with nothing declared: still only a note
    const hist = judgeCluster({ nodes: [{ url: url(2), noEndpoints: true }], topology: null }, { spans: { histogram: [60] }, declared });
    expect(hist.problems).toEqual([]);
    expect(hist.notes).toContain(`spans could not be checked on 1 node (they do not report them): ${url(2)}`);
  });
});
