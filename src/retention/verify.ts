/**
 * Verifying a policy against what each node holds: per node, type and span, the oldest data its
 * shard inventories show, the policy's cut-off, and a verdict whose words scripts match on
 * (`compliant`, `over_retained`, `drift`, `cannot_verify`). Pure: the inventories, each node's
 * configured retention and "now" are passed in; nothing is sent.
 *
 * What a shard proves. An inventory lists shards that hold data, as time ranges; it does not say
 * where inside a shard the oldest record lies. So only a shard lying entirely before the cut-off
 * (its end at or before it) proves over-retention. The shard straddling the cut-off is expected on
 * both kinds of node: a node-managed store removes shards whole, once they lie entirely past their
 * retention, and a sweep removes the records inside it before the cut-off but leaves the shard.
 * `oldest` is the start of the oldest shard held: a bound, not a record's time.
 *
 * Raw data. Raw numeric records (and raw histograms) have no span. A sweep deletes them only when
 * a type is swept with every span (plan.ts: a `*` rule at the type's longest age), so the policy's
 * raw cut-off is that age when the type has a `*` rule, and "kept forever" otherwise. They are
 * checked under span `"raw"`.
 */
import type { DataType, ManagedBy, NodeInventory, NodeRetentionConfig, ShardList } from '../protocol/index.js';
import { formatAge } from './age.js';
import { WILDCARD, rulesOf, type Policy, type SpanType } from './policy.js';

export type RetentionVerdict = 'compliant' | 'over_retained' | 'drift' | 'cannot_verify';
export const VERDICTS: readonly RetentionVerdict[] = ['compliant', 'over_retained', 'drift', 'cannot_verify'];

export interface VerifyNodeInput {
  node: string;
  /** Null when it could not be told (then every check of the node is cannot_verify, with `problem`). */
  managedBy: ManagedBy | null;
  inventory: NodeInventory | null;
  /** Null when the node does not report its configured retention. */
  retention: NodeRetentionConfig | null;
  /** Why the node could not be looked at (unreachable, ...): every check is cannot_verify. */
  problem?: string;
}

export type CheckSpan = number | 'raw' | null;

export interface RetentionCheck {
  type: DataType;
  /** A span in seconds, `raw` for the records behind the rollups, null for text. */
  span: CheckSpan;
  /** Epoch seconds: the policy keeps nothing older; null when the policy keeps this forever. */
  cutoff: number | null;
  /** The policy's age for this span in seconds, null when kept forever. */
  policySeconds: number | null;
  /** Start of the oldest shard held (epoch seconds); null when none is held or nothing is known. */
  oldest: number | null;
  /** Age of the oldest data held (now - oldest): the span's effective retention. */
  effectiveSeconds: number | null;
  /** Shards held, null when not known. */
  shards: number | null;
  verdict: RetentionVerdict;
  reason: string;
  managedBy: ManagedBy | null;
  /** over_retained: how much older than the cut-off the oldest shard starts, and how many shards lie entirely before it. */
  excessSeconds?: number;
  shardsPastCutoff?: number;
  /** drift: the node's configured retention (null: kept forever); `dangerous` when shorter than the policy's. */
  configuredSeconds?: number | null;
  dangerous?: boolean;
}

export interface NodeVerification {
  node: string;
  managedBy: ManagedBy | null;
  checks: RetentionCheck[];
}

export interface VerifyReport {
  now: number;
  nodes: NodeVerification[];
  counts: Record<RetentionVerdict, number>;
}

/** What the policy says for one (type, span): its age in seconds, or null (kept forever), and which rule. */
interface PolicyAge {
  seconds: number | null;
  rule: string;
}

function policyAgeFor(policy: Policy, type: DataType, span: CheckSpan): PolicyAge {
  const rules = rulesOf(policy, type);
  if (type === 'text') {
    const r = rules[0];
    return r ? { seconds: r.ageSeconds, rule: `text=${r.age}` } : { seconds: null, rule: 'no text rule' };
  }
  const wildcard = rules.find((r) => r.span === WILDCARD);
  if (span === 'raw') {
    if (!wildcard) return { seconds: null, rule: `no ${type}:* rule, so no sweep removes raw ${type} data` };
    const longest = rules.reduce((m, r) => (r.ageSeconds > m.ageSeconds ? r : m));
    return { seconds: longest.ageSeconds, rule: `${type}'s longest age ${longest.age} (the every-span sweep)` };
  }
  const listed = rules.find((r) => r.span === span);
  if (listed) return { seconds: listed.ageSeconds, rule: `${type}:${span}=${listed.age}` };
  if (wildcard) return { seconds: wildcard.ageSeconds, rule: `${type}:*=${wildcard.age}` };
  return { seconds: null, rule: `no rule for ${type} span ${span}` };
}

