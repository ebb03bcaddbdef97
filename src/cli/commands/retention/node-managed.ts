/**
 * Nodes whose retention is their own config (no sweep API: the store from 0.19.23 on, or a
 * reference node with --no-sweep-api). `plan` says which nodes are which; `apply` sends them
 * nothing (state `node_managed`) and verifies them against the policy instead, and the run's exit
 * code reflects their verdicts.
 */
import { fanOut } from '../../../client/fan-out.js';
import { gatherRetentionFacts, managedByOf } from '../../../client/inventory.js';
import type { NodeClient } from '../../../client/node-client.js';
import type { ManagedBy } from '../../../protocol/index.js';
import { checkToJson, rulesOf, verifyOutcome, verifyRetention, type Policy, type VerifyReport } from '../../../retention/index.js';
import { EXIT, type ExitCode } from '../../exit-codes.js';

/** Who removes each node's old data; null when the probe got no answer (the node is then left to the sweep path, which reports it). */
export async function managedByOfNodes(clients: readonly NodeClient[], o: { concurrency: number; signal: AbortSignal }): Promise<Map<string, ManagedBy | null>> {
  const out = await fanOut(clients, (c) => managedByOf(c, { signal: o.signal }), { concurrency: o.concurrency });
  return new Map(out.map((x) => [x.node, x.ok ? x.value : null]));
}

/** Verifies the node-managed nodes (read-only). */
export async function verifyNodeManaged(policy: Policy, clients: readonly NodeClient[], o: { concurrency: number; signal: AbortSignal; now: number }): Promise<VerifyReport> {
  const histogramPeriods = rulesOf(policy, 'histogram').flatMap((r) => (typeof r.span === 'number' ? [r.span] : []));
  const facts = await gatherRetentionFacts(clients, { histogramPeriods, concurrency: o.concurrency, call: { signal: o.signal } });
  return verifyRetention(policy, o.now, facts);
}

/** The run's exit with the node-managed nodes' verdicts: anything but compliant makes an exit 0 a 3. */
export function withNodeManaged(code: ExitCode, report: VerifyReport | null): ExitCode {
  if (!report || report.nodes.length === 0 || code !== EXIT.ok) return code;
  return verifyOutcome(report) === 'compliant' ? code : EXIT.partial;
}

/** `node_managed` in apply's JSON: each node's state and checks. */
export function nodeManagedJson(report: VerifyReport | null): unknown[] {
  return (report?.nodes ?? []).map((n) => ({ node: n.node, state: 'node_managed', managed_by: 'node', checks: n.checks.map(checkToJson) }));
}

/** One stderr line per node-managed node: its verdicts. */
export function nodeManagedLines(report: VerifyReport): string[] {
  return report.nodes.map((n) => {
    const bad = n.checks.filter((c) => c.verdict !== 'compliant');
    if (bad.length === 0) return `${n.node}: node_managed (nothing sent): compliant on all ${n.checks.length} check(s)`;
    // Each distinct verdict and reason once, with the spans it holds for (not once per span).
    const groups = new Map<string, string[]>();
    for (const c of bad) {
      const key = `${c.verdict}${c.dangerous ? ' (DANGEROUS)' : ''}: ${c.reason}`;
      groups.set(key, [...(groups.get(key) ?? []), `${c.type}${c.span !== null && c.span !== undefined ? ` ${c.span}` : ''}`]);
    }
    return `${n.node}: node_managed (nothing sent): ${[...groups].map(([why, what]) => `${joinSpans(what)} ${why}`).join('; ')}`;
  });
}

/** `nnt 60, 300, histogram 60`: consecutive entries of one type share its name. */
function joinSpans(items: readonly string[]): string {
  let type = '';
  return items
    .map((item) => {
      const [t, span] = item.split(' ');
      if (t === type && span !== undefined) return span;
      type = t!;
      return item;
    })
    .join(', ');
}
