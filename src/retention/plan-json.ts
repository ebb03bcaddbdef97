/**
 * The plan as JSON: `retention plan --output json` prints it and a saved run (run-state.ts) embeds
 * it. Stable keys in snake_case, spans as lists of numbers, times as epoch seconds plus an ISO
 * string. `planFromJson` reads it back and refuses anything inconsistent, so a resumed run sends
 * exactly the requests that were planned, with the same pinned cut-offs.
 */
import { z } from 'zod';
import { buildSweepHeaders, DATA_TYPES, formatIssues, HEADER_PREFIXES, type DataType, type SweepRequest } from '../protocol/index.js';
import { RetentionError } from './errors.js';
import { policyToObject, sortRules, WILDCARD, type Policy, type PolicyRule, type SpanType } from './policy.js';
import type { HttpRequestPlan, KeptForever, NodePlan, NodeStep, PlanStep, RetentionPlan, SpanSource } from './plan.js';

/** `2026-08-24T00:00:00Z`: ISO UTC of epoch seconds, with milliseconds only when there are some. */
export function isoSeconds(seconds: number): string {
  const iso = new Date(Math.round(seconds * 1000)).toISOString();
  return iso.endsWith('.000Z') ? iso.replace('.000Z', 'Z') : iso;
}

export interface RuleJson {
  type: DataType;
  span: number | '*' | null;
  age: string;
  age_seconds: number;
  origin: string;
}

export interface StepJson {
  step: number;
  cutoff: number;
  cutoff_iso: string;
  age: string;
  age_seconds: number;
  rules: RuleJson[];
  types: DataType[];
}

export interface NodeStepJson {
  step: number;
  /** Types this node's DELETE names; empty when it sends nothing at this step. */
  types: DataType[];
  /** The spans sent for nnt; null when nnt is not swept or swept with every span (then nnt_all_spans). */
  nnt_spans: number[] | null;
  nnt_all_spans: boolean;
  histogram_spans: number[] | null;
  histogram_all_spans: boolean;
  /** The exact request, or null when nothing is sent at this step. */
  request: HttpRequestPlan | null;
  note: string | null;
}

export interface KeptJson {
  type: DataType;
  all: boolean;
  spans: number[];
  other_spans: boolean;
  raw: boolean | null;
}

export interface NodePlanJson {
  node: string;
  spans: Record<SpanType, number[] | null>;
  spans_from: Record<SpanType, SpanSource>;
  steps: NodeStepJson[];
  kept_forever: KeptJson[];
}

export interface PlanJson {
  now: number;
  now_iso: string;
  now_ms: number;
  header_prefix: string;
  policy_source: string;
  policy: Record<string, string | Record<string, string>>;
  steps: StepJson[];
  nodes: NodePlanJson[];
  inert_rules: RuleJson[];
  warnings: string[];
}

function ruleJson(r: PolicyRule): RuleJson {
  return { type: r.type, span: r.span, age: r.age, age_seconds: r.ageSeconds, origin: r.origin };
}

export function planToJson(plan: RetentionPlan): PlanJson {
  return {
    now: plan.now,
    now_iso: isoSeconds(plan.now),
    now_ms: plan.nowMs,
    header_prefix: plan.headerPrefix,
    policy_source: plan.policy.source,
    policy: policyToObject(plan.policy),
    steps: plan.steps.map((s) => ({
      step: s.step,
      cutoff: s.cutoff,
      cutoff_iso: isoSeconds(s.cutoff),
      age: s.age,
      age_seconds: s.ageSeconds,
      rules: s.rules.map(ruleJson),
      types: [...s.types],
    })),
    nodes: plan.nodes.map((n) => ({
      node: n.node,
      spans: { nnt: n.spans.nnt ? [...n.spans.nnt] : null, histogram: n.spans.histogram ? [...n.spans.histogram] : null },
      spans_from: { ...n.spanSource },
      steps: n.steps.map(nodeStepJson),
      kept_forever: n.kept.map((k) => ({ type: k.type, all: k.all, spans: [...k.spans], other_spans: k.otherSpans, raw: k.raw })),
    })),
    inert_rules: plan.inert.map(ruleJson),
    warnings: [...plan.warnings],
  };
}

