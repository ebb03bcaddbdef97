/**
 * From a policy to a plan: the pinned "now", one step per distinct cut-off (newest first), and
 * per node the exact DELETE each step sends. Pure: the clock and the nodes' spans are passed in,
 * nothing is sent, and everything that would make a step unsafe is refused here.
 *
 * What `*` means. A type's `*` rule keeps every span the policy does not list for its age. Let M
 * be the longest age among that type's rules. An every-span DELETE (no rollups header) at M's
 * cut-off removes only data every rule of the type has already given up, whatever spans the node
 * has, and it is the only request that also removes the raw records behind the rollups (spec B).
 * So the step at M sends the type with every span. When `*` itself has the longest age (the
 * usual case: `60: 30d, "*": 1y`), that is all `*` needs. When a listed span outlives `*`
 * (`300: 1y, "*": 30d`), `*` must also be sent at its own, newer cut-off, and there "every span"
 * would cut the longer-kept span short: it is expanded to the node's spans minus the listed ones,
 * which needs the node's spans (reported by the node, else declared by the profile). Without
 * them the plan is refused (UnsafeWildcardError) rather than guessed.
 */
import { buildSweepHeaders, DATA_TYPES, DEFAULT_HEADER_PREFIX, type DataType, type HeaderPrefix, type SweepRequest } from '../protocol/index.js';
import { UnknownSpanError, UnsafeWildcardError, type UnknownSpan } from './errors.js';
import { formatRule, rulesOf, SPAN_TYPES, WILDCARD, type Policy, type PolicyRule, type SpanType } from './policy.js';

/** What is known about one node's configured spans. A missing list means "not known". */
export interface NodeSpans {
  node: string;
  /** From the node itself (`GET /state`: `nnt.rollups`, `histogram.rollups`). */
  nnt?: readonly number[];
  histogram?: readonly number[];
}

export interface PlanOptions {
  headerPrefix?: HeaderPrefix;
  /** Spans a profile declares (`nnt_rollups`, `histogram_rollups`), for nodes that do not report theirs. */
  declared?: { nnt?: readonly number[]; histogram?: readonly number[] };
}

/** Where a node's span list came from; `unchecked` when neither the node nor a profile gave one. */
export type SpanSource = 'node' | 'profile' | 'unchecked';

export interface PlanStep {
  /** 1-based, in the order the steps run. */
  step: number;
  /** Epoch seconds: this step deletes data strictly before it. */
  cutoff: number;
  ageSeconds: number;
  /** The age as the policy wrote it (the first rule's spelling). */
  age: string;
  /** The rules with this age, merged into this one step. */
  rules: PolicyRule[];
  /** Types this step may delete (on a given node it can be fewer: see NodeStep). */
  types: DataType[];
}

/** The request `apply` sends a node at one step, exactly. */
export interface HttpRequestPlan {
  method: 'DELETE';
  url: string;
  headers: Record<string, string>;
}

export interface NodeStep {
  step: number;
  /** Null when this node has nothing to delete at this step (see `note`). */
  request: SweepRequest | null;
  http: HttpRequestPlan | null;
  note?: string;
}

/** What a node keeps forever of one type: nothing in the policy ever deletes it. */
export interface KeptForever {
  type: DataType;
  /** The policy has no rule for the type: all of it stays. */
  all: boolean;
  /** Known spans no rule covers. */
  spans: number[];
  /** The node's spans are not known, so spans other than the listed ones (if any) stay too. */
  otherSpans: boolean;
  /**
   * nnt only: the raw records behind the rollups stay, since no request of this node asks for
   * every span (true), one does (false), or that cannot be told without the node's spans (null).
   */
  raw: boolean | null;
}

export interface NodePlan {
  node: string;
  /** The spans each listed span was checked against, and their source. */
  spans: Record<SpanType, readonly number[] | null>;
  spanSource: Record<SpanType, SpanSource>;
  /** One entry per plan step, same order. */
  steps: NodeStep[];
  kept: KeptForever[];
}

export interface RetentionPlan {
  /** The pinned "now", epoch milliseconds as given, and the whole seconds cut-offs derive from. */
  nowMs: number;
  now: number;
  headerPrefix: HeaderPrefix;
  policy: Policy;
  steps: PlanStep[];
  nodes: NodePlan[];
  /** Rules whose cut-off falls before 1970: nothing can be that old, so they make no step. */
  inert: PolicyRule[];
  /** Things the operator should read before applying (spans not checked, raw data kept, ...). */
  warnings: string[];
}

/**
 * Plans a policy for `nodes` at `nowMs`. Throws UnknownSpanError when a rule names a span a
 * node (or the profile) does not have, and UnsafeWildcardError when a `*` would need spans that
 * are not known; both before anything could be sent.
 */