/** The spans to check for a type: those the policy names and those the node holds, ascending. */
function spansToCheck(policy: Policy, type: SpanType, inv: NodeInventory | null, cfg: NodeRetentionConfig | null): number[] {
  const set = new Set<number>();
  for (const r of rulesOf(policy, type)) if (typeof r.span === 'number') set.add(r.span);
  if (inv) {
    if (type === 'nnt' && 'byPeriod' in inv.nnt) for (const p of inv.nnt.byPeriod.keys()) set.add(p);
    if (type === 'histogram') for (const p of inv.histogram.keys()) set.add(p);
  }
  if (cfg) for (const k of Object.keys(cfg[type])) set.add(Number(k));
  return [...set].filter((s) => Number.isSafeInteger(s) && s > 0).sort((a, b) => a - b);
}

function listFor(inv: NodeInventory, type: DataType, span: CheckSpan): ShardList {
  if (type === 'text') return { problem: 'the store lists no text shards (no inventory endpoint covers text)' };
  if (span === 'raw') return type === 'nnt' ? inv.raw : inv.histogramRaw;
  if (type === 'nnt') {
    if ('problem' in inv.nnt) return inv.nnt;
    return { shards: inv.nnt.byPeriod.get(span as number) ?? [] };
  }
  const list = inv.histogram.get(span as number);
  return list ?? { problem: `histogram span ${span} was not asked for (GET /histogram/${span}/list_shards)` };
}

function configuredFor(cfg: NodeRetentionConfig, type: DataType, span: CheckSpan): number | null {
  if (type === 'text') return null;
  if (span === 'raw') return type === 'nnt' ? cfg.raw : (cfg.histogramRaw ?? null);
  return cfg[type][String(span)] ?? null;
}

const age = (s: number | null): string => (s === null ? 'forever' : formatAge(s));
const iso = (s: number): string => new Date(s * 1000).toISOString().replace('.000Z', 'Z');
const what = (type: DataType, span: CheckSpan): string => (span === null ? type : span === 'raw' ? `raw ${type}` : `${type} span ${span}`);

/** Verifies one (type, span) of one node. */
export function checkSpan(input: VerifyNodeInput, policy: Policy, type: DataType, span: CheckSpan, now: number): RetentionCheck {
  const want = policyAgeFor(policy, type, span);
  const cutoff = want.seconds === null ? null : now - want.seconds;
  const base = { type, span, cutoff, policySeconds: want.seconds, managedBy: input.managedBy };
  const unknown = (reason: string): RetentionCheck => ({ ...base, oldest: null, effectiveSeconds: null, shards: null, verdict: 'cannot_verify', reason });
  if (input.problem !== undefined) return unknown(input.problem);
  if (!input.inventory) return unknown('the node gave no shard inventories');
  if (input.managedBy === null) return unknown('whether the node sweeps or manages its own retention could not be told');
  const list = listFor(input.inventory, type, span);
  if ('problem' in list) return unknown(list.problem);

  const shards = list.shards;
  const oldest = shards.length ? Math.min(...shards.map((s) => s.start)) : null;
  const past = cutoff === null ? [] : shards.filter((s) => s.end <= cutoff);
  const straddling = cutoff === null ? undefined : shards.find((s) => s.start < cutoff && s.end > cutoff);
  const held = { oldest, effectiveSeconds: oldest === null ? null : Math.max(0, now - oldest), shards: shards.length };
  const overNote = past.length ? `; ${past.length} shard(s) lie entirely before the cut-off ${iso(cutoff!)}` : '';
  const straddleNote = straddling
    ? input.managedBy === 'node'
      ? `; the shard ${iso(straddling.start)}..${iso(straddling.end)} straddles the cut-off, as expected: the node removes shards whole`
      : `; the shard ${iso(straddling.start)}..${iso(straddling.end)} straddles the cut-off: a sweep removes the records before it but keeps the shard, which an inventory cannot show`
    : '';

  if (input.managedBy === 'node') {
    if (!input.retention) {
      if (past.length) return overRetained(base, held, past.length, cutoff!, `the node does not report its configured retention${overNote}`);
      return {
        ...base,
        ...held,
        verdict: 'cannot_verify',
        reason: `holds nothing past the cut-off, but the node does not report its configured retention, so drift cannot be ruled out${straddleNote}`,
      };
    }
    const configured = configuredFor(input.retention, type, span);
    // Raw data has an age in the policy only through a `*` rule: without one there is nothing to compare a raw setting with.
    const comparable = !(span === 'raw' && want.seconds === null);
    if (comparable && configured !== want.seconds) {
      const dangerous = want.seconds === null || (configured !== null && configured < want.seconds);
      const reason = dangerous
        ? `configured retention ${age(configured)} is shorter than the policy's ${age(want.seconds)} (${want.rule}): the node deletes data the policy keeps (dangerous)`
        : `configured retention ${age(configured)} is longer than the policy's ${age(want.seconds)} (${want.rule}): the node keeps data the policy gives up`;
      return { ...base, ...held, verdict: 'drift', reason: reason + overNote, configuredSeconds: configured, dangerous };
    }
    if (past.length) return overRetained(base, held, past.length, cutoff!, `configured as the policy (${age(configured)}), yet the node has not removed them${overNote}`);
  } else if (past.length) {
    return overRetained(base, held, past.length, cutoff!, `holds ${what(type, span)} data older than the policy keeps (${want.rule})${overNote}`);
  }
  const reason =
    cutoff === null
      ? `${want.rule}: the policy keeps it forever`
      : oldest === null
        ? `holds no ${what(type, span)} shards`
        : `holds nothing older than the cut-off (${want.rule})${straddleNote}`;
  const managedNote =
    input.managedBy !== 'node'
      ? ''
      : span === 'raw' && want.seconds === null
        ? `; its configured raw retention (${age(configuredFor(input.retention!, type, span))}) is not compared: the policy gives raw data no age without a ${type}:* rule`
        : "; configured retention equals the policy's";
  return { ...base, ...held, verdict: 'compliant', reason: reason + managedNote };
}

