import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { DataType, SweepRequest } from '../../src/protocol/index.js';
import {
  parsePolicyFile,
  parseRules,
  planFromJson,
  planRetention,
  rawReadable,
  planToJson,
  RetentionError,
  UnknownSpanError,
  UnsafeWildcardError,
  WILDCARD,
  type NodeSpans,
  type Policy,
  type PolicyRule,
  type RetentionPlan,
} from '../../src/retention/index.js';

const DAY = 86_400;
// 2026-11-22T04:32:58.250Z: the millis must not leak into any cut-off.
const NOW_MS = 1_795_321_978_250;
const NOW = 1_795_321_978;
const SPANS = [60, 300, 1800, 10800, 86400];
const A = 'http://a:8112';
const B = 'http://b:8112';
const C = 'http://c:8112';

const EXAMPLE = parsePolicyFile('nnt:\n  60: 30d\n  300: 1y\nhistogram:\n  60: 30d\ntext: 90d\n', 'policy.yaml');
const known = (node: string, nnt = SPANS, histogram = [60, 300]): NodeSpans => ({ node, nnt, histogram });

function thrown<T extends Error>(fn: () => unknown, type: new (...args: never[]) => T): T {
  try {
    fn();
  } catch (err) {
    if (err instanceof type) return err;
    throw err;
  }
  throw new Error(`expected ${type.name}`);
}

describe('planRetention: the issue example on a 3-node cluster', () => {
  const plan = planRetention(EXAMPLE, NOW_MS, [known(A), known(B), known(C)]);

  it('pins now once and makes one step per distinct cut-off, newest first', () => {
    expect(plan.now).toBe(NOW);
    expect(plan.nowMs).toBe(NOW_MS);
    expect(plan.steps.map((s) => [s.step, s.cutoff, s.age, s.types])).toEqual([
      [1, NOW - 30 * DAY, '30d', ['nnt', 'histogram']],
      [2, NOW - 90 * DAY, '90d', ['text']],
      [3, NOW - 365 * DAY, '1y', ['nnt']],
    ]);
    expect(plan.steps[0]!.rules.map((r) => `${r.type}:${r.span}`)).toEqual(['nnt:60', 'histogram:60']);
  });

  it('gives every node the exact request of every step, as sweep --dry-run shows it', () => {
    for (const n of plan.nodes) {
      expect(n.steps.map((s) => s.http)).toEqual([
        {
          method: 'DELETE',
          url: `${n.node}/sweep_delete`,
          headers: {
            'X-Service-Delete-Time': String(NOW - 30 * DAY),
            'X-Service-Delete-Data-Types': 'nnt,histogram',
            'X-Service-NNT-Delete-Rollups': '60',
            'X-Service-Histogram-Delete-Rollups': '60',
          },
        },
        { method: 'DELETE', url: `${n.node}/sweep_delete`, headers: { 'X-Service-Delete-Time': String(NOW - 90 * DAY), 'X-Service-Delete-Data-Types': 'text' } },
        {
          method: 'DELETE',
          url: `${n.node}/sweep_delete`,
          headers: { 'X-Service-Delete-Time': String(NOW - 365 * DAY), 'X-Service-Delete-Data-Types': 'nnt', 'X-Service-NNT-Delete-Rollups': '300' },
        },
      ]);
    }
  });

  it('uses the production prefix when asked', () => {
    const snowth = planRetention(EXAMPLE, NOW_MS, [known(A)], { headerPrefix: 'X-Snowth' });
    expect(Object.keys(snowth.nodes[0]!.steps[0]!.http!.headers)).toEqual([
      'X-Snowth-Delete-Time',
      'X-Snowth-Delete-Data-Types',
      'X-Snowth-NNT-Delete-Rollups',
      'X-Snowth-Histogram-Delete-Rollups',
    ]);
  });

  it('says what is kept forever, per type, and that the nnt raw records stay', () => {
    expect(plan.nodes[0]!.kept).toEqual([
      { type: 'nnt', all: false, spans: [1800, 10800, 86400], otherSpans: false, raw: true },
      { type: 'histogram', all: false, spans: [300], otherSpans: false, raw: null },
    ]);
    expect(plan.warnings).toEqual([
      `nnt raw records are kept forever on 3 node(s) (${A}, ${B}, ${C}): only a sweep of every nnt span deletes them, and until then a dispatch read fills old buckets of swept spans from them; add "*" to nnt to delete them at its age`,
    ]);
    expect(plan.nodes[0]!.spanSource).toEqual({ nnt: 'node', histogram: 'node' });
  });
});

