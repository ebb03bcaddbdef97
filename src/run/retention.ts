/**
 * `retention apply` as a destructive run: applyRetention (retention/apply.ts: preflight, confirm,
 * every node's steps) inside the run core's guard (the target lock, a refusal journaled as
 * `run.refused`), then what the run means: the exit code, and the ring nodes --allow-partial left
 * out, which are never finished (exit 3 at best, left in history, named by their own catch-up).
 */
import type { NodeClient } from '../client/node-client.js';
import type { ClusterCheckReport } from '../client/sweep-checks.js';
import { applyRetention, type ApplyRetentionOptions, type RetentionResult } from '../retention/apply.js';
import type { RetentionPlan } from '../retention/plan.js';
import { formatRule } from '../retention/policy.js';
import type { RunOutcome } from '../retention/run-state.js';
import { shellQuote } from './catch-up.js';
import { notSweptOf, type NotSwept, type RunExitCode } from './outcome.js';
import { guardRun, type RunIdentity, type RunRecordHooks } from './refusal.js';

export interface RetentionRunOptions extends ApplyRetentionOptions, RunRecordHooks {
  /** Names the run in a refusal record (its id, who, where the nodes came from, the policy). */
  identity: () => Omit<RunIdentity, 'command'>;
  /** The identity/coverage/span report the plan was made with (its problems refuse the run). */
  report?: ClusterCheckReport;
  /** Take the target lock in this folder (the state dir's `locks/`). */
  lockDir?: string;
  onLockTakeOver?: (message: string) => void;
}

export interface RetentionRun extends RetentionResult {
  exitCode: RunExitCode;
  /** Ring nodes not in the list (--allow-partial): not swept, counted as left. */
  notSwept: NotSwept;
}

/** The exit code of a retention outcome: 0 every node finished, 3 some steps done, 1 none, 130 interrupted; ring nodes left out make a complete run partial. */
export function retentionExitCode(outcome: RunOutcome, notSwept = 0): RunExitCode {
  switch (outcome) {
    case 'complete':
      return notSwept ? 3 : 0;
    case 'partial':
      return 3;
    case 'interrupted':
      return 130;
    default:
      return 1;
  }
}

/** Applies `plan` on `clients` under the run core's guard (see the module comment). */
export async function runRetention(clients: readonly NodeClient[], plan: RetentionPlan, opts: RetentionRunOptions): Promise<RetentionRun> {
  const { identity, report, lockDir, onLockTakeOver, journal, onRefused, ...apply } = opts;
  const checks = [...(report ? [() => report.problems] : []), ...(apply.checks ?? [])];
  const result = await guardRun(
    () => ({ command: 'retention apply', ...identity() }),
    { journal, onRefused, lockDir, onTakeOver: onLockTakeOver, report: () => report },
    () => applyRetention(clients, plan, { ...apply, checks }),
  );
  const notSwept = notSweptOf(report?.coverage);
  return { ...result, exitCode: retentionExitCode(result.outcome, notSwept.length), notSwept };
}

/**
 * The command that applies the policy on ring nodes a run left out (a resume would not: they are
 * not in its run file): the policy's rules, those nodes, and `flags` (profile, TLS) to reach them.
 */
export function notSweptCatchUp(plan: RetentionPlan, notSwept: NotSwept, flags: readonly string[]): string | null {
  if (notSwept.length === 0) return null;
  const args = ['tsnode', 'retention', 'apply', ...plan.policy.rules.flatMap((r) => ['--rule', formatRule(r)])];
  if (plan.headerPrefix !== 'X-Service') args.push('--header-prefix', plan.headerPrefix);
  args.push('--nodes', notSwept.map((m) => m.url).join(','), '--allow-partial', ...flags);
  return args.map(shellQuote).join(' ');
}
