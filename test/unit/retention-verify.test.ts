import { describe, expect, it } from 'vitest';
import type { NodeInventory, ShardRange } from '../../src/protocol/index.js';
import { parseRules, verifyOutcome, verifyRetention, type VerifyNodeInput } from '../../src/retention/index.js';

const DAY = 86_400;
const NOW = 1_795_321_978;
const NOW_MS = NOW * 1000 + 250;
const A = 'http://a:8112';

/** Shards of `size` seconds covering [from, to) back from NOW, aligned to `size`. */
function shards(size: number, oldestAgeS: number): ShardRange[] {
  const out: ShardRange[] = [];
  for (let s = Math.floor((NOW - oldestAgeS) / size) * size; s < NOW; s += size) out.push({ start: s, end: s + size });
  return out;
}

function inventory(nnt: Record<number, ShardRange[]>, extra: Partial<NodeInventory> = {}): NodeInventory {
  return {
    node: A,
    nnt: { byPeriod: new Map(Object.entries(nnt).map(([k, v]) => [Number(k), v])) },
    histogram: new Map(),
    raw: { shards: [] },
    histogramRaw: { shards: [] },
    ...extra,
  };
}

const sweepNode = (inv: NodeInventory): VerifyNodeInput => ({ node: A, managedBy: 'sweep', inventory: inv, retention: null });