export function planRetention(policy: Policy, nowMs: number, nodes: readonly NodeSpans[], opts: PlanOptions = {}): RetentionPlan {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0) throw new TypeError(`planRetention: now must be epoch milliseconds, got ${nowMs}`);
  const seenNodes = new Set<string>();
  for (const n of nodes) {
    if (seenNodes.has(n.node)) throw new TypeError(`planRetention: node ${n.node} is listed twice`);
    seenNodes.add(n.node);
  }
  const now = Math.floor(nowMs / 1000);
  const headerPrefix = opts.headerPrefix ?? DEFAULT_HEADER_PREFIX;

  // Steps: one per distinct age with a cut-off after 1970, newest cut-off (shortest age) first.
  const inert = policy.rules.filter((r) => now - r.ageSeconds <= 0);
  const ages = [...new Set(policy.rules.filter((r) => now - r.ageSeconds > 0).map((r) => r.ageSeconds))].sort((a, b) => a - b);
  const steps: PlanStep[] = ages.map((ageSeconds, i) => {
    const rules = policy.rules.filter((r) => r.ageSeconds === ageSeconds);
    return {
      step: i + 1,
      cutoff: now - ageSeconds,
      ageSeconds,
      age: rules[0]!.age,
      rules,
      types: DATA_TYPES.filter((t) => rules.some((r) => r.type === t)),
    };
  });

  const shapes = Object.fromEntries(SPAN_TYPES.map((t) => [t, typeShape(rulesOf(policy, t))])) as Record<SpanType, TypeShape>;
  const unknown: UnknownSpan[] = [];
  const unsafe = new Map<SpanType, string[]>();
  const nodePlans = nodes.map((n) => planNode(n, steps, shapes, policy, opts, headerPrefix, unknown, unsafe));
  if (unknown.length) throw new UnknownSpanError(unknown, nodes.length);
  for (const [type, who] of unsafe) {
    const shape = shapes[type];
    throw new UnsafeWildcardError(type, describeRule(shape.wildcard!), shape.outliving.map(describeRule), who);
  }

  return { nowMs, now, headerPrefix, policy, steps, nodes: nodePlans, inert, warnings: planWarnings(policy, steps, nodePlans, inert, shapes) };
}

/** How one span type's rules combine, independent of any node. */
interface TypeShape {
  rules: PolicyRule[];
  wildcard: PolicyRule | undefined;
  listed: PolicyRule[];
  /** Longest age among the rules: with a wildcard, the step at this age sends every span. */
  maxAge: number;
  /** Listed rules kept longer than `*` (they force `*` to be expanded). */
  outliving: PolicyRule[];
}

function typeShape(rules: PolicyRule[]): TypeShape {
  const wildcard = rules.find((r) => r.span === WILDCARD);
  const listed = rules.filter((r) => r.span !== WILDCARD);
  const maxAge = Math.max(0, ...rules.map((r) => r.ageSeconds));
  const outliving = wildcard ? listed.filter((r) => r.ageSeconds > wildcard.ageSeconds) : [];
  return { rules, wildcard, listed, maxAge, outliving };
}

function planNode(
  n: NodeSpans,
  steps: readonly PlanStep[],
  shapes: Record<SpanType, TypeShape>,
  policy: Policy,
  opts: PlanOptions,
  headerPrefix: HeaderPrefix,
  unknown: UnknownSpan[],
  unsafe: Map<SpanType, string[]>,
): NodePlan {
  const spans = {} as Record<SpanType, readonly number[] | null>;
  const spanSource = {} as Record<SpanType, SpanSource>;
  for (const t of SPAN_TYPES) {
    const own = n[t];
    const declared = opts.declared?.[t];
    spans[t] = own ? [...own].sort((a, b) => a - b) : declared ? [...declared].sort((a, b) => a - b) : null;
    spanSource[t] = own ? 'node' : declared ? 'profile' : 'unchecked';
    const known = spans[t];
    if (!known) continue;
    for (const r of shapes[t].listed) {
      if (!known.includes(r.span as number)) {
        unknown.push({ node: n.node, type: t, span: r.span as number, configured: known, source: spanSource[t] as 'node' | 'profile', rule: describeRule(r) });
      }
    }
  }

  const nodeSteps: NodeStep[] = steps.map((step) => {
    const types: DataType[] = [];
    const req: Partial<Pick<SweepRequest, 'nntRollups' | 'histogramRollups'>> = {};
    const notes: string[] = [];
    for (const type of step.types) {
      if (type === 'text') {
        types.push('text');
        continue;
      }
      const shape = shapes[type];
      if (shape.wildcard && step.ageSeconds === shape.maxAge) {
        types.push(type); // every span: no rollups header
        continue;
      }
      const list = new Set(step.rules.filter((r) => r.type === type && r.span !== WILDCARD).map((r) => r.span as number));
      if (shape.wildcard && shape.wildcard.ageSeconds === step.ageSeconds) {
        const known = spans[type];
        if (!known) {
          unsafe.set(type, [...(unsafe.get(type) ?? []), n.node]);
        } else {
          const rest = known.filter((s) => !shape.listed.some((r) => r.span === s));
          if (rest.length === 0) notes.push(`"${type}:*" matches no span here: every ${type} span of this node has its own rule`);
          for (const s of rest) list.add(s);
        }
      }
      if (list.size === 0) continue;
      types.push(type);
      req[type === 'nnt' ? 'nntRollups' : 'histogramRollups'] = [...list].sort((a, b) => a - b);
    }
    if (types.length === 0) return { step: step.step, request: null, http: null, note: notes.join('; ') || 'nothing to delete on this node' };
    const request: SweepRequest = { before: step.cutoff, types: DATA_TYPES.filter((t) => types.includes(t)), ...req };
    return {
      step: step.step,
      request,
      http: { method: 'DELETE', url: `${n.node}/sweep_delete`, headers: buildSweepHeaders(request, headerPrefix) },
      ...(notes.length ? { note: notes.join('; ') } : {}),
    };
  });

  return { node: n.node, spans, spanSource, steps: nodeSteps, kept: keptForever(policy, shapes, spans, nodeSteps) };
}

