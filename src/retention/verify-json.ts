/**
 * A verify report as JSON: `retention verify -o json` prints it, the library returns it. Stable
 * snake_case keys; times as epoch seconds plus an ISO string; `span` a number, `"raw"` or null
 * (text); `excess_seconds` and `shards_past_cutoff` only on over_retained checks.
 */
import type { DataType, ManagedBy } from '../protocol/index.js';
import { isoSeconds } from './plan-json.js';
import type { CheckSpan, RetentionCheck, RetentionVerdict, VerifyReport } from './verify.js';

export interface RetentionCheckJson {
  type: DataType;
  span: CheckSpan;
  cutoff: number | null;
  cutoff_iso: string | null;
  policy_age_seconds: number | null;
  oldest: number | null;
  oldest_iso: string | null;
  effective_retention_seconds: number | null;
  shards: number | null;
  verdict: RetentionVerdict;
  reason: string;
  managed_by: ManagedBy | null;
  excess_seconds?: number;
  shards_past_cutoff?: number;
  configured_seconds?: number | null;
  dangerous?: boolean;
}

export interface VerifyReportJson {
  now: number;
  now_iso: string;
  counts: Record<RetentionVerdict, number>;
  nodes: Array<{ node: string; managed_by: ManagedBy | null; checks: RetentionCheckJson[] }>;
}

export function checkToJson(c: RetentionCheck): RetentionCheckJson {
  return {
    type: c.type,
    span: c.span,
    cutoff: c.cutoff,
    cutoff_iso: c.cutoff === null ? null : isoSeconds(c.cutoff),
    policy_age_seconds: c.policySeconds,
    oldest: c.oldest,
    oldest_iso: c.oldest === null ? null : isoSeconds(c.oldest),
    effective_retention_seconds: c.effectiveSeconds,
    shards: c.shards,
    verdict: c.verdict,
    reason: c.reason,
    managed_by: c.managedBy,
    ...(c.excessSeconds !== undefined ? { excess_seconds: c.excessSeconds } : {}),
    ...(c.shardsPastCutoff !== undefined ? { shards_past_cutoff: c.shardsPastCutoff } : {}),
    ...(c.configuredSeconds !== undefined ? { configured_seconds: c.configuredSeconds } : {}),
    ...(c.dangerous !== undefined ? { dangerous: c.dangerous } : {}),
  };
}

export function verifyReportToJson(r: VerifyReport): VerifyReportJson {
  return {
    now: r.now,
    now_iso: isoSeconds(r.now),
    counts: { ...r.counts },
    nodes: r.nodes.map((n) => ({ node: n.node, managed_by: n.managedBy, checks: n.checks.map(checkToJson) })),
  };
}