describe('planRetention: merging and the wildcard', () => {
  it('merges rules of one age into one step, whatever their spelling', () => {
    const plan = planRetention(parseRules(['nnt:60=30d', 'histogram:60=720h', 'text=43200m']), NOW_MS, [known(A)]);
    expect(plan.steps).toHaveLength(1);
    expect(plan.steps[0]!.age).toBe('30d');
    expect(plan.nodes[0]!.steps[0]!.request).toEqual({ before: NOW - 30 * DAY, types: ['nnt', 'text', 'histogram'], nntRollups: [60], histogramRollups: [60] });
  });

  it('a lone "*" sends no rollups header: every span, even when the node does not say which it has', () => {
    const plan = planRetention(parseRules(['nnt:*=1y']), NOW_MS, [{ node: A }]);
    expect(plan.nodes[0]!.steps[0]!.http!.headers).toEqual({ 'X-Service-Delete-Time': String(NOW - 365 * DAY), 'X-Service-Delete-Data-Types': 'nnt' });
    expect(plan.nodes[0]!.kept).toEqual([
      { type: 'text', all: true, spans: [], otherSpans: false, raw: null },
      { type: 'histogram', all: true, spans: [], otherSpans: false, raw: null },
    ]);
  });

  it('"*" with the longest age: listed spans at their own cut-off, then every span at the "*" cut-off; safe without knowing the spans', () => {
    for (const nodes of [[known(A)], [{ node: A }]]) {
      const plan = planRetention(parseRules(['nnt:60=30d', 'nnt:300=90d', 'nnt:*=1y']), NOW_MS, nodes);
      expect(plan.nodes[0]!.steps.map((s) => s.request)).toEqual([
        { before: NOW - 30 * DAY, types: ['nnt'], nntRollups: [60] },
        { before: NOW - 90 * DAY, types: ['nnt'], nntRollups: [300] },
        { before: NOW - 365 * DAY, types: ['nnt'] },
      ]);
      // Every span has a rule and the last step takes the raw records with it.
      expect(plan.nodes[0]!.kept.filter((k) => k.type === 'nnt')).toEqual([]);
    }
  });

  it('nnt:60=30d with nnt:*=30d is one step of every nnt span (no step is redundant)', () => {
    const plan = planRetention(parseRules(['nnt:60=30d', 'nnt:*=30d']), NOW_MS, [known(A), { node: B }]);
    expect(plan.steps).toHaveLength(1);
    for (const n of plan.nodes) expect(n.steps[0]!.request).toEqual({ before: NOW - 30 * DAY, types: ['nnt'] });
  });

  it('a listed span that outlives "*": "*" is expanded to the node\'s other spans, and the longest age sends every span', () => {
    const plan = planRetention(parseRules(['nnt:300=1y', 'nnt:*=30d']), NOW_MS, [known(A), known(B, [60, 300, 3600])]);
    expect(plan.nodes.map((n) => n.steps.map((s) => s.request))).toEqual([
      [
        { before: NOW - 30 * DAY, types: ['nnt'], nntRollups: [60, 1800, 10800, 86400] },
        { before: NOW - 365 * DAY, types: ['nnt'] },
      ],
      [
        { before: NOW - 30 * DAY, types: ['nnt'], nntRollups: [60, 3600] },
        { before: NOW - 365 * DAY, types: ['nnt'] },
      ],
    ]);
  });

  it('refuses to guess such a "*" on a node whose spans are not known, naming the rules and the nodes', () => {
    const err = thrown(() => planRetention(parsePolicyFile('nnt:\n  300: 1y\n  "*": 30d\n', 'p.yaml'), NOW_MS, [known(A), { node: B }, { node: C }]), UnsafeWildcardError);
    expect(err.code).toBe('unsafe_wildcard');
    expect(err.type).toBe('nnt');
    expect(err.nodes).toEqual([B, C]);
    expect(err.message).toBe(
      `nnt:*=30d (p.yaml:3:3) cannot be sent to ${B}, ${C}: their nnt spans are not known, so "*" could only be sent as every span, which would also delete what nnt:300=1y (p.yaml:2:3) keeps longer`,
    );
    expect(err.hint).toContain('nnt_rollups in the profile');
  });

  it("a profile's declared spans stand in for nodes that do not report theirs", () => {
    const plan = planRetention(parseRules(['nnt:300=1y', 'nnt:*=30d']), NOW_MS, [{ node: A }, known(B, [60, 300])], { declared: { nnt: [300, 60, 1800] } });
    expect(plan.nodes.map((n) => [n.spanSource.nnt, n.steps[0]!.request!.nntRollups])).toEqual([
      ['profile', [60, 1800]],
      ['node', [60]], // the node's own report wins over the profile
    ]);
  });

  it('a "*" that matches nothing on a node leaves a note, and a step with nothing to send has no request', () => {
    const plan = planRetention(parseRules(['nnt:60=1y', 'nnt:300=1y', 'nnt:*=30d']), NOW_MS, [known(A, [60, 300]), known(B)]);
    expect(plan.nodes[0]!.steps[0]).toEqual({ step: 1, request: null, http: null, note: '"nnt:*" matches no span here: every nnt span of this node has its own rule' });
    expect(plan.nodes[1]!.steps[0]!.request).toEqual({ before: NOW - 30 * DAY, types: ['nnt'], nntRollups: [1800, 10800, 86400] });
    expect(plan.warnings).toContain(`nothing to send at ${A} step 1`);
  });
});