function keptForever(policy: Policy, shapes: Record<SpanType, TypeShape>, spans: Record<SpanType, readonly number[] | null>, steps: readonly NodeStep[]): KeptForever[] {
  const out: KeptForever[] = [];
  for (const type of DATA_TYPES) {
    const raw = (v: boolean | null): boolean | null => (type === 'nnt' ? v : null);
    if (type === 'text') {
      if (rulesOf(policy, 'text').length === 0) out.push({ type, all: true, spans: [], otherSpans: false, raw: null });
      continue;
    }
    const shape = shapes[type];
    const known = spans[type];
    if (shape.rules.length === 0) {
      out.push({ type, all: true, spans: known ? [...known] : [], otherSpans: false, raw: raw(true) });
      continue;
    }
    // Does any request of this node delete every span of the type (and so the raw records)?
    const requests = steps.map((s) => s.request).filter((r): r is SweepRequest => r !== null && r.types.includes(type));
    const lists = requests.map((r) => (type === 'nnt' ? r.nntRollups : r.histogramRollups));
    const everySpan = lists.some((l) => l === undefined || (known !== null && known.every((s) => l.includes(s))));
    const rawKept = everySpan ? false : known === null ? null : true;
    if (shape.wildcard) {
      if (!everySpan) out.push({ type, all: false, spans: [], otherSpans: false, raw: raw(rawKept) });
      continue;
    }
    const uncovered = known ? known.filter((s) => !shape.listed.some((r) => r.span === s)) : [];
    if (uncovered.length || !known || rawKept !== false) out.push({ type, all: false, spans: uncovered, otherSpans: !known, raw: raw(rawKept) });
  }
  return out;
}

function planWarnings(policy: Policy, steps: readonly PlanStep[], nodes: readonly NodePlan[], inert: readonly PolicyRule[], shapes: Record<SpanType, TypeShape>): string[] {
  const w: string[] = [];
  for (const t of SPAN_TYPES) {
    if (shapes[t].listed.length === 0) continue;
    const unchecked = nodes.filter((n) => n.spanSource[t] === 'unchecked').map((n) => n.node);
    if (unchecked.length) {
      w.push(
        `${t} spans could not be checked on ${unchecked.length} node(s) (${listSome(unchecked)}): they do not report their spans and no profile declares ${t}_rollups; ` +
          'a span a node lacks makes its DELETE fail at that step, and that node stops there',
      );
    }
  }
  const rawKept = nodes.filter((n) => n.kept.some((k) => k.type === 'nnt' && !k.all && k.raw === true)).map((n) => n.node);
  if (rawKept.length) {
    w.push(
      `nnt raw records are kept forever on ${rawKept.length} node(s) (${listSome(rawKept)}): only a sweep of every nnt span deletes them, and until then ` +
        'a dispatch read fills old buckets of swept spans from them; add "*" to nnt to delete them at its age',
    );
  }
  // Raw-readable spans (only where a later step deletes the raw records: without one, the
  // raw-kept warning above says it). One warning per distinct text, naming its nodes.
  const readable = new Map<string, string[]>();
  for (const n of nodes) {
    const list = rawReadable(n, steps).filter((r) => r.until !== null);
    if (list.length) readable.set(describeRawReadable(list), [...(readable.get(describeRawReadable(list)) ?? []), n.node]);
  }
  for (const [text, who] of readable) {
    const where = who.length === nodes.length ? '' : ` on ${who.length} node(s) (${listSome(who)})`;
    w.push(`${text}${where}: a plain read (engine dispatch, the default) fills those buckets from the raw records; --engine nnt reads only what the rollups keep`);
  }
  for (const r of shortRules(policy)) w.push(shortRuleWarning(r));
  for (const r of inert) w.push(`${describeRule(r)} makes no step: its cut-off is before 1970, so nothing is that old yet`);
  const noop = nodes.flatMap((n) => n.steps.filter((s) => s.request === null).map((s) => `${n.node} step ${s.step}`));
  if (noop.length) w.push(`nothing to send at ${listSome(noop)}`);
  return w;
}

