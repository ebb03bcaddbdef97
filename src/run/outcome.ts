/**
 * What a finished destructive run means: its exit code (0 all done, 3 some, 1 none, 130
 * interrupted; the same numbers as cli/exit-codes.ts) and the nodes left to catch up. A ring node
 * a run did not reach (left out with --allow-partial) is never finished: it is counted as left, it
 * makes the run partial, and the catch-up names it.
 */
import type { ClusterSweepResult } from '../client/sweep.js';
import type { CoverageOutcome } from '../client/sweep-checks.js';

export type RunExitCode = 0 | 1 | 3 | 130;

/** The ring nodes a run went ahead without (--allow-partial): not swept. */
export type NotSwept = Array<{ id: string; url: string }>;

/** The ring nodes --allow-partial left out, from the coverage check (none when it was not checked or not partial). */
export function notSweptOf(coverage: CoverageOutcome | undefined): NotSwept {
  return coverage?.allowed ? coverage.missing.map((m) => ({ ...m })) : [];
}

/**
 * A run's exit code from how many of its nodes reached their good end: all (0), none (1), some
 * (3); 130 when interrupted. Ring nodes left out count as not done.
 */
export function runExitCode(x: { good: number; total: number; notSwept: number; interrupted: boolean }): RunExitCode {
  if (x.interrupted) return 130;
  const total = x.total + x.notSwept;
  if (x.good === total) return 0;
  return x.good === 0 ? 1 : 3;
}

/** The exit code of a sweep: `done` is good (`started` too, when not waiting). */
export function sweepExitCode(result: Pick<ClusterSweepResult, 'nodes' | 'interrupted'>, wait: boolean, notSwept = 0): RunExitCode {
  const good = result.nodes.filter((n) => n.state === 'done' || (!wait && n.state === 'started')).length;
  const code = runExitCode({ good, total: result.nodes.length, notSwept, interrupted: result.interrupted });
  // `late_data`: the sweep ran to the end on a node data may have come back to: partial, not failed.
  return code === 1 && result.nodes.some((n) => n.state === 'late_data') ? 3 : code;
}

/** The nodes a catch-up repeats the sweep on: every node not `done`, then the ring nodes not swept. */
export function notDone(result: Pick<ClusterSweepResult, 'nodes'>, notSwept: NotSwept = []): string[] {
  return [...result.nodes.filter((n) => n.state !== 'done').map((n) => n.node), ...notSwept.map((m) => m.url)];
}

/** Ring nodes a run left out that an earlier run already swept for this very request (a catch-up's), with that run. */
export type SweptEarlier = Array<{ id: string; url: string; run: string }>;

/**
 * `4 of 5 ring nodes` (with what was left out), or '' when the run reached the whole ring or saw
 * none. Ring nodes an earlier run swept count among the reached, named with that run.
 */
export function ringShare(reached: number, notSwept: NotSwept, earlier: SweptEarlier = []): string {
  if (notSwept.length === 0 && earlier.length === 0) return '';
  const parts = [`${reached + earlier.length} of ${reached + earlier.length + notSwept.length} ring nodes`];
  if (earlier.length) parts.push(`swept by an earlier run: ${earlier.map((m) => `${m.id} (${m.url}, run ${m.run})`).join(', ')}`);
  if (notSwept.length) parts.push(`not swept: ${notSwept.map((m) => `${m.id} (${m.url})`).join(', ')}`);
  return parts.join('; ');
}