describe('planRetention: spans are checked before anything is sent', () => {
  it('refuses a span a node does not have, naming the span, the rule, the node and its spans', () => {
    const err = thrown(() => planRetention(parsePolicyFile('nnt:\n  60: 30d\n  120: 1y\n', 'p.yaml'), NOW_MS, [known(A), known(B, [60, 300])]), UnknownSpanError);
    expect(err.code).toBe('unknown_span');
    expect(err.problems.map((p) => [p.node, p.span])).toEqual([
      [A, 120],
      [B, 120],
    ]);
    expect(err.message).toBe(
      `nnt span 120 of nnt:120=1y (p.yaml:3:3) is not configured on any of the 2 nodes (their nnt spans: 60, 300, 1800, 10800, 86400 on ${A}; 60, 300 on ${B})`,
    );
  });

  it('names each distinct problem once, not once per node (issue 25)', () => {
    const D = 'http://d:8112';
    const policy = parsePolicyFile('nnt:\n  60: 7d\n  3600: 30d\n  "*": 2y\nhistogram:\n  120: 1y\n', 'retention.yaml');
    const all = thrown(() => planRetention(policy, NOW_MS, [known(A), known(B), known(C), known(D)]), UnknownSpanError);
    expect(all.problems).toHaveLength(8); // the data keeps every node's problem
    expect(all.message).toBe(
      'nnt span 3600 of nnt:3600=30d (retention.yaml:3:3) is not configured on any of the 4 nodes (their nnt spans: 60, 300, 1800, 10800, 86400); ' +
        'histogram span 120 of histogram:120=1y (retention.yaml:6:3) is not configured on any of the 4 nodes (their histogram spans: 60, 300)',
    );
    const some = thrown(() => planRetention(parseRules(['nnt:3600=30d']), NOW_MS, [known(A), known(B, [60, 3600]), known(C), known(D)]), UnknownSpanError);
    expect(some.message).toBe(`nnt span 3600 of --rule "nnt:3600=30d" is not configured on 3 of the 4 nodes (${A}, ${C}, ${D}) (their nnt spans: 60, 300, 1800, 10800, 86400)`);
  });

  it('checks against the profile when the node does not report, and says so', () => {
    const err = thrown(() => planRetention(parseRules(['histogram:60=30d']), NOW_MS, [{ node: A }], { declared: { histogram: [300] } }), UnknownSpanError);
    expect(err.message).toBe(`histogram span 60 of --rule "histogram:60=30d" is not configured on ${A} (its histogram spans per the profile: 300)`);
  });

  it('says when spans could not be checked at all', () => {
    const plan = planRetention(EXAMPLE, NOW_MS, [{ node: A }, known(B)]);
    expect(plan.nodes[0]!.spanSource).toEqual({ nnt: 'unchecked', histogram: 'unchecked' });
    expect(plan.nodes[0]!.kept[0]).toEqual({ type: 'nnt', all: false, spans: [], otherSpans: true, raw: null });
    expect(plan.warnings[0]).toBe(
      `nnt spans could not be checked on 1 node(s) (${A}): they do not report their spans and no profile declares nnt_rollups; a span a node lacks makes its DELETE fail at that step, and that node stops there`,
    );
  });

  it('a rule older than 1970 makes no step and says why', () => {
    const plan = planRetention(parseRules(['text=100y', 'nnt:60=1d']), NOW_MS, [known(A)]);
    expect(plan.steps.map((s) => s.age)).toEqual(['1d']);
    expect(plan.inert.map((r) => r.age)).toEqual(['100y']);
    expect(plan.warnings).toContain('--rule "text=100y" makes no step: its cut-off is before 1970, so nothing is that old yet');
  });

  it('plans the steps without nodes, and refuses a node listed twice or a bad clock', () => {
    expect(planRetention(EXAMPLE, NOW_MS, []).steps).toHaveLength(3);
    expect(() => planRetention(EXAMPLE, NOW_MS, [known(A), { node: A }])).toThrow(/listed twice/);
    expect(() => planRetention(EXAMPLE, 1.5, [])).toThrow(TypeError);
  });
});