describe('verifyRetention', () => {
  const policy = parseRules(['nnt:60=30d', 'nnt:300=1y']);

  it('is compliant when no shard lies entirely before the cut-off, naming the straddling shard', () => {
    const r = verifyRetention(policy, NOW_MS, [sweepNode(inventory({ 60: shards(DAY, 30 * DAY), 300: shards(5 * DAY, 100 * DAY) }))]);
    const c60 = r.nodes[0]!.checks.find((c) => c.span === 60)!;
    expect(c60.verdict).toBe('compliant');
    expect(c60.cutoff).toBe(NOW - 30 * DAY);
    expect(c60.oldest).toBeLessThan(c60.cutoff!); // the straddling shard starts before it
    expect(c60.reason).toMatch(/straddles the cut-off/);
    expect(c60.effectiveSeconds).toBe(NOW - c60.oldest!);
    expect(c60.excessSeconds).toBeUndefined();
    expect(verifyOutcome(r)).toBe('compliant');
  });

  it('finds over-retention: how much older and how many shards lie entirely before the cut-off', () => {
    const r = verifyRetention(policy, NOW_MS, [sweepNode(inventory({ 60: shards(DAY, 40 * DAY) }))]);
    const c = r.nodes[0]!.checks.find((x) => x.span === 60)!;
    expect(c.verdict).toBe('over_retained');
    const cutoff = NOW - 30 * DAY;
    const expected = shards(DAY, 40 * DAY).filter((s) => s.end <= cutoff).length;
    expect(c.shardsPastCutoff).toBe(expected);
    expect(expected).toBeGreaterThanOrEqual(9);
    expect(c.excessSeconds).toBe(cutoff - c.oldest!);
    expect(c.reason).toMatch(/nnt:60=30d/);
    expect(verifyOutcome(r)).toBe('not_compliant');
  });

  it('checks spans the node holds but the policy does not name as kept forever', () => {
    const r = verifyRetention(policy, NOW_MS, [sweepNode(inventory({ 60: [], 300: [], 1800: shards(10 * DAY, 5000 * DAY) }))]);
    const c = r.nodes[0]!.checks.find((x) => x.span === 1800)!;
    expect(c.verdict).toBe('compliant');
    expect(c.cutoff).toBeNull();
    expect(c.reason).toMatch(/keeps it forever/);
  });

  it("checks raw data at the type's longest age when it has a * rule", () => {
    const p = parseRules(['nnt:60=30d', 'nnt:*=1y']);
    const inv = inventory({ 60: [] }, { raw: { shards: shards(7 * DAY, 400 * DAY) } });
    const c = verifyRetention(p, NOW_MS, [sweepNode(inv)]).nodes[0]!.checks.find((x) => x.span === 'raw')!;
    expect(c.type).toBe('nnt');
    expect(c.cutoff).toBe(NOW - 365 * DAY);
    expect(c.verdict).toBe('over_retained');
  });

  it('cannot verify what the node does not list, and says why', () => {
    const inv = inventory({}, { nnt: { problem: 'GET /list_nntbs_shards answered 404' } });
    const r = verifyRetention(parseRules(['nnt:60=30d', 'text=90d']), NOW_MS, [sweepNode(inv)]);
    expect(r.nodes[0]!.checks.map((c) => [c.type, c.span, c.verdict])).toEqual([
      ['nnt', 60, 'cannot_verify'],
      ['text', null, 'cannot_verify'],
    ]);
    expect(r.nodes[0]!.checks[0]!.reason).toMatch(/404/);
    expect(r.nodes[0]!.checks[1]!.reason).toMatch(/no text shards/);
    expect(verifyOutcome(r)).toBe('unverified');
  });

  it('an unreachable node is cannot_verify on every check; with a verified node the outcome is partial', () => {
    const down: VerifyNodeInput = { node: 'http://b:8112', managedBy: null, inventory: null, retention: null, problem: 'unreachable: connection refused' };
    const r = verifyRetention(policy, NOW_MS, [sweepNode(inventory({ 60: shards(DAY, DAY), 300: [] })), down]);
    expect(r.nodes[1]!.checks.every((c) => c.verdict === 'cannot_verify' && c.reason.includes('connection refused'))).toBe(true);
    expect(verifyOutcome(r)).toBe('partial');
  });

  describe('on a node-managed node', () => {
    const managed = (inv: NodeInventory, nnt: Record<string, number> | null): VerifyNodeInput => ({
      node: A,
      managedBy: 'node',
      inventory: inv,
      retention: nnt === null ? null : { nnt, histogram: {}, raw: null },
    });

    it('is compliant when its retention equals the policy and only the straddling shard is older', () => {
      const r = verifyRetention(policy, NOW_MS, [managed(inventory({ 60: shards(DAY, 30 * DAY), 300: [] }), { 60: 30 * DAY, 300: 365 * DAY })]);
      const c = r.nodes[0]!.checks[0]!;
      expect(c.verdict).toBe('compliant');
      expect(c.managedBy).toBe('node');
      expect(c.reason).toMatch(/removes shards whole/);
    });

    it('is drift, dangerous, when its retention is shorter than the policy: the reason names both ages', () => {
      const r = verifyRetention(policy, NOW_MS, [managed(inventory({ 60: shards(DAY, 6 * DAY), 300: [] }), { 60: 6 * DAY, 300: 365 * DAY })]);
      const c = r.nodes[0]!.checks[0]!;
      expect(c.verdict).toBe('drift');
      expect(c.dangerous).toBe(true);
      expect(c.configuredSeconds).toBe(6 * DAY);
      expect(c.reason).toMatch(/6d is shorter than the policy's 30d/);
      expect(c.reason).toMatch(/dangerous/);
      expect(verifyOutcome(r)).toBe('not_compliant');
    });

    it('is drift, not dangerous, when it keeps longer', () => {
      const c = verifyRetention(policy, NOW_MS, [managed(inventory({ 60: [], 300: [] }), { 60: 60 * DAY, 300: 365 * DAY })]).nodes[0]!.checks[0]!;
      expect(c.verdict).toBe('drift');
      expect(c.dangerous).toBe(false);
      expect(c.reason).toMatch(/60d is longer than the policy's 30d/);
    });

    it('a node that deletes a span the policy keeps forever is dangerous drift', () => {
      const c = verifyRetention(policy, NOW_MS, [managed(inventory({ 60: [], 300: [] }), { 60: 30 * DAY, 300: 365 * DAY, 1800: 90 * DAY })]).nodes[0]!.checks.find(
        (x) => x.span === 1800,
      )!;
      expect(c.verdict).toBe('drift');
      expect(c.dangerous).toBe(true);
    });

    it('is over_retained when configured as the policy but whole shards past the cut-off remain', () => {
      const c = verifyRetention(policy, NOW_MS, [managed(inventory({ 60: shards(DAY, 35 * DAY), 300: [] }), { 60: 30 * DAY, 300: 365 * DAY })]).nodes[0]!.checks[0]!;
      expect(c.verdict).toBe('over_retained');
      expect(c.shardsPastCutoff).toBeGreaterThanOrEqual(4);
    });

    it('without a reported retention it cannot rule out drift', () => {
      const c = verifyRetention(policy, NOW_MS, [managed(inventory({ 60: [], 300: [] }), null)]).nodes[0]!.checks[0]!;
      expect(c.verdict).toBe('cannot_verify');
      expect(c.reason).toMatch(/does not report its configured retention/);
    });
  });
});

describe('verifyRetention: types without rules', () => {
  it('leaves out a type the policy keeps forever on a sweep node, but checks it on a node-managed one', () => {
    const inv = inventory({ 60: [] }, { histogram: new Map([[60, { shards: [] }]]) });
    const policy = parseRules(['nnt:60=30d']);
    const sweep = verifyRetention(policy, NOW_MS, [sweepNode(inv)]).nodes[0]!.checks;
    expect(sweep.map((c) => c.type)).toEqual(['nnt']);
    const node = verifyRetention(policy, NOW_MS, [{ node: A, managedBy: 'node', inventory: inv, retention: { nnt: { 60: 30 * DAY }, histogram: { 60: DAY }, raw: null } }])
      .nodes[0]!.checks;
    const h = node.find((c) => c.type === 'histogram')!;
    expect(h.verdict).toBe('drift');
    expect(h.dangerous).toBe(true);
  });
});

describe('verifyRetention: raw data on a node-managed node', () => {
  it('does not compare a raw setting with a policy that gives raw data no age', () => {
    const inv = inventory({ 60: [] }, { raw: { shards: shards(7 * DAY, 20 * DAY) } });
    const p = parseRules(['nnt:60=30d']);
    const c = verifyRetention(p, NOW_MS, [
      { node: A, managedBy: 'node', inventory: inv, retention: { nnt: { 60: 30 * DAY }, histogram: {}, raw: 30 * DAY } },
    ]).nodes[0]!.checks.find((x) => x.span === 'raw')!;
    expect(c.verdict).toBe('compliant');
    expect(c.reason).toMatch(/not compared/);
  });

  it("compares the raw histograms' configured retention (histogram_raw) with a histogram:* policy", () => {
    const inv = inventory({ 60: [] }, { histogramRaw: { shards: shards(7 * DAY, 7 * DAY) }, histogram: new Map([[60, { shards: [] }]]) });
    const p = parseRules(['histogram:*=30d']);
    const raw = (histogramRaw: number | undefined) =>
      verifyRetention(p, NOW_MS, [
        { node: A, managedBy: 'node', inventory: inv, retention: { nnt: {}, histogram: { 60: 30 * DAY }, raw: null, ...(histogramRaw ? { histogramRaw } : {}) } },
      ]).nodes[0]!.checks.find((x) => x.type === 'histogram' && x.span === 'raw')!;
    expect(raw(30 * DAY).verdict).toBe('compliant');
    expect(raw(7 * DAY)).toMatchObject({ verdict: 'drift', dangerous: true });
    // A node that does not say keeps them forever, as far as verify can tell.
    expect(raw(undefined)).toMatchObject({ verdict: 'drift', dangerous: false });
  });
});