function nodeStepJson(s: NodeStep): NodeStepJson {
  const r = s.request;
  const spans = (type: SpanType, list: number[] | undefined): { spans: number[] | null; all: boolean } =>
    !r || !r.types.includes(type) ? { spans: null, all: false } : list ? { spans: [...list], all: false } : { spans: null, all: true };
  const nnt = spans('nnt', r?.nntRollups);
  const hist = spans('histogram', r?.histogramRollups);
  return {
    step: s.step,
    types: r ? [...r.types] : [],
    nnt_spans: nnt.spans,
    nnt_all_spans: nnt.all,
    histogram_spans: hist.spans,
    histogram_all_spans: hist.all,
    request: s.http ? { method: 'DELETE', url: s.http.url, headers: { ...s.http.headers } } : null,
    note: s.note ?? null,
  };
}

// ---------------------------------------------------------------- reading it back

const dataType = z.enum(DATA_TYPES);
const spanList = z.array(z.number().int().positive());
const ruleSchema = z.strictObject({
  type: dataType,
  span: z.union([z.number().int().positive(), z.literal(WILDCARD), z.null()]),
  age: z.string().min(1),
  age_seconds: z.number().int().positive(),
  origin: z.string(),
});
const requestSchema = z.strictObject({ method: z.literal('DELETE'), url: z.string().min(1), headers: z.record(z.string(), z.string()) });
const planSchema = z.strictObject({
  now: z.number().int().nonnegative(),
  now_iso: z.string(),
  now_ms: z.number().int().nonnegative(),
  header_prefix: z.enum(HEADER_PREFIXES),
  policy_source: z.string(),
  policy: z.record(z.string(), z.union([z.string(), z.record(z.string(), z.string())])),
  steps: z.array(
    z.strictObject({
      step: z.number().int().positive(),
      cutoff: z.number().int().positive(),
      cutoff_iso: z.string(),
      age: z.string(),
      age_seconds: z.number().int().positive(),
      rules: z.array(ruleSchema).min(1),
      types: z.array(dataType).min(1),
    }),
  ),
  nodes: z.array(
    z.strictObject({
      node: z.string().min(1),
      spans: z.strictObject({ nnt: spanList.nullable(), histogram: spanList.nullable() }),
      spans_from: z.strictObject({ nnt: z.enum(['node', 'profile', 'unchecked']), histogram: z.enum(['node', 'profile', 'unchecked']) }),
      steps: z.array(
        z.strictObject({
          step: z.number().int().positive(),
          types: z.array(dataType),
          nnt_spans: spanList.nullable(),
          nnt_all_spans: z.boolean(),
          histogram_spans: spanList.nullable(),
          histogram_all_spans: z.boolean(),
          request: requestSchema.nullable(),
          note: z.string().nullable(),
        }),
      ),
      kept_forever: z.array(z.strictObject({ type: dataType, all: z.boolean(), spans: spanList, other_spans: z.boolean(), raw: z.boolean().nullable() })),
    }),
  ),
  inert_rules: z.array(ruleSchema),
  warnings: z.array(z.string()),
});

function ruleFrom(r: z.infer<typeof ruleSchema>): PolicyRule {
  return { type: r.type, span: r.span, age: r.age, ageSeconds: r.age_seconds, origin: r.origin };
}

/**
 * Reads a plan back from its JSON (an object already parsed). Throws RetentionError
 * (`invalid_run_state`) naming `where` and the first inconsistency.
 */