function overRetained(
  base: Pick<RetentionCheck, 'type' | 'span' | 'cutoff' | 'policySeconds' | 'managedBy'>,
  held: Pick<RetentionCheck, 'oldest' | 'effectiveSeconds' | 'shards'>,
  count: number,
  cutoff: number,
  reason: string,
): RetentionCheck {
  return { ...base, ...held, verdict: 'over_retained', reason, excessSeconds: cutoff - held.oldest!, shardsPastCutoff: count };
}

/** Whether a type's raw data is worth a check on this node: the policy decides it, or the node lists some. */
function rawChecked(policy: Policy, type: SpanType, inv: NodeInventory | null): boolean {
  if (rulesOf(policy, type).some((r) => r.span === WILDCARD)) return true;
  const list = inv ? (type === 'nnt' ? inv.raw : inv.histogramRaw) : null;
  return list !== null && 'shards' in list && list.shards.length > 0;
}

/** Verifies `policy` on every node at `nowMs`: per node, the checks in the order nnt spans, raw, histogram spans, raw, text. */
export function verifyRetention(policy: Policy, nowMs: number, nodes: readonly VerifyNodeInput[]): VerifyReport {
  if (!Number.isSafeInteger(nowMs) || nowMs < 0) throw new TypeError(`verifyRetention: now must be epoch milliseconds, got ${nowMs}`);
  const now = Math.floor(nowMs / 1000);
  const counts: Record<RetentionVerdict, number> = { compliant: 0, over_retained: 0, drift: 0, cannot_verify: 0 };
  const out = nodes.map((n): NodeVerification => {
    const checks: RetentionCheck[] = [];
    for (const type of ['nnt', 'histogram'] as const) {
      // A type the policy has no rule for is kept forever: only a node that deletes by itself can go against that.
      if (rulesOf(policy, type).length === 0 && n.managedBy !== 'node') continue;
      for (const span of spansToCheck(policy, type, n.inventory, n.retention)) checks.push(checkSpan(n, policy, type, span, now));
      if (rawChecked(policy, type, n.inventory)) checks.push(checkSpan(n, policy, type, 'raw', now));
    }
    if (rulesOf(policy, 'text').length) checks.push(checkSpan(n, policy, 'text', null, now));
    for (const c of checks) counts[c.verdict]++;
    return { node: n.node, managedBy: n.managedBy, checks };
  });
  return { now, nodes: out, counts };
}

/**
 * The exit a report means: 0 every check compliant; 3 any over-retention or drift, or some checks
 * could not be verified; 1 nothing could be verified at all.
 */
export function verifyOutcome(report: VerifyReport): 'compliant' | 'not_compliant' | 'partial' | 'unverified' {
  const c = report.counts;
  const total = c.compliant + c.over_retained + c.drift + c.cannot_verify;
  if (c.over_retained + c.drift > 0) return 'not_compliant';
  if (total === 0 || c.cannot_verify === total) return 'unverified';
  if (c.cannot_verify > 0) return 'partial';
  return 'compliant';
}