// ---------------------------------------------------------------- the safety property

/** What a node holds after the plan's requests: per span, everything before the latest cut-off that reached it. */
function effectiveCutoffs(requests: readonly (SweepRequest | null)[], type: 'nnt' | 'histogram', actual: readonly number[]): { spans: Map<number, number>; everySpan: number } {
  const spans = new Map<number, number>(actual.map((s) => [s, 0]));
  let everySpan = 0;
  for (const r of requests) {
    if (!r || !r.types.includes(type)) continue;
    const list = type === 'nnt' ? r.nntRollups : r.histogramRollups;
    for (const s of actual) if (!list || list.includes(s)) spans.set(s, Math.max(spans.get(s)!, r.before));
    // The reference node drops the raw records only for a request of every span (spec B).
    if (!list || actual.every((s) => list.includes(s))) everySpan = Math.max(everySpan, r.before);
  }
  return { spans, everySpan };
}

/** What the policy says each span should lose: data before now - age, or nothing. */
function intended(policy: Policy, type: DataType, span: number): number {
  const rules = policy.rules.filter((r) => r.type === type);
  const rule = type === 'text' ? rules[0] : (rules.find((r) => r.span === span) ?? rules.find((r) => r.span === WILDCARD));
  return rule ? Math.max(0, NOW - rule.ageSeconds) : 0;
}

const ageArb = fc.constantFrom(DAY, 7 * DAY, 30 * DAY, 90 * DAY, 365 * DAY, 100 * 365 * DAY);
const spanPool = [60, 300, 1800, 10800, 86400];

const policyArb = fc
  .record({
    nnt: fc.dictionary(fc.constantFrom(...spanPool.map(String), '*'), ageArb, { maxKeys: 6 }),
    histogram: fc.dictionary(fc.constantFrom(...spanPool.map(String), '*'), ageArb, { maxKeys: 6 }),
    text: fc.option(ageArb, { nil: undefined }),
  })
  .filter((p) => Object.keys(p.nnt).length + Object.keys(p.histogram).length + (p.text ? 1 : 0) > 0)
  .map((p) => {
    const rules: string[] = [];
    for (const t of ['nnt', 'histogram'] as const) for (const [span, age] of Object.entries(p[t])) rules.push(`${t}:${span}=${age}s`);
    if (p.text) rules.push(`text=${p.text}s`);
    return parseRules(rules);
  });