/** An nnt span a node's step sweeps while the raw records behind it stay (see rawReadable). */
export interface RawReadable {
  span: number;
  /** The step that sweeps the span, and its age: the span's own rollup keeps nothing older. */
  step: number;
  age: string;
  /** The first later step that deletes every nnt span, and so the raw records; null: none does. */
  until: { step: number; age: string } | null;
}

/**
 * The nnt spans a node's steps sweep while the raw records stay. A sweep of some spans removes
 * only their rollups (of the smallest span, it only hides them: the reference node keeps that
 * span inside the raw records); only a sweep of every span deletes the raw records. Until then,
 * a `dispatch` read (the default) fills the swept buckets back from the raw records: with
 * `nnt:60=7d` and `"*": 2y`, every 1-minute bucket older than 7 days stays readable for 2 years.
 */
export function rawReadable(node: NodePlan, steps: readonly PlanStep[]): RawReadable[] {
  const everySpan = (r: SweepRequest | null): boolean => {
    if (!r?.types.includes('nnt')) return false;
    const known = node.spans.nnt;
    return r.nntRollups === undefined || (known !== null && known.every((s) => r.nntRollups!.includes(s)));
  };
  const out: RawReadable[] = [];
  for (const [i, ns] of node.steps.entries()) {
    if (everySpan(ns.request)) break;
    for (const span of ns.request?.types.includes('nnt') ? (ns.request.nntRollups ?? []) : []) {
      if (out.some((r) => r.span === span)) continue;
      const later = node.steps.slice(i + 1).find((x) => everySpan(x.request));
      const until = later ? { step: later.step, age: steps[later.step - 1]!.age } : null;
      out.push({ span, step: ns.step, age: steps[ns.step - 1]!.age, until });
    }
  }
  return out;
}

/** `nnt span 60 (older than 7d) stays readable from the raw records until step 3 (2y) deletes them`. */
export function describeRawReadable(list: readonly RawReadable[]): string {
  if (!list.length) return '';
  const spans = list.map((r) => `${r.span} (older than ${r.age})`).join(', ');
  const until = list[0]!.until;
  const when = until ? `until step ${until.step} (${until.age}) deletes them` : 'for as long as they are kept (no step deletes every nnt span)';
  return `nnt span${list.length > 1 ? 's' : ''} ${spans} ${list.length > 1 ? 'stay' : 'stays'} readable from the raw records ${when}`;
}

/**
 * Rules kept less than this are almost surely a slip (`nnt:*=1s` deletes nearly everything of its
 * type, `text=30m` every text value but the last half hour): `plan` and `apply` warn about them, and
 * `apply` asks to type the rule on a terminal or needs `--allow-short-age` off one. An hour: the
 * shortest retention anyone keeps on purpose is a day or more, and a typo of a unit (`30m` for
 * `30d`, `1s` for `1y`) lands below it.
 */
export const SHORT_AGE_SECONDS = 3600;

/** The policy's rules kept less than SHORT_AGE_SECONDS, shortest first. */
export function shortRules(policy: Policy): PolicyRule[] {
  return policy.rules.filter((r) => r.ageSeconds < SHORT_AGE_SECONDS).sort((a, b) => a.ageSeconds - b.ageSeconds);
}

/** The warning for one rule under SHORT_AGE_SECONDS: what it deletes, in words. */
export function shortRuleWarning(r: PolicyRule): string {
  const what = r.span === null ? 'text' : r.span === WILDCARD ? `every ${r.type} span` : `${r.type} span ${r.span}`;
  return `${describeRule(r)} keeps only the last ${r.age} of ${what}, deleting nearly all of it (an age under 1h is almost always a mistake, e.g. 1s for 1y)`;
}

/** `--rule "nnt:60=30d"` or `nnt:60=30d (policy.yaml:3:3)`: a rule as the user can find it. */
export function describeRule(r: PolicyRule): string {
  return r.origin.startsWith('--rule') ? r.origin : `${formatRule(r)} (${r.origin})`;
}

function listSome(items: readonly string[]): string {
  return items.length > 3 ? `${items.slice(0, 3).join(', ')} and ${items.length - 3} more` : items.join(', ');
}
