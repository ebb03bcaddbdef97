/**
 * How `retention verify` looks: a table (one row per node, type and span), CSV rows, or the JSON
 * document (the library's report plus the policy, node source, coverage and outcome). Pure.
 */
import { formatAge, isoSeconds, policyToObject, verifyReportToJson, type CheckSpan, type Policy, type RetentionCheck, type VerifyReport } from '../../../retention/index.js';
import type { CoverageOutcome } from '../../../client/sweep-checks.js';
import { printable } from '../../render/printable.js';
import { renderCsv, renderTable } from '../../render/table.js';
import { coverageJson } from './render.js';

export interface VerifyExtra {
  policy: Policy;
  nodeSource: string;
  coverage: CoverageOutcome | null;
  outcome: string;
}

const spanText = (s: CheckSpan): string => (s === null ? '-' : String(s));
const when = (s: number | null): string => (s === null ? '-' : isoSeconds(s));
/** An age to read at a glance: exact when it is a whole unit, else days (or hours) with one decimal. */
function roughAge(s: number): string {
  const exact = formatAge(s);
  if (!exact.endsWith('s') || s < 3600) return exact;
  return s >= 86_400 ? `${(s / 86_400).toFixed(1)}d` : `${(s / 3600).toFixed(1)}h`;
}
const ageText = (s: number | null | undefined): string => (s === null || s === undefined ? '-' : roughAge(s));

function rows(report: VerifyReport): Array<[string, RetentionCheck]> {
  return report.nodes.flatMap((n) => n.checks.map((c): [string, RetentionCheck] => [n.node, c]));
}

function excessText(c: RetentionCheck): string {
  if (c.verdict === 'over_retained') return `${roughAge(c.excessSeconds!)} older, ${c.shardsPastCutoff} shard(s)`;
  if (c.verdict === 'drift') return `configured ${c.configuredSeconds === null ? 'forever' : formatAge(c.configuredSeconds!)}${c.dangerous ? ' (DANGEROUS)' : ''}`;
  return '';
}

export function verifyText(report: VerifyReport, colour: boolean, width: number | undefined): string {
  const headers = ['NODE', 'MANAGED', 'TYPE', 'SPAN', 'CUT-OFF', 'OLDEST', 'EFFECTIVE', 'VERDICT', 'EXCESS', 'REASON'];
  const body = rows(report).map(([node, c]) => [
    printable(node),
    c.managedBy ?? '?',
    c.type,
    spanText(c.span),
    when(c.cutoff),
    when(c.oldest),
    ageText(c.effectiveSeconds),
    c.verdict,
    excessText(c),
    printable(c.reason),
  ]);
  return renderTable(headers, body, {
    colour,
    width,
    paint: (cell, col, _row, p) => (col !== 7 ? cell : cell.startsWith('compliant') ? p.green(cell) : cell.startsWith('cannot') ? p.yellow(cell) : p.red(cell)),
  });
}

export const VERIFY_CSV_HEADERS = [
  'node',
  'managed_by',
  'type',
  'span',
  'cutoff',
  'oldest',
  'effective_retention_seconds',
  'shards',
  'verdict',
  'excess_seconds',
  'shards_past_cutoff',
  'configured_seconds',
  'reason',
];

export function verifyCsv(report: VerifyReport, terminal: boolean): string {
  const body = rows(report).map(([node, c]) => [
    node,
    c.managedBy,
    c.type,
    c.span,
    c.cutoff,
    c.oldest,
    c.effectiveSeconds,
    c.shards,
    c.verdict,
    c.excessSeconds,
    c.shardsPastCutoff,
    c.configuredSeconds,
    c.reason,
  ]);
  return renderCsv(VERIFY_CSV_HEADERS, body, { terminal });
}

export function verifyJson(report: VerifyReport, x: VerifyExtra): unknown {
  return { ...verifyReportToJson(report), outcome: x.outcome, policy: policyToObject(x.policy), node_source: x.nodeSource, coverage: coverageJson(x.coverage) };
}