/** A node's real spans: always a superset of what the policy lists (else the plan refuses). */
const nodeArb = (policy: Policy) =>
  fc
    .record({
      extra: fc.subarray(spanPool),
      reportsNnt: fc.boolean(),
      reportsHistogram: fc.boolean(),
    })
    .map(({ extra, reportsNnt, reportsHistogram }) => {
      const listed = (t: DataType) => policy.rules.filter((r): r is PolicyRule & { span: number } => r.type === t && typeof r.span === 'number').map((r) => r.span);
      const actual = {
        nnt: [...new Set([...listed('nnt'), ...extra])].sort((a, b) => a - b),
        histogram: [...new Set([...listed('histogram'), ...extra])].sort((a, b) => a - b),
      };
      return { actual, reportsNnt, reportsHistogram };
    });

describe('planRetention: the safety property', () => {
  it('on every span of every node, exactly the data the policy gives up is deleted: never more, never less', () => {
    fc.assert(
      fc.property(
        policyArb.chain((policy) => fc.tuple(fc.constant(policy), fc.array(nodeArb(policy), { minLength: 1, maxLength: 3 }))),
        ([policy, nodes]) => {
          const input: NodeSpans[] = nodes.map((n, i) => ({
            node: `http://n${i}:8112`,
            ...(n.reportsNnt ? { nnt: n.actual.nnt } : {}),
            ...(n.reportsHistogram ? { histogram: n.actual.histogram } : {}),
          }));
          let plan: RetentionPlan;
          try {
            plan = planRetention(policy, NOW_MS, input);
          } catch (err) {
            // The only refusal possible here: a "*" outlived by a listed span on a node whose spans are not known.
            expect(err).toBeInstanceOf(UnsafeWildcardError);
            const t = (err as UnsafeWildcardError).type;
            const star = policy.rules.find((r) => r.type === t && r.span === WILDCARD)!;
            expect(policy.rules.some((r) => r.type === t && r.span !== WILDCARD && r.ageSeconds > star.ageSeconds)).toBe(true);
            return;
          }
          // Steps strictly from the newest cut-off to the oldest.
          for (let i = 1; i < plan.steps.length; i++) expect(plan.steps[i]!.cutoff).toBeLessThan(plan.steps[i - 1]!.cutoff);
          nodes.forEach((n, i) => {
            const requests = plan.nodes[i]!.steps.map((s) => s.request);
            requests.forEach((r, si) => {
              if (r) {
                expect(r.before).toBe(plan.steps[si]!.cutoff);
                for (const t of r.types) expect(plan.steps[si]!.types).toContain(t);
              }
            });
            for (const t of ['nnt', 'histogram'] as const) {
              const got = effectiveCutoffs(requests, t, n.actual[t]);
              for (const s of n.actual[t]) expect([t, s, got.spans.get(s)]).toEqual([t, s, intended(policy, t, s)]);
              // With "*" every span has a rule, so the nnt raw records go no later than the oldest of
              // them (sooner when a node's spans all share a shorter age: the node then sees a request
              // of every span earlier).
              const rules = policy.rules.filter((r) => r.type === t);
              if (t === 'nnt' && rules.some((r) => r.span === WILDCARD)) {
                expect(got.everySpan).toBeGreaterThanOrEqual(Math.max(0, NOW - Math.max(...rules.map((r) => r.ageSeconds))));
              }
            }
            const textCut = Math.max(0, ...requests.filter((r) => r?.types.includes('text')).map((r) => r!.before));
            expect(textCut).toBe(intended(policy, 'text', 0));
          });
        },
      ),
      { numRuns: 500 },
    );
  });
});