export function planFromJson(value: unknown, where: string): RetentionPlan {
  const parsed = planSchema.safeParse(value);
  if (!parsed.success) throw bad(where, formatIssues(parsed.error.issues, 'plan'));
  const p = parsed.data;
  if (Math.floor(p.now_ms / 1000) !== p.now) throw bad(where, `plan.now ${p.now} does not match plan.now_ms ${p.now_ms}`);
  const steps: PlanStep[] = p.steps.map((s, i) => {
    if (s.step !== i + 1) throw bad(where, `plan.steps[${i}].step is ${s.step}, expected ${i + 1}`);
    if (s.cutoff !== p.now - s.age_seconds) throw bad(where, `plan.steps[${i}].cutoff ${s.cutoff} is not now - age (${p.now} - ${s.age_seconds})`);
    if (i > 0 && s.cutoff >= p.steps[i - 1]!.cutoff) throw bad(where, `plan.steps[${i}] is not older than the step before it`);
    return { step: s.step, cutoff: s.cutoff, ageSeconds: s.age_seconds, age: s.age, rules: s.rules.map(ruleFrom), types: [...s.types] };
  });
  const rules = steps.flatMap((s) => s.rules);
  const inert = p.inert_rules.map(ruleFrom);
  const policy: Policy = { rules: sortRules([...rules, ...inert]), source: p.policy_source };
  const nodes: NodePlan[] = p.nodes.map((n, ni) => {
    if (n.steps.length !== steps.length) throw bad(where, `plan.nodes[${ni}] (${n.node}) has ${n.steps.length} steps, the plan ${steps.length}`);
    const nodeSteps: NodeStep[] = n.steps.map((s, si) => {
      const path = `plan.nodes[${ni}].steps[${si}]`;
      if (s.step !== si + 1) throw bad(where, `${path}.step is ${s.step}, expected ${si + 1}`);
      if (s.types.length === 0) {
        if (s.request !== null) throw bad(where, `${path} sends a request with no types`);
        return { step: s.step, request: null, http: null, ...(s.note !== null ? { note: s.note } : {}) };
      }
      const req: SweepRequest = { before: steps[si]!.cutoff, types: DATA_TYPES.filter((t) => s.types.includes(t)) };
      if (s.nnt_spans) req.nntRollups = [...s.nnt_spans];
      if (s.histogram_spans) req.histogramRollups = [...s.histogram_spans];
      const http: HttpRequestPlan = { method: 'DELETE', url: `${n.node}/sweep_delete`, headers: buildSweepHeaders(req, p.header_prefix) };
      // The stored request must be exactly what the plan's own data gives: a hand-edited or
      // damaged file is refused rather than sent.
      if (!s.request || s.request.url !== http.url || !sameHeaders(s.request.headers, http.headers)) {
        throw bad(where, `${path}.request does not match its step (cut-off ${steps[si]!.cutoff}, types ${s.types.join(',')})`);
      }
      return { step: s.step, request: req, http, ...(s.note !== null ? { note: s.note } : {}) };
    });
    const kept: KeptForever[] = n.kept_forever.map((k) => ({ type: k.type, all: k.all, spans: [...k.spans], otherSpans: k.other_spans, raw: k.raw }));
    return {
      node: n.node,
      spans: { nnt: n.spans.nnt, histogram: n.spans.histogram },
      spanSource: { nnt: n.spans_from.nnt, histogram: n.spans_from.histogram },
      steps: nodeSteps,
      kept,
    };
  });
  const names = new Set(nodes.map((n) => n.node));
  if (names.size !== nodes.length) throw bad(where, 'plan.nodes lists a node twice');
  return { nowMs: p.now_ms, now: p.now, headerPrefix: p.header_prefix, policy, steps, nodes, inert, warnings: [...p.warnings] };
}

function sameHeaders(a: Record<string, string>, b: Record<string, string>): boolean {
  const ka = Object.keys(a).sort();
  const kb = Object.keys(b).sort();
  return ka.length === kb.length && ka.every((k, i) => k === kb[i] && a[k] === b[k]);
}

function bad(where: string, problem: string): RetentionError {
  return new RetentionError('invalid_run_state', `${where}: ${problem}`, 'the saved run is damaged; start a fresh run (a new plan covers everything the old one would)');
}