describe('plan JSON', () => {
  const plan = planRetention(parseRules(['nnt:60=30d', 'nnt:*=1y', 'text=90d']), NOW_MS, [known(A), { node: B }], { headerPrefix: 'X-Snowth' });
  const json = planToJson(plan);

  it('has snake_case keys, spans as number lists and times as epoch seconds plus ISO', () => {
    expect(json.now).toBe(NOW);
    expect(json.now_iso).toBe('2026-11-22T04:32:58Z');
    expect(json.steps[0]).toEqual({
      step: 1,
      cutoff: NOW - 30 * DAY,
      cutoff_iso: '2026-10-23T04:32:58Z',
      age: '30d',
      age_seconds: 30 * DAY,
      rules: [{ type: 'nnt', span: 60, age: '30d', age_seconds: 30 * DAY, origin: '--rule "nnt:60=30d"' }],
      types: ['nnt'],
    });
    expect(json.nodes[0]!.steps[2]).toEqual({
      step: 3,
      types: ['nnt'],
      nnt_spans: null,
      nnt_all_spans: true,
      histogram_spans: null,
      histogram_all_spans: false,
      request: { method: 'DELETE', url: `${A}/sweep_delete`, headers: { 'X-Snowth-Delete-Time': String(NOW - 365 * DAY), 'X-Snowth-Delete-Data-Types': 'nnt' } },
      note: null,
    });
    expect(json.nodes[1]!.spans_from).toEqual({ nnt: 'unchecked', histogram: 'unchecked' });
    expect(json.policy).toEqual({ nnt: { 60: '30d', '*': '1y' }, text: '90d' });
  });

  it('reads back to the same plan, through text', () => {
    const back = planFromJson(JSON.parse(JSON.stringify(json)), 'run.json');
    expect(back).toEqual(plan);
  });

  it.each([
    ['a cut-off changed', (j: any) => (j.steps[0].cutoff -= 1), 'plan.steps[0].cutoff'],
    ['a header edited', (j: any) => (j.nodes[0].steps[0].request.headers['X-Snowth-Delete-Time'] = '1'), 'plan.nodes[0].steps[0].request does not match its step'],
    ['spans edited', (j: any) => (j.nodes[0].steps[0].nnt_spans = [60, 300]), 'plan.nodes[0].steps[0].request does not match its step'],
    ['a step dropped from a node', (j: any) => j.nodes[0].steps.pop(), `plan.nodes[0] (${A}) has 2 steps, the plan 3`],
    ['an unknown key', (j: any) => (j.extra = 1), 'Unrecognized key'],
    ['steps out of order', (j: any) => j.steps.reverse(), 'plan.steps[0].step is 3, expected 1'],
  ])('refuses a plan with %s', (_what, damage, message) => {
    const j = JSON.parse(JSON.stringify(json));
    damage(j);
    const err = thrown(() => planFromJson(j, 'run.json'), RetentionError);
    expect(err.code).toBe('invalid_run_state');
    expect(err.message).toContain('run.json: ');
    expect(err.message).toContain(message);
  });
});

describe('rawReadable: spans swept while the raw records stay (issue 25)', () => {
  it('lists each span a step sweeps before the every-span step, with that step', () => {
    const plan = planRetention(parseRules(['nnt:60=7d', 'nnt:300=30d', 'nnt:*=2y']), NOW_MS, [known(A)]);
    expect(rawReadable(plan.nodes[0]!, plan.steps)).toEqual([
      { span: 60, step: 1, age: '7d', until: { step: 3, age: '2y' } },
      { span: 300, step: 2, age: '30d', until: { step: 3, age: '2y' } },
    ]);
  });

  it('without an every-span step the raw records stay: until is null', () => {
    const plan = planRetention(parseRules(['nnt:60=7d']), NOW_MS, [known(A)]);
    expect(rawReadable(plan.nodes[0]!, plan.steps)).toEqual([{ span: 60, step: 1, age: '7d', until: null }]);
  });

  it('nothing when the first nnt step deletes every span', () => {
    const plan = planRetention(parseRules(['nnt:*=30d', 'nnt:60=30d']), NOW_MS, [known(A)]);
    expect(rawReadable(plan.nodes[0]!, plan.steps)).toEqual([]);
  });
});
